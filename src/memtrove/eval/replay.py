"""``memtrove eval run``: replay a gold set through one retrieval profile, score each example
per document, and decide whether the figures can be trusted (ClawMem's offline harness).

Profiles: only ``query`` (every example through :meth:`Vault.query <memtrove.Vault.query>`
with its ``collection`` and ``include_internal``, top ``limit``), as in ClawMem. A replay
only reads: ``query`` writes no usage, recall or relation rows.

Per example, with C the distinct documents retrieved in the top ``limit`` (an identical
copy of a result counts as retrieved too) and E its gold documents: ``jaccard`` = |C∩E| /
|C∪E|, ``precision@k`` = |C∩E| / k, ``recall@k`` = |C∩E| / |E|, ``hit@k`` (any gold document
retrieved), ``MRR`` (1 / rank of the first) and ``nDCG@k`` (gold ``weight`` as gain); each
averaged over the scored examples. An example is scored when it has gold evidence and every
reference resolves to a document of the vault.

The trust gate (:class:`TrustGate`) passes when at least ``min_examples`` examples were
scored, no reference is unresolved (a label pointing at a document the vault lacks makes
the set partial, and partial gold inflates every figure), and the caller attests that the
labels were audited by a person (``--audited``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from memtrove.errors import InvalidQueryError, MemtroveError
from memtrove.eval.gold import GoldExample, resolve_evidence
from memtrove.eval.metrics import hit_at_k, mean, ndcg_at_k, reciprocal_rank, unique
from memtrove.eval.runner import ProgressCallback, latency_summary
from memtrove.vault import Vault

__all__ = [
    "DEFAULT_LIMIT",
    "DEFAULT_MIN_EXAMPLES",
    "PROFILES",
    "RUN_METRICS",
    "ExampleResult",
    "TrustGate",
    "replay",
    "score_example",
]

PROFILES = ("query",)
DEFAULT_LIMIT = 10
DEFAULT_MIN_EXAMPLES = 30
RUN_METRICS = ("jaccard", "precision@k", "recall@k", "hit@k", "MRR", "nDCG@k")


@dataclass(frozen=True)
class ExampleResult:
    """One gold example replayed: what was retrieved, its scores (empty when not scored)
    and why it was not scored (``skipped``: ``no evidence``, ``unresolved``)."""

    id: str
    query: str
    line: int
    tags: tuple[str, ...]
    evidence: tuple[str, ...]
    retrieved: tuple[str, ...] = ()
    metrics: dict[str, float] = field(default_factory=dict)
    latency_ms: float | None = None
    unresolved: tuple[str, ...] = ()
    skipped: str | None = None
    error: str | None = None

    @property
    def scored(self) -> bool:
        return self.skipped is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "line": self.line,
            "query": self.query,
            "tags": list(self.tags),
            "scored": self.scored,
            "skipped": self.skipped,
            "evidence": list(self.evidence),
            "unresolved": list(self.unresolved),
            "retrieved": list(self.retrieved),
            "metrics": self.metrics,
            "latency_ms": None if self.latency_ms is None else round(self.latency_ms, 3),
            **({"error": self.error} if self.error else {}),
        }


@dataclass(frozen=True)
class TrustGate:
    """Whether a run's figures can be trusted; ``reasons`` says why not (empty: passed)."""

    min_examples: int
    audited: bool
    scored: int
    unresolved_references: int
    first_unresolved: str | None = None

    @property
    def reasons(self) -> list[str]:
        reasons: list[str] = []
        if self.scored < self.min_examples:
            reasons.append(
                f"{self.scored} scored examples, fewer than --min-examples {self.min_examples}"
            )
        if self.unresolved_references:
            first = f" (first: {self.first_unresolved})" if self.first_unresolved else ""
            reasons.append(
                f"{self.unresolved_references} gold references name no document of the vault{first}"
            )
        if not self.audited:
            reasons.append("the labels are not attested as audited (--audited)")
        return reasons

    @property
    def passed(self) -> bool:
        return not self.reasons

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "reasons": self.reasons,
            "min_examples": self.min_examples,
            "scored_examples": self.scored,
            "unresolved_references": self.unresolved_references,
            "audited": self.audited,
        }


def score_example(ranking: Sequence[str], gains: dict[str, float], k: int) -> dict[str, float]:
    """The document-level metrics of one ranking (best first) against its gold ``gains``."""
    retrieved = set(unique(ranking)[:k])
    gold = set(gains)
    found = len(retrieved & gold)
    union = len(retrieved | gold)
    return {
        "jaccard": found / union if union else 0.0,
        "precision@k": found / k,
        "recall@k": found / len(gold),
        "hit@k": hit_at_k(ranking, gold, k),
        "MRR": reciprocal_rank(unique(ranking)[:k], gold),
        "nDCG@k": ndcg_at_k(ranking, gains, k),
    }


def _ranking(vault: Vault, example: GoldExample, limit: int) -> list[str]:
    """``collection/path`` of each result of the example's query, best first, each followed
    by its identical copies; internal documents only when the example includes them."""
    results = vault.query(
        example.query,
        limit=limit,
        collections=[example.collection] if example.collection else None,
        include_internal=example.include_internal,
    )
    return [
        reference
        for result in results
        if example.include_internal or not result.collection.startswith("_")
        for reference in (f"{result.collection}/{result.path}", *result.also_at)
    ]


def replay(
    vault: Vault,
    examples: Sequence[GoldExample],
    *,
    profile: str = "query",
    limit: int = DEFAULT_LIMIT,
    progress: ProgressCallback | None = None,
) -> list[ExampleResult]:
    """Every example replayed through ``profile`` on ``vault``, in file order."""
    if profile not in PROFILES:
        raise InvalidQueryError(
            f"profile {profile!r} is not implemented; known: {', '.join(PROFILES)}"
        )
    if limit < 1:
        raise InvalidQueryError(f"limit must be positive, got {limit}")
    results: list[ExampleResult] = []
    for done, example in enumerate(examples):
        if progress and done % 10 == 0:
            progress(done, len(examples), "replaying")
        references = tuple(evidence.reference for evidence in example.gold_evidence)
        base = ExampleResult(example.id, example.query, example.line, example.tags, references)
        try:
            gains, unresolved, _warnings = resolve_evidence(vault, example)
        except MemtroveError as error:  # an ambiguous reference: a label to fix
            gains, unresolved = {}, [f"{references[0]} ({error})"]
        if unresolved:
            results.append(replace(base, unresolved=tuple(unresolved), skipped="unresolved"))
            continue
        if not gains:
            results.append(replace(base, skipped="no evidence"))
            continue
        started = time.perf_counter()
        error_text = None
        try:
            ranking = _ranking(vault, example, limit)
        except InvalidQueryError as error:  # ranks nothing; counted, the run goes on
            ranking, error_text = [], str(error)
        latency = (time.perf_counter() - started) * 1000.0
        results.append(
            replace(
                base,
                evidence=tuple(gains),
                retrieved=tuple(unique(ranking)[:limit]),
                metrics=score_example(ranking, gains, limit),
                latency_ms=latency,
                error=error_text,
            )
        )
    return results


def summarize(results: Sequence[ExampleResult]) -> tuple[dict[str, float], dict[str, float]]:
    """(mean of each metric over the scored examples, latency p50/p95 in ms)."""
    scored = [result for result in results if result.scored]
    metrics = {name: round(mean(r.metrics[name] for r in scored), 6) for name in RUN_METRICS}
    latencies = [r.latency_ms for r in scored if r.latency_ms is not None]
    return metrics, latency_summary(latencies)


def by_tag(results: Sequence[ExampleResult]) -> dict[str, dict[str, float]]:
    """The mean metrics of the scored examples of each tag, with their count ``n``."""
    tags: dict[str, list[ExampleResult]] = {}
    for result in results:
        if result.scored:
            for tag in result.tags:
                tags.setdefault(tag, []).append(result)
    return {
        tag: {"n": float(len(group))}
        | {name: round(mean(r.metrics[name] for r in group), 6) for name in RUN_METRICS}
        for tag, group in sorted(tags.items())
    }


def trust_gate(results: Sequence[ExampleResult], *, min_examples: int, audited: bool) -> TrustGate:
    """The gate over a replay's results."""
    unresolved = [(r.id, ref) for r in results for ref in r.unresolved]
    return TrustGate(
        min_examples=min_examples,
        audited=audited,
        scored=sum(1 for r in results if r.scored),
        unresolved_references=len(unresolved),
        first_unresolved=f"{unresolved[0][0]} -> {unresolved[0][1]}" if unresolved else None,
    )
