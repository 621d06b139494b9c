"""The optional fastembed backends: lazy import and a clear hint when the extra is missing.

Nothing here downloads a model; fastembed is not installed in the development environment,
and ``sys.modules`` hides it in case it is.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from memtrove.errors import ModelUnavailableError
from memtrove.models.fastembed_backend import (
    INSTALL_HINT,
    FastEmbedEmbedder,
    FastEmbedReranker,
)


@pytest.fixture
def no_fastembed(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("fastembed", "fastembed.rerank", "fastembed.rerank.cross_encoder"):
        monkeypatch.setitem(sys.modules, name, None)  # None makes `import` raise ImportError


@pytest.mark.usefixtures("no_fastembed")
def test_embedder_without_fastembed_says_how_to_install() -> None:
    with pytest.raises(ModelUnavailableError) as caught:
        FastEmbedEmbedder("BAAI/bge-small-en-v1.5")
    assert str(caught.value) == INSTALL_HINT
    assert INSTALL_HINT == "fastembed is not installed: pip install 'memtrove[fastembed]'"


@pytest.mark.usefixtures("no_fastembed")
def test_reranker_without_fastembed_says_how_to_install() -> None:
    with pytest.raises(ModelUnavailableError, match=r"pip install 'memtrove\[fastembed\]'"):
        FastEmbedReranker()


def test_importing_the_module_does_not_import_fastembed() -> None:
    code = (
        "import sys, memtrove.models.fastembed_backend\n"
        "assert 'fastembed' not in sys.modules, 'fastembed imported eagerly'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
