"""Result types of the agent's memory store (entries, duplicates, hygiene)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "DuplicatePair",
    "DuplicateReport",
    "EntryVersion",
    "HygieneReport",
    "MemoryEntry",
    "RecalledEntry",
    "RememberResult",
    "Rule",
    "RuleMatch",
    "RuleMatcher",
    "SimilarEntry",
]


@dataclass(frozen=True)
class MemoryEntry:
    """A labelled memory in a store (its text is also a document of ``_memtrove``)."""

    store: str
    slug: str
    label: str
    content: str
    branch: str | None
    confidence: int | None
    archived: bool
    created_at: str
    updated_at: str
    recall_count: int
    last_recalled_at: str | None
    docid: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SimilarEntry:
    """Another entry of the store close to a new one (the write-time warning)."""

    store: str
    slug: str
    label: str
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "score": round(self.score, 4)}


@dataclass(frozen=True)
class RememberResult:
    """What ``remember`` did: the entry, whether it is new, and near entries to review."""

    entry: MemoryEntry
    created: bool
    similar: list[SimilarEntry]
    drained: int = 0  # queued tool calls cleared for the session

    def to_dict(self) -> dict[str, Any]:
        return {
            "entry": self.entry.to_dict(),
            "created": self.created,
            "similar": [item.to_dict() for item in self.similar],
            "drained": self.drained,
        }


@dataclass(frozen=True)
class RecalledEntry:
    entry: MemoryEntry
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {**self.entry.to_dict(), "score": round(self.score, 4)}


@dataclass(frozen=True)
class EntryVersion:
    """An earlier text of an entry, kept when it was overwritten or forgotten."""

    store: str
    slug: str
    label: str
    content: str
    branch: str | None
    confidence: int | None
    written_at: str
    replaced_at: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class DuplicatePair:
    store: str
    slug_a: str
    slug_b: str
    label_a: str
    label_b: str
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "score": round(self.score, 4)}


@dataclass(frozen=True)
class DuplicateReport:
    """Near-duplicate pairs not yet judged, grouped into connected clusters (largest first)."""

    store: str
    threshold: float
    clusters: list[list[DuplicatePair]]

    @property
    def pairs(self) -> int:
        return sum(len(cluster) for cluster in self.clusters)

    def lines(self) -> list[str]:
        """``Cluster of N:`` then ``[score:0.91] labelA <-> labelB`` per pair."""
        out: list[str] = []
        for cluster in self.clusters:
            labels = {p.label_a for p in cluster} | {p.label_b for p in cluster}
            out.append(f"Cluster of {len(labels)}:")
            out.extend(f"  [score:{p.score:.2f}] {p.label_a} <-> {p.label_b}" for p in cluster)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "store": self.store,
            "threshold": self.threshold,
            "pairs": self.pairs,
            "clusters": [[pair.to_dict() for pair in cluster] for cluster in self.clusters],
        }


@dataclass(frozen=True)
class HygieneReport:
    """Store maintenance signals; ``healthy`` when all three are zero."""

    store: str
    duplicate_pairs: int
    stale_entries: int
    orphaned_branches: dict[str, int]
    branch_check: str  # "checked", or why it was skipped

    @property
    def healthy(self) -> bool:
        return not (self.duplicate_pairs or self.stale_entries or self.orphaned_branches)

    def lines(self) -> list[str]:
        """Only the non-zero signals (nothing at all for a healthy store)."""
        out: list[str] = []
        if self.duplicate_pairs:
            out.append(
                f"- {self.duplicate_pairs} near-duplicate pair(s) in store {self.store} await "
                "review: run find_duplicates, then merge or dedup_mark_checked them."
            )
        if self.stale_entries:
            out.append(
                f"- {self.stale_entries} entr{'y' if self.stale_entries == 1 else 'ies'} in "
                f"store {self.store} neither updated nor recalled for 90 days: recall to "
                "confirm, overwrite to refresh, or forget."
            )
        for branch, count in sorted(self.orphaned_branches.items()):
            out.append(
                f"- {count} entr{'y' if count == 1 else 'ies'} scoped to branch {branch!r}, "
                "which no longer exists: re-scope (overwrite without a branch) or forget."
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "healthy": self.healthy}


@dataclass(frozen=True)
class RuleMatcher:
    id: str
    description: str
    weight: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Rule:
    """A prediction (what the user wants) or a behavior (what the agent should do)."""

    kind: str
    id: str
    store: str
    statement: str
    rationale: str | None
    confidence: float
    confirm_count: float
    disconfirm_count: float
    codified_at: str | None
    created_at: str
    updated_at: str
    matchers: list[RuleMatcher]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["confidence"] = round(self.confidence, 4)
        return data


@dataclass(frozen=True)
class RuleMatch:
    """A rule surfaced for a prompt: ``score = cosine x edge weight x confidence``."""

    rule: Rule
    matcher: str
    cosine: float
    weight: float
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule.to_dict(),
            "matcher": self.matcher,
            "cosine": round(self.cosine, 4),
            "weight": self.weight,
            "score": round(self.score, 4),
        }
