"""Snippets: the passage of a document that best shows why it matched."""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from memtrove.text import is_cjk

__all__ = ["make_snippet"]

_SUFFIXES = ("ations", "ation", "ings", "ing", "ions", "ion", "ies", "ied", "es", "ed", "ly", "s")


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) - len(suffix) >= 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


_SCAN_LIMIT = 200_000


def _best_line(lines: list[str], stems: set[str], literal: Sequence[str]) -> int:
    """Index of the line with the most distinct query stems (x2) plus CJK literal hits.

    One regex pass over the text: a stem matches at the start of a word, so ``token``
    finds ``tokens``; CJK literals match anywhere.
    """
    alternatives = [r"\b" + re.escape(stem) for stem in sorted(stems, key=len, reverse=True)]
    alternatives += [re.escape(text) for text in literal if text]
    if not alternatives:
        return -1
    pattern = re.compile("|".join(alternatives), re.IGNORECASE)
    starts: list[int] = []
    offset = 0
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    text = "\n".join(lines)[:_SCAN_LIMIT]
    found: dict[int, set[str]] = {}
    for match in pattern.finditer(text):
        index = bisect.bisect_right(starts, match.start()) - 1
        found.setdefault(index, set()).add(match.group(0).lower())
    best_index, best_score = -1, 0
    for index in sorted(found):
        hits = found[index]
        score = sum(1 if any(is_cjk(ch) for ch in hit) else 2 for hit in hits)
        if score > best_score:
            best_index, best_score = index, score
    return best_index


def make_snippet(body: str, terms: Sequence[str], max_chars: int = 240) -> tuple[str, int]:
    """The best-matching passage of ``body`` (at most ``max_chars``) and its 1-based line."""
    stems = {_stem(term) for term in terms if term and " " not in term}
    # CJK terms arrive as space-separated characters; match them as raw substrings.
    literal = [term.replace(" ", "") for term in terms if " " in term]
    lines = body.splitlines()
    best_index = _best_line(lines, stems, literal)
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
