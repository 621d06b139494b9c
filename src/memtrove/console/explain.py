"""Why a result scored what it did, for the console's search page (asked for when a
result's "Why this score" is first opened, so the page itself costs only its search).

Each result of the method run is set beside the legs measured on their own (BM25 with its
rank, the vectors' cosine with its rank, or why that leg did not run) and the composite
signals scoring reads of it (recency, confidence, quality, length, frequency, pin, snooze,
supersession, and the bounded factor they make together), computed by the same functions
composite scoring uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from memtrove.errors import MemtroveError
from memtrove.results import SearchResults
from memtrove.retrieval.scoring import (
    DEFAULT_WEIGHTS,
    QUERY_WEIGHTS,
    ScoringInput,
    choose_weights,
    confidence_score,
    frequency_boost,
    length_factor,
    modifier,
    quality_factor,
    recency_score,
)
from memtrove.vault import Vault

__all__ = ["Explanation", "Leg", "explain"]

LEG_DEPTH = 50


@dataclass(frozen=True)
class Leg:
    """One retrieval leg's view of a document: its raw score and rank, or why it has none."""

    name: str
    score: float | None = None
    rank: int | None = None
    note: str = ""


@dataclass
class Explanation:
    """A result's legs and composite signals (name -> value, in display order)."""

    legs: list[Leg] = field(default_factory=list)
    signals: list[tuple[str, str]] = field(default_factory=list)


def _leg(name: str, run: SearchResults) -> dict[int, Leg]:
    """Each document ``run`` found, by doc id: its score and rank on this leg."""
    return {
        result.doc_id: Leg(name, result.score, rank) for rank, result in enumerate(run, start=1)
    }


def _signals(
    item: ScoringInput[int], query: str, method: str, now: datetime
) -> list[tuple[str, str]]:
    weights = choose_weights(query, DEFAULT_WEIGHTS if method == "search" else QUERY_WEIGHTS)
    recency = recency_score(
        item.effective_at, now, item.content_type, item.access_count, item.last_accessed_at
    )
    confidence = confidence_score(
        item.confidence, item.content_type, item.last_accessed_at, item.effective_at, now
    )
    flags = [name for name in ("pinned", "snoozed", "superseded") if getattr(item, name)]
    return [
        ("type", item.content_type),
        ("recency", f"{recency:.3f}"),
        ("confidence", f"{confidence:.3f}"),
        ("quality", f"x{quality_factor(item.quality_score):.3f}"),
        ("length", f"x{length_factor(item.body_length):.3f} ({item.body_length} chars)"),
        ("frequency", f"+{frequency_boost(item.revision_count, item.duplicate_count):.3f}"),
        ("signals factor", f"x{modifier(item, weights, now):.3f}"),
        (
            "weights",
            f"search {weights.search}, recency {weights.recency}, confidence {weights.confidence}",
        ),
        ("flags", ", ".join(flags) or "none"),
    ]


def explain(
    vault: Vault,
    query: str,
    doc_ids: Sequence[int],
    method: str = "search",
    collections: Sequence[str] | None = None,
    content_types: Sequence[str] | None = None,
) -> dict[int, Explanation]:
    """An :class:`Explanation` for each of ``doc_ids`` (results of ``query``, by doc id),
    found by ``method`` (``search`` scores with the default weights, the others with the
    query weights)."""
    if not doc_ids:
        return {}
    legs: list[tuple[str, dict[int, Leg] | str]] = []
    for name, run in (("BM25", vault.search), ("vector", vault.vsearch)):
        try:
            found = run(query, LEG_DEPTH, collections, content_types)
        except MemtroveError as error:
            legs.append((name, str(error)))
            continue
        skipped = found.skipped.get("vector") if name == "vector" else None
        legs.append((name, skipped if skipped and not found else _leg(name, found)))
    now = datetime.now(UTC)
    inputs = {
        item.key: item for item in vault.retrieval.scoring_inputs([(doc, 1.0) for doc in doc_ids])
    }
    explained: dict[int, Explanation] = {}
    for doc in doc_ids:
        explanation = Explanation()
        for name, leg in legs:
            if isinstance(leg, str):
                explanation.legs.append(Leg(name, note=leg))
            else:
                explanation.legs.append(leg.get(doc, Leg(name, note="not in its top 50")))
        if doc in inputs:
            explanation.signals = _signals(inputs[doc], query, method, now)
        explained[doc] = explanation
    return explained
