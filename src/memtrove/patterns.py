"""Regular expressions compiled when first used.

Compiling an expression costs ~0.05-2 ms (a large character range or a long alternation
costs the most), and a short command (a search, a hook) imports modules whose expressions
serve paths it never takes. A :class:`LazyPattern` answers like the compiled pattern and
compiles on the first call. Only ``re`` is imported here, so any module may use it.
"""

from __future__ import annotations

import re
import sys

TYPE_CHECKING = False  # typing is not imported: the lean command line starts here
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

__all__ = ["LazyPattern"]


class LazyPattern:
    """``re.compile(regex, flags)``, compiled at the first match, search or substitution."""

    __slots__ = ("_compiled", "flags", "regex")

    def __init__(self, regex: str, flags: int = 0) -> None:
        self.regex = regex
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.regex, self.flags)
        return self._compiled

    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.search(text, pos, endpos)

    def match(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.match(text, pos, endpos)

    def fullmatch(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.fullmatch(text, pos, endpos)

    def findall(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self.compiled.findall(text, pos, endpos)

    def finditer(
        self, text: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text, pos, endpos)

    def sub(
        self, replacement: str | Callable[[re.Match[str]], str], text: str, count: int = 0
    ) -> str:
        return self.compiled.sub(replacement, text, count=count)
