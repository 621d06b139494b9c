"""Ranking metrics: pure functions over ranked identifiers and judged relevance.

A ranking is a sequence of identifiers, best first (document paths, dialogue ids, corpus
ids: anything hashable). A repeated identifier counts once, at its first rank, so a
retriever cannot earn credit twice for the same item.

- :func:`coverage` / :func:`recall_at_k`: the fraction of the relevant items found;
- :func:`reciprocal_rank`: ``1 / rank`` of the first relevant item, 0 when none is ranked;
- :func:`ndcg_at_k`: graded nDCG with linear gains and a ``log2(rank + 1)`` discount, the
  definition BEIR reports (trec_eval's ``ndcg_cut``);
- :func:`percentile` and :func:`mean` for aggregating per-query values.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

__all__ = [
    "coverage",
    "hit_at_k",
    "mean",
    "ndcg_at_k",
    "percentile",
    "recall_at_k",
    "reciprocal_rank",
    "unique",
]

Item = TypeVar("Item", bound=Hashable)


def unique(ranking: Iterable[Item]) -> list[Item]:
    """``ranking`` with later repeats of an item removed, order kept."""
    seen: set[Item] = set()
    kept: list[Item] = []
    for item in ranking:
        if item not in seen:
            seen.add(item)
            kept.append(item)
    return kept


def coverage(found: Iterable[Item], relevant: Collection[Item]) -> float:
    """The fraction of ``relevant`` present in ``found`` (an unordered set of hits)."""
    if not relevant:
        raise ValueError("coverage needs at least one relevant item")
    wanted = set(relevant)
    return len(wanted.intersection(found)) / len(wanted)


def recall_at_k(ranking: Sequence[Item], relevant: Collection[Item], k: int) -> float:
    """``|relevant ∩ top k| / |relevant|``."""
    if k < 1:
        raise ValueError(f"k must be positive, got {k}")
    return coverage(unique(ranking)[:k], relevant)


def reciprocal_rank(ranking: Iterable[Item], relevant: Collection[Item]) -> float:
    """``1 / rank`` of the first relevant item (ranks start at 1); 0 when none is ranked."""
    wanted = set(relevant)
    for rank, item in enumerate(unique(ranking), 1):
        if item in wanted:
            return 1.0 / rank
    return 0.0


def hit_at_k(ranking: Sequence[Item], relevant: Collection[Item], k: int) -> float:
    """1.0 when any relevant item is among the first ``k`` distinct items, else 0.0."""
    wanted = set(relevant)
    return 1.0 if any(item in wanted for item in unique(ranking)[:k]) else 0.0


def ndcg_at_k(ranking: Sequence[Item], gains: Mapping[Item, float], k: int) -> float:
    """Graded nDCG@k: ``sum(gain / log2(rank + 1))`` over the top k, over the ideal order.

    ``gains`` holds every judged item with its gain (a qrel score or a gold weight); items
    not in it, and gains of zero or less, count as irrelevant. Judged items the ranking
    could never reach still count in the ideal order, as in trec_eval. 0 when nothing is
    relevant.
    """
    if k < 1:
        raise ValueError(f"k must be positive, got {k}")
    positive = sorted((gain for gain in gains.values() if gain > 0), reverse=True)[:k]
    ideal = sum(gain / math.log2(rank + 1) for rank, gain in enumerate(positive, 1))
    if ideal == 0:
        return 0.0
    actual = 0.0
    for rank, item in enumerate(unique(ranking)[:k], 1):
        gain = gains.get(item, 0.0)
        if gain > 0:
            actual += gain / math.log2(rank + 1)
    return actual / ideal


def mean(values: Iterable[float]) -> float:
    """The arithmetic mean; 0 for no values."""
    collected = list(values)
    return math.fsum(collected) / len(collected) if collected else 0.0


def percentile(values: Iterable[float], fraction: float) -> float:
    """The ``fraction`` quantile (0.5 = median), interpolated linearly between ranks.

    The same definition as numpy's default (``method="linear"``); 0 for no values.
    """
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must be within [0, 1], got {fraction}")
    ordered = sorted(values)
    if not ordered:
        return 0.0
    position = (len(ordered) - 1) * fraction
    lower = math.floor(position)
    upper = min(lower + 1, len(ordered) - 1)
    weight = position - lower
    return ordered[lower] + (ordered[upper] - ordered[lower]) * weight
