"""Snippets: the passage of a document that best shows why it matched."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memtrove.text import words

__all__ = ["make_snippet"]

_SUFFIXES = ("ations", "ation", "ings", "ing", "ions", "ion", "ies", "ied", "es", "ed", "ly", "s")


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) - len(suffix) >= 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _line_score(line: str, stems: set[str], literal: Sequence[str]) -> int:
    found = {stem for stem in (_stem(word) for word in words(line)) if stem in stems}
    lowered = line.lower()
    return len(found) * 2 + sum(1 for text in literal if text in lowered)


def make_snippet(body: str, terms: Sequence[str], max_chars: int = 240) -> tuple[str, int]:
    """The best-matching passage of ``body`` (at most ``max_chars``) and its 1-based line."""
    stems = {_stem(term) for term in terms if " " not in term}
    # CJK terms arrive as space-separated characters; match them as raw substrings.
    literal = [term.replace(" ", "") for term in terms if " " in term]
    lines = body.splitlines()
    best_index, best_score = -1, 0
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        score = _line_score(line, stems, literal)
        if score > best_score:
            best_index, best_score = index, score
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
