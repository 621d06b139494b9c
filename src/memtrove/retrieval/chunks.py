"""Chunk selection: the part of a long document that a reranker should read.

A cross-encoder sees a few thousand characters, so a long document is cut into overlapping
windows (4000 characters, 600 shared with the next, cut at a paragraph or line break when
one is near) and the window holding the most distinct query terms wins. Terms of the
caller's ``intent`` hint count half as much as query terms. Words are compared as Porter
stems, lowercased, stopwords ignored, so "tokens" in the query finds "token" in the text;
CJK text counts each character as a term.
"""

from __future__ import annotations

import threading
from functools import lru_cache

from memtrove.retrieval.stemming import porter_stemmer
from memtrove.text import STOPWORDS, segment_cjk, words

__all__ = [
    "CHUNK_OVERLAP",
    "CHUNK_SIZE",
    "INTENT_TERM_WEIGHT",
    "QUERY_TERM_WEIGHT",
    "select_chunk",
    "split_windows",
    "term_set",
    "window_spans",
]

CHUNK_SIZE = 4000
CHUNK_OVERLAP = 600
QUERY_TERM_WEIGHT = 1.0
INTENT_TERM_WEIGHT = 0.5

# A stemmer object keeps its working state on itself, so each thread gets its own.
_local = threading.local()


@lru_cache(maxsize=65_536)
def _stem(word: str) -> str:
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = porter_stemmer()
    return str(stemmer.stemWord(word))


def term_set(text: str | None) -> frozenset[str]:
    """The distinct stemmed, lowercased, non-stopword words of ``text`` (empty for None)."""
    if not text:
        return frozenset()
    stems = (_stem(word) for word in words(segment_cjk(text)) if word not in STOPWORDS)
    return frozenset(stem for stem in stems if stem)  # Porter turns a lone "s" into ""


def _cut_point(text: str, low: int, high: int) -> int:
    """Where to end a window that may end anywhere in ``(low, high]``: after the last
    paragraph break, else line break, else space in ``text[low:high]``; else at ``high``."""
    for separator in ("\n\n", "\n", " ", "\t"):
        found = text.rfind(separator, low, high)
        if found >= 0:
            return found + len(separator)
    return high


def _start_point(text: str, position: int, limit: int) -> int:
    """Move a window start forward, at most to ``limit``, to the next line or word start."""
    if position == 0 or text[position - 1] in "\n \t":
        return position
    for separator in ("\n", " ", "\t"):
        found = text.find(separator, position, limit)
        if found >= 0 and found + 1 < limit:
            return found + 1
    return position


def window_spans(
    text: str, size: int = CHUNK_SIZE, overlap: int = CHUNK_OVERLAP
) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of the windows :func:`split_windows` returns, in order.

    Each window is at most ``size`` characters. It ends at the last paragraph break (else
    line break, else space) in its second half, so sentences are rarely cut; the next one
    starts ``overlap`` characters before that end, moved up to ``overlap / 2`` forward to a
    line or word start. Consecutive windows touch or overlap, so together they cover every
    character. Text that fits (including empty text) is one window.
    """
    if size <= 0:
        raise ValueError(f"chunk size must be positive, got {size}")
    if not 0 <= overlap < size:
        raise ValueError(f"chunk overlap must be in [0, size), got {overlap}")
    spans: list[tuple[int, int]] = []
    start = 0
    while start + size < len(text):
        cut = _cut_point(text, start + size // 2, start + size)
        spans.append((start, cut))
        position = max(cut - overlap, start + 1)
        start = _start_point(text, position, min(cut, position + overlap // 2))
    spans.append((start, len(text)))
    return spans


def split_windows(text: str, size: int = CHUNK_SIZE, overlap: int = CHUNK_OVERLAP) -> list[str]:
    """``text`` as overlapping windows of at most ``size`` characters (see :func:`window_spans`)."""
    return [text[start:end] for start, end in window_spans(text, size, overlap)]


def select_chunk(
    text: str,
    query: str,
    intent: str | None = None,
    size: int = CHUNK_SIZE,
    overlap: int = CHUNK_OVERLAP,
) -> str:
    """The window of ``text`` (see :func:`split_windows`) that best matches the query.

    A window scores 1.0 per distinct query term it contains plus 0.5 per distinct intent
    term (a term in both counts once, as a query term); the earliest of equal windows wins,
    so a document with no matching term gives its opening. Text of at most ``size``
    characters comes back whole.
    """
    if len(text) <= size:
        return text
    windows = split_windows(text, size, overlap)
    query_terms = term_set(query)
    intent_terms = term_set(intent) - query_terms
    if not query_terms and not intent_terms:
        return windows[0]
    best_window, best_score = windows[0], -1.0
    for window in windows:
        present = term_set(window)
        score = QUERY_TERM_WEIGHT * len(query_terms & present) + INTENT_TERM_WEIGHT * len(
            intent_terms & present
        )
        if score > best_score:
            best_window, best_score = window, score
    return best_window
