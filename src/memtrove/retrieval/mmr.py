"""Diversity: push near-duplicates down the result list so one topic does not fill it.

A simple form of maximal marginal relevance: walk the results in rank order and compare each
with the ones already kept, by the Jaccard similarity of their word bigrams. A result too
close to a kept one (> 0.6 by default) is demoted behind every kept result, never dropped,
so asking for more results still reaches it.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence, Set
from itertools import pairwise
from typing import TypeVar

from memtrove.text import words

__all__ = ["DEMOTE_THRESHOLD", "bigrams", "demote_similar", "jaccard"]

K = TypeVar("K", bound=Hashable)

DEMOTE_THRESHOLD = 0.6


def bigrams(text: str) -> set[str]:
    """Adjacent lowercased word pairs of ``text`` ("a b"); a one-word text gives that word."""
    tokens = words(text)
    if len(tokens) < 2:
        return set(tokens)
    return {f"{first} {second}" for first, second in pairwise(tokens)}


def jaccard(first: Set[Hashable], second: Set[Hashable]) -> float:
    """``|A ∩ B| / |A ∪ B|`` in [0, 1]; 0.0 when both are empty (nothing shows they match)."""
    if len(first) > len(second):
        first, second = second, first
    shared = len(first & second)  # the union is never built: |A| + |B| - |A ∩ B|
    union = len(first) + len(second) - shared
    return shared / union if union else 0.0


_FAST_WORD = re.compile(r"\w+")


def _bigram_ids(text: str) -> set[int]:
    """Word-bigram hashes for comparing: lowercased ``\\w+`` runs without the Unicode
    normalisation of :func:`bigrams` (near-duplicates share their spelling), much cheaper."""
    tokens = _FAST_WORD.findall(text.lower())
    if len(tokens) < 2:
        return {hash(token) for token in tokens}
    return {hash(pair) for pair in pairwise(tokens)}


def demote_similar(
    items: Sequence[tuple[K, str]],
    threshold: float = DEMOTE_THRESHOLD,
    limit: int | None = None,
) -> list[K]:
    """Keys of ``(key, text)`` pairs (best first) with near-duplicates moved to the end.

    An item whose bigram Jaccard similarity with any already-kept item exceeds
    ``threshold`` is demoted; it is compared with kept items only. Kept items keep their
    order, followed by the demoted ones in theirs. Every key comes back exactly once per
    occurrence: the result is a permutation of the input keys.

    With ``limit``, the walk stops once ``limit`` items are kept (only the first ``limit``
    positions of the result matter to the caller); the rest follow in their given order.
    """
    kept: list[K] = []
    kept_bigrams: list[set[int]] = []
    demoted: list[K] = []
    for index, (key, text) in enumerate(items):
        if limit is not None and len(kept) >= limit:
            return kept + demoted + [rest for rest, _ in items[index:]]
        grams = _bigram_ids(text)
        if any(jaccard(grams, other) > threshold for other in kept_bigrams):
            demoted.append(key)
        else:
            kept.append(key)
            kept_bigrams.append(grams)
    return kept + demoted
