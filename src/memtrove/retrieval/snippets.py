"""Snippets: the passage of a document that best shows why it matched."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["Highlighter", "make_snippet"]

_SUFFIXES = ("ations", "ation", "ings", "ing", "ions", "ion", "ies", "ied", "es", "ed", "ly", "s")


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) - len(suffix) >= 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


_SCAN_LIMIT = 200_000


class Highlighter:
    """A query's terms, compiled once per search and applied to every hit.

    A stem matches at the start of a word, so ``token`` finds ``tokens``; CJK terms (which
    arrive as space-separated characters) match anywhere, as raw text.
    """

    def __init__(self, terms: Sequence[str]) -> None:
        stems = {_stem(term) for term in terms if term and " " not in term}
        self._literal = {term.replace(" ", "").lower() for term in terms if " " in term}
        alternatives = [r"\b" + re.escape(stem) for stem in sorted(stems, key=len, reverse=True)]
        alternatives += [re.escape(text) for text in sorted(self._literal) if text]
        self._pattern = re.compile("|".join(alternatives), re.IGNORECASE) if alternatives else None

    def line_scores(self, text: str) -> dict[int, int]:
        """0-based line index -> its distinct stems (x2) plus CJK hits, for matching lines."""
        if self._pattern is None:
            return {}
        found: dict[int, set[str]] = {}
        index = position = 0
        for match in self._pattern.finditer(text, 0, _SCAN_LIMIT):
            index += text.count("\n", position, match.start())  # matches come in order
            position = match.start()
            found.setdefault(index, set()).add(match.group(0).lower())
        return {
            index: sum(1 if hit in self._literal else 2 for hit in hits)
            for index, hits in found.items()
        }

    def best_line(self, text: str) -> int:
        """0-based index of the line with the most distinct stems (x2) plus CJK hits; -1."""
        best_index, best_score = -1, 0
        for index, score in sorted(self.line_scores(text).items()):
            if score > best_score:
                best_index, best_score = index, score
        return best_index


def make_snippet(
    body: str, terms: Sequence[str] | Highlighter, max_chars: int = 240
) -> tuple[str, int]:
    """The best-matching passage of ``body`` (at most ``max_chars``) and its 1-based line."""
    highlighter = terms if isinstance(terms, Highlighter) else Highlighter(terms)
    text = "\n".join(body.splitlines())
    lines = text.split("\n")
    best_index = highlighter.best_line(text)
    if best_index < 0:
        best_index = next((i for i, line in enumerate(lines) if line.strip()), 0)
    window: list[str] = []
    length = 0
    for line in lines[best_index:]:
        stripped = " ".join(line.split())
        if not stripped:
            if length >= max_chars // 3:
                break
            continue
        window.append(stripped)
        length += len(stripped) + 1
        if length >= max_chars:
            break
    text = " ".join(window)
    if len(text) > max_chars:
        cut = text.rfind(" ", 0, max_chars - 1)
        text = text[: cut if cut > max_chars // 2 else max_chars - 1].rstrip() + "…"
    return re.sub(r"\s+", " ", text).strip(), best_index + 1
