"""Rank fusion: merge ranked lists (RRF) and blend a reranker's scores with the fused order.

Pure functions over generic hashable keys (document ids in practice); no SQL, no models.

Reciprocal rank fusion gives each key ``weight / (k + rank)`` from every list it appears in
(rank counts from 1), then a small bonus for its *best* rank in any list: +0.05 when some
list ranks it first, +0.02 when its best rank is 2 or 3. The bonus is added once per key,
whatever the number of lists, and is not scaled by list weight: it rewards a document that
some retriever is sure about, which a plain sum of reciprocals flattens out (1/61 vs 1/62).
The query pipeline weights the original query's lists 2x and expansion lists 1x.

:func:`blend_rerank` then mixes a cross-encoder's scores (dominant, 0.9) with the
max-normalised RRF score (tie-breaker, 0.1). When the reranker says nothing useful (no score
above :data:`RERANK_DEGENERATE_FLOOR`) the fused order is kept and the result is flagged
``degenerate`` so the caller can warn.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Generic, NamedTuple, TypeVar

__all__ = [
    "RANK_BONUS",
    "RERANK_DEGENERATE_FLOOR",
    "RERANK_WEIGHT",
    "RRF_K",
    "BlendResult",
    "blend_rerank",
    "normalize_max",
    "rrf",
]

K = TypeVar("K", bound=Hashable)

RRF_K = 60
# Bonus by best rank across lists: index 0 is rank 1, index 1 rank 2, and so on.
RANK_BONUS: tuple[float, ...] = (0.05, 0.02, 0.02)
RERANK_WEIGHT = 0.9
# A reranker whose every score is at or below this is down or broken (all zeros, say).
RERANK_DEGENERATE_FLOOR = 1e-4


class BlendResult(NamedTuple, Generic[K]):
    """Keys in blended order with their scores; ``degenerate`` when the reranker was ignored."""

    ranked: list[tuple[K, float]]
    degenerate: bool


def rrf(
    lists: Sequence[tuple[Sequence[K], float]],
    k: int = RRF_K,
    rank_bonus: tuple[float, ...] = RANK_BONUS,
) -> list[tuple[K, float]]:
    """Weighted reciprocal rank fusion of ``(ranked keys, weight)`` lists, best first.

    Each list adds ``weight / (k + rank)`` to every key in it (rank 1 is the head). A key
    repeated inside one list counts once, at its first position. Lists with weight 0 are
    skipped entirely (they neither score nor earn a bonus); a negative or non-finite weight
    is a ``ValueError``. Each key then gets ``rank_bonus[best_rank - 1]`` once, for its best
    rank over all lists (nothing past the tuple's end). Ties go to the better best rank,
    then to the key seen first (lists in order, each from its head).
    """
    if k < 0:
        raise ValueError(f"rrf k must be >= 0, got {k}")
    totals: dict[K, float] = {}
    best_rank: dict[K, int] = {}
    for keys, weight in lists:
        if not math.isfinite(weight) or weight < 0:
            raise ValueError(f"rrf list weight must be finite and >= 0, got {weight}")
        if weight == 0:
            continue
        seen: set[K] = set()
        for rank, key in enumerate(keys, start=1):
            if key in seen:
                continue
            seen.add(key)
            totals[key] = totals.get(key, 0.0) + weight / (k + rank)
            if rank < best_rank.get(key, rank + 1):
                best_rank[key] = rank
    first_seen = {key: order for order, key in enumerate(totals)}
    scores = {
        key: total + (rank_bonus[best_rank[key] - 1] if best_rank[key] <= len(rank_bonus) else 0)
        for key, total in totals.items()
    }
    ordered = sorted(scores, key=lambda key: (-scores[key], best_rank[key], first_seen[key]))
    return [(key, scores[key]) for key in ordered]


def normalize_max(scores: Sequence[tuple[K, float]]) -> list[tuple[K, float]]:
    """Scores divided by the largest one, order kept; all 0.0 when none is positive."""
    top = max((score for _, score in scores if math.isfinite(score)), default=0.0)
    if top <= 0:
        return [(key, 0.0) for key, _ in scores]
    return [(key, score / top if math.isfinite(score) else 0.0) for key, score in scores]


def _unit(value: float) -> float:
    """A reranker score clamped to [0, 1]; NaN counts as no signal."""
    if math.isnan(value):
        return 0.0
    return min(1.0, max(0.0, value))


def blend_rerank(
    fused: Sequence[tuple[K, float]],
    rerank: Mapping[K, float],
    weight: float = RERANK_WEIGHT,
    floor: float = RERANK_DEGENERATE_FLOOR,
) -> BlendResult[K]:
    """Blend reranker scores with the fused order: ``weight·rerank + (1-weight)·RRF/max``.

    ``fused`` is RRF output (best first); keys missing from ``rerank`` score 0 there, and
    reranker scores are clamped to [0, 1]. Equal blends keep their fused order. When no
    candidate's reranker score exceeds ``floor`` the reranker is treated as unavailable:
    the fused order comes back with normalised RRF scores and ``degenerate=True``. An empty
    ``fused`` is not degenerate (there was nothing to judge).
    """
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"rerank weight must be in [0, 1], got {weight}")
    normalized = normalize_max(fused)
    if not normalized:
        return BlendResult(ranked=[], degenerate=False)
    reranked = {key: _unit(rerank.get(key, 0.0)) for key, _ in normalized}
    if not any(score > floor for score in reranked.values()):
        return BlendResult(ranked=normalized, degenerate=True)
    blended = [
        (key, weight * reranked[key] + (1.0 - weight) * fused_score)
        for key, fused_score in normalized
    ]
    blended.sort(key=lambda pair: -pair[1])  # stable: ties keep the fused order
    return BlendResult(ranked=blended, degenerate=False)
