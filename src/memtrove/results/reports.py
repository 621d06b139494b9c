"""What reports say: ``update`` (:class:`UpdateReport`, :class:`FileIssue`, :class:`SkipReason`),
``status`` and ``index_stats``, ``doctor`` and ``rerank-health``, stored secrets, timelines
and multi-gets. Apart from :mod:`.core` because a search never builds one: these load on
first use (see the package).

As in :mod:`.core`, the immutable records are named tuples and the two reports filled in as
they run (:class:`SecretsReport`, :class:`UpdateReport`) plain slotted classes, not
dataclasses: ``memtrove update`` and ``memtrove status`` are whole processes, and importing
:mod:`dataclasses` (which imports :mod:`inspect`) and building the classes cost them ~14 ms.
``to_dict`` gives the JSON shapes ``dataclasses.asdict`` gave, nested records included.
"""

from enum import StrEnum
from typing import Any, NamedTuple

from memtrove.results.core import Document, DocumentSummary

__all__ = [
    "Check",
    "CollectionStatus",
    "DoctorReport",
    "FileIssue",
    "IndexStats",
    "LifecycleStatus",
    "MultiGet",
    "RerankHealth",
    "RerankPair",
    "SecretsReport",
    "SkipReason",
    "Timeline",
    "UpdateReport",
    "VaultStatus",
]


class SkipReason(StrEnum):
    """Why ``update`` left a file out: the whole set, so reports can count by reason.

    The specifics (an OS error, a size) go in :attr:`FileIssue.detail`.
    """

    EXCLUDED = "excluded by pattern"
    TOO_LARGE = "larger than 5 MB"
    BINARY = "binary file"
    SYMLINK = "symbolic link (not followed)"
    NOT_REGULAR = "not a regular file"
    BAD_NAME = "name not valid UTF-8"
    UNREADABLE = "not readable"
    FOLDER_UNREADABLE = "folder not readable"


class FileIssue(NamedTuple):
    """A file that was skipped, or indexed with a caveat, and why.

    For a skipped file ``reason`` is a :class:`SkipReason` and ``detail`` the specifics.
    """

    collection: str
    path: str
    reason: str
    detail: str = ""

    def __str__(self) -> str:
        text = f"{self.collection}/{self.path}: {self.reason}"
        return f"{text} ({self.detail})" if self.detail else text


class SecretsReport:
    """Secrets found in what a vault stores (``memtrove doctor``, ``memtrove redact``).

    ``documents``: bodies holding one (``refs``: up to 50 of their ``collection/path``);
    ``rows``: other stored text by table; ``kinds``: findings per kind. The secrets
    themselves are never reported. ``applied``: they were rewritten as ``[REDACTED:kind]``.
    """

    __slots__ = ("applied", "documents", "kinds", "refs", "rows")

    def __init__(
        self,
        documents: int = 0,
        refs: list[str] | None = None,
        rows: dict[str, int] | None = None,
        kinds: dict[str, int] | None = None,
        applied: bool = False,
    ) -> None:
        self.documents = documents
        self.refs: list[str] = [] if refs is None else refs
        self.rows: dict[str, int] = {} if rows is None else rows
        self.kinds: dict[str, int] = {} if kinds is None else kinds
        self.applied = applied

    def _fields(self) -> tuple[object, ...]:
        return (self.documents, self.refs, self.rows, self.kinds, self.applied)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SecretsReport) or type(other) is not type(self):
            return NotImplemented
        return self._fields() == other._fields()

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(documents={self.documents!r}, refs={self.refs!r}, "
            f"rows={self.rows!r}, kinds={self.kinds!r}, applied={self.applied!r})"
        )

    @property
    def total(self) -> int:
        return sum(self.kinds.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "documents": self.documents,
            "refs": list(self.refs),
            "rows": dict(self.rows),
            "kinds": dict(self.kinds),
            "total": self.total,
            "applied": self.applied,
        }


class UpdateReport:
    """What one ``update`` did: ``+added ~updated =unchanged -removed``, and every problem."""

    __slots__ = (
        "added", "elapsed_seconds", "notices", "removed", "renamed", "skipped", "unchanged",
        "updated", "warnings",
    )  # fmt: skip

    def __init__(
        self,
        added: int = 0,
        updated: int = 0,
        unchanged: int = 0,
        removed: int = 0,
        renamed: int = 0,
        skipped: list[FileIssue] | None = None,
        notices: list[FileIssue] | None = None,
        warnings: list[str] | None = None,
        elapsed_seconds: float = 0.0,
    ) -> None:
        self.added = added
        self.updated = updated
        self.unchanged = unchanged
        self.removed = removed
        self.renamed = renamed
        self.skipped: list[FileIssue] = [] if skipped is None else skipped
        self.notices: list[FileIssue] = [] if notices is None else notices
        self.warnings: list[str] = [] if warnings is None else warnings
        self.elapsed_seconds = elapsed_seconds

    def _fields(self) -> tuple[object, ...]:
        return (
            self.added, self.updated, self.unchanged, self.removed, self.renamed, self.skipped,
            self.notices, self.warnings, self.elapsed_seconds,
        )  # fmt: skip

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, UpdateReport) or type(other) is not type(self):
            return NotImplemented
        return self._fields() == other._fields()

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(added={self.added!r}, updated={self.updated!r}, "
            f"unchanged={self.unchanged!r}, removed={self.removed!r}, "
            f"renamed={self.renamed!r}, skipped={self.skipped!r}, notices={self.notices!r}, "
            f"warnings={self.warnings!r}, elapsed_seconds={self.elapsed_seconds!r})"
        )

    @property
    def summary(self) -> str:
        text = f"+{self.added} ~{self.updated} ={self.unchanged} -{self.removed}"
        if self.renamed:
            text += f" ({self.renamed} renamed)"
        return text

    @property
    def skipped_by_reason(self) -> dict[str, int]:
        """How many files each reason left out, most first (ties by reason)."""
        counts: dict[str, int] = {}
        for issue in self.skipped:
            counts[str(issue.reason)] = counts.get(str(issue.reason), 0) + 1
        return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "removed": self.removed,
            "renamed": self.renamed,
            "skipped": [issue._asdict() for issue in self.skipped],
            "notices": [issue._asdict() for issue in self.notices],
            "warnings": list(self.warnings),
            "elapsed_seconds": self.elapsed_seconds,
            "summary": self.summary,
            "skipped_by_reason": self.skipped_by_reason,
        }


class CollectionStatus(NamedTuple):
    name: str
    path: str
    pattern: str
    documents: int
    path_exists: bool


class VaultStatus(NamedTuple):
    path: str
    size_bytes: int
    schema: list[str]
    documents: int
    inactive_documents: int
    fragments: int
    collections: list[CollectionStatus]
    content_types: dict[str, int]
    last_modified_at: str | None
    vectors: int = 0
    embedding_space: str | None = None
    second_channel: str = "off"  # the second vector space's state (MEMTROVE_EMBED_SECOND)
    unembedded: int = 0  # active documents whose fragments are not all embedded yet
    sessions: int = 0  # agent sessions the hooks logged (session_log)
    geometry_taint: str | None = None  # why the vectors are not trusted (vault_flags)

    @property
    def has_vectors(self) -> bool:
        return self.vectors > 0

    def to_dict(self) -> dict[str, Any]:
        return {
            **self._asdict(),
            "has_vectors": self.has_vectors,
            "schema": list(self.schema),
            "collections": [collection._asdict() for collection in self.collections],
            "content_types": dict(self.content_types),
        }


class Check(NamedTuple):
    """One ``doctor`` finding: ``status`` is ``ok``, ``warn`` or ``fail``; ``fix`` says what to do."""

    name: str
    status: str
    detail: str
    fix: str = ""

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


class DoctorReport(NamedTuple):
    """Every ``doctor`` check, in the order they ran. ``ok`` is false when any check failed."""

    checks: list[Check]
    elapsed_seconds: float = 0.0

    @property
    def failures(self) -> list[Check]:
        return [check for check in self.checks if check.status == "fail"]

    @property
    def warnings(self) -> list[Check]:
        return [check for check in self.checks if check.status == "warn"]

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def summary(self) -> str:
        failed, warned = len(self.failures), len(self.warnings)
        if not failed and not warned:
            return f"all {len(self.checks)} checks passed"
        warnings = f"{warned} warning" + ("" if warned == 1 else "s")
        return f"{failed} failed, {warnings}, {len(self.checks) - failed - warned} ok"

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "summary": self.summary,
            "checks": [check.to_dict() for check in self.checks],
            "elapsed_seconds": round(self.elapsed_seconds, 3),
        }


class RerankPair(NamedTuple):
    """A golden probe: the reranker's scores for a relevant and an irrelevant text."""

    query: str
    relevant_score: float
    irrelevant_score: float

    @property
    def discriminates(self) -> bool:
        return self.relevant_score > self.irrelevant_score

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "relevant_score": round(self.relevant_score, 6),
            "irrelevant_score": round(self.irrelevant_score, 6),
            "discriminates": self.discriminates,
        }


class RerankHealth(NamedTuple):
    """What a live probe of the reranker found.

    ``verdict`` is ``healthy``, ``degenerate`` (no score above the floor), ``inverted``
    (irrelevant texts ranked first in most pairs), ``not discriminating`` (neither way in
    most pairs), ``error`` (the service failed or answered nonsense; ``detail`` says how) or
    ``not configured``. ``fix`` is empty when healthy.
    """

    configured: bool
    verdict: str
    detail: str
    reranker: str = ""
    fix: str = ""
    pairs: list[RerankPair] = []  # noqa: RUF012 (one list shared by the defaults: never mutated)
    elapsed_seconds: float = 0.0

    @property
    def healthy(self) -> bool:
        return self.verdict == "healthy"

    def to_dict(self) -> dict[str, Any]:
        return {
            "configured": self.configured,
            "healthy": self.healthy,
            "verdict": self.verdict,
            "detail": self.detail,
            "reranker": self.reranker,
            "fix": self.fix,
            "pairs": [pair.to_dict() for pair in self.pairs],
            "elapsed_seconds": round(self.elapsed_seconds, 3),
        }


class Timeline(NamedTuple):
    """Documents either side of ``anchor`` in effective-time order, nearest first."""

    anchor: DocumentSummary
    before: list[DocumentSummary]
    after: list[DocumentSummary]

    def to_dict(self) -> dict[str, Any]:
        return {
            "anchor": self.anchor.to_dict(),
            "before": [summary.to_dict() for summary in self.before],
            "after": [summary.to_dict() for summary in self.after],
        }


class MultiGet(NamedTuple):
    """Several documents at once; ``truncated`` names (``collection/path``) the cut bodies."""

    documents: list[Document]
    errors: list[str]
    truncated: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "documents": [document.to_dict() for document in self.documents],
            "errors": list(self.errors),
            "truncated": list(self.truncated),
        }


class IndexStats(NamedTuple):
    """Index health: what is searchable, embedded, stale (by each collection's
    ``stale_after_days``; see :mod:`memtrove.index.staleness`)."""

    documents: int
    inactive_documents: int
    content_types: dict[str, int]
    embedded_documents: int
    pending_embeds: int
    failed_embeds: int
    stale_documents: int
    oldest: str | None
    newest: str | None
    vectors: int
    embedding_space: str | None

    def to_dict(self) -> dict[str, Any]:
        return {**self._asdict(), "content_types": dict(self.content_types)}


class LifecycleStatus(NamedTuple):
    """Document counts by lifecycle state (``snoozed``: active and snoozed until later;
    ``inactive``: neither active nor archived, e.g. forgotten or gone from their folder),
    the documents recall telemetry suggests pinning or snoozing, and the lifecycle policy."""

    active: int
    inactive: int
    pinned: int
    snoozed: int
    invalidated: int
    archived: int = 0
    forgotten: int = 0
    never_accessed: int = 0
    # a named tuple's defaults are shared by every instance: these are never mutated
    pin_candidates: list[Any] = []  # noqa: RUF012
    snooze_candidates: list[Any] = []  # noqa: RUF012
    policy: dict[str, Any] = {}  # noqa: RUF012

    def text(self) -> str:
        lines = [
            f"active {self.active}, inactive {self.inactive}, archived {self.archived}, "
            f"forgotten {self.forgotten}, pinned {self.pinned}, snoozed {self.snoozed}, "
            f"invalidated {self.invalidated}, never accessed {self.never_accessed}"
        ]
        for label, found in (("pin", self.pin_candidates), ("snooze", self.snooze_candidates)):
            for item in found:
                lines.append(
                    f"{label}? #{item.docid} {item.collection}/{item.path} "
                    f"(recalled {item.recall_count}, used {item.referenced}, "
                    f"unused {item.negative_count})"
                )
        if self.policy:
            lines.append(
                f"policy: archive after {self.policy.get('archive_after_days') or 'never'} "
                f"days unused, purge after {self.policy.get('purge_after_days') or 'never'}"
            )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        data = {
            name: getattr(self, name)
            for name in (
                "active", "inactive", "pinned", "snoozed", "invalidated",
                "archived", "forgotten", "never_accessed",
            )
        }  # fmt: skip
        data["pin_candidates"] = [item.to_dict() for item in self.pin_candidates]
        data["snooze_candidates"] = [item.to_dict() for item in self.snooze_candidates]
        data["policy"] = dict(self.policy)
        return data
