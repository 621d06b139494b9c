"""The Porter stemmer (snowball's ``porter``: the algorithm of FTS5's porter tokenizer), loaded
on its own.

``import snowballstemmer`` first imports all of its 30-odd languages, about 20 ms of a
process that needs only English; a CLI search pays that on every run. :func:`porter_stemmer`
loads the package's ``porter_stemmer`` module (and the two it imports) under a private
package name instead, from the same files, so the stems are those of
``snowballstemmer.stemmer("porter")`` (a test compares them). PyStemmer (a dependency: the
same algorithm in C, about 15x faster, 1 ms to import) is used when it is installed; when
neither it nor the files are where they should be, ``snowballstemmer.stemmer("porter")``.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from typing import Any

__all__ = ["porter_stemmer"]

_PACKAGE = "memtrove_porter_stemmer"  # where snowballstemmer's porter modules are loaded
_lock = threading.Lock()
_stemmer_class: Any = None


def porter_stemmer() -> Any:
    """A new Porter stemmer (``stemWord``, ``stemWords``); not safe to share across threads."""
    global _stemmer_class
    with _lock:
        if _stemmer_class is None:
            _stemmer_class = _porter_class()
    return _stemmer_class()


def _porter_class() -> Any:
    try:
        if importlib.util.find_spec("Stemmer") is not None:
            import Stemmer  # PyStemmer: the same algorithm, in C

            return lambda: Stemmer.Stemmer("porter")
        spec = importlib.util.find_spec("snowballstemmer")
        if spec is not None and spec.submodule_search_locations:
            package = types.ModuleType(_PACKAGE)
            package.__path__ = list(spec.submodule_search_locations)
            sys.modules.setdefault(_PACKAGE, package)
            return importlib.import_module(f"{_PACKAGE}.porter_stemmer").PorterStemmer
    except (ImportError, AttributeError):
        pass
    import snowballstemmer

    return lambda: snowballstemmer.stemmer("porter")
