"""What the lifecycle commands return: sweep candidates, sweeps, restores, purges, the
archived documents a ``lifecycle search`` finds, and pin / snooze candidates."""

from typing import Any, NamedTuple

__all__ = [
    "ArchivedDocument",
    "Considered",
    "InjectedEntry",
    "LifecycleCandidate",
    "PromptRecord",
    "PurgeReport",
    "RecallCandidate",
    "RestoreReport",
    "SweepReport",
]


class LifecycleCandidate(NamedTuple):
    """A document the policy archives (or archived), and why."""

    doc_id: int
    docid: str
    collection: str
    path: str
    title: str
    content_type: str
    last_used_at: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        data = self._asdict()
        data.pop("doc_id")
        return data


class SweepReport(NamedTuple):
    """``lifecycle sweep``: candidates, and with ``apply`` how many were archived and purged."""

    dry_run: bool
    candidates: int
    archived: int
    purged: int
    documents: list[LifecycleCandidate]
    policy: dict[str, Any]

    def text(self) -> str:
        shown = self.documents[:50]
        lines = [f"#{c.docid} {c.collection}/{c.path}  {c.reason}" for c in shown]
        if len(self.documents) > len(shown):
            lines.append(f"... and {len(self.documents) - len(shown)} more")
        if self.dry_run:
            lines.append(
                f"dry run: {self.candidates} documents would be archived (--apply archives them)"
            )
        else:
            lines.append(f"archived {self.archived} documents, purged {self.purged}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"dry_run": self.dry_run, "candidates": self.candidates}
        if not self.dry_run:
            data.update(archived=self.archived, purged=self.purged)
        data["documents"] = [candidate.to_dict() for candidate in self.documents]
        data["policy"] = self.policy
        return data


class RestoreReport(NamedTuple):
    """``lifecycle restore``: archived documents made active again."""

    restored: int
    documents: list[str]  # collection/path

    def text(self) -> str:
        return f"restored {self.restored} documents"

    def to_dict(self) -> dict[str, Any]:
        return {"restored": self.restored, "documents": self.documents}


class PurgeReport(NamedTuple):
    """``lifecycle purge``: archived documents deleted for good (with their bodies,
    fragments and vectors when no other document shares them)."""

    purged: int
    bodies: int
    documents: list[str]

    def text(self) -> str:
        return f"purged {self.purged} archived documents ({self.bodies} bodies deleted)"

    def to_dict(self) -> dict[str, Any]:
        return {"purged": self.purged, "bodies": self.bodies, "documents": self.documents}


class ArchivedDocument(NamedTuple):
    """An archived document found by ``lifecycle search`` (BM25, normalised 0-1)."""

    docid: str
    collection: str
    path: str
    title: str
    content_type: str
    archived_at: str
    reason: str | None
    score: float

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


class RecallCandidate(NamedTuple):
    """A document recall telemetry suggests pinning (recalled often, over many queries and
    days, and used) or snoozing (surfaced again and again, never used)."""

    docid: str
    collection: str
    path: str
    title: str
    recall_count: int
    referenced: int
    negative_count: int
    diversity_score: float
    spacing_score: float

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


class InjectedEntry(NamedTuple):
    """One document a prompt was given: its path then, its score, whether the reply used it
    (None until feedback-loop has judged the turn)."""

    path: str
    score: float
    referenced: bool | None

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


class Considered(NamedTuple):
    """A document one prompt considered: ``status`` ``injected`` (with the passage length
    it got, ``chars``) or ``left out`` (with the ``reason``)."""

    path: str
    doc_id: int
    score: float
    status: str
    reason: str
    chars: int

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


class PromptRecord(NamedTuple):
    """One context-surfacing run of a session: the prompt, what it injected, at what cost,
    and (``considered``) every document it weighed, injected or not, and why."""

    usage_id: int
    timestamp: str
    turn_index: int
    query_text: str
    estimated_tokens: int
    injected: tuple[InjectedEntry, ...]
    considered: tuple[Considered, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            **self._asdict(),
            "injected": [entry.to_dict() for entry in self.injected],
            "considered": [entry.to_dict() for entry in self.considered],
        }
