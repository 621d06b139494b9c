"""The values memtrove's operations return: plain frozen dataclasses, JSON-ready."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "Check",
    "Collection",
    "CollectionStatus",
    "DoctorReport",
    "Document",
    "DocumentSummary",
    "FileIssue",
    "IndexStats",
    "LifecycleStatus",
    "MultiGet",
    "RerankHealth",
    "RerankPair",
    "SearchResult",
    "SearchResults",
    "SessionRecord",
    "SkipReason",
    "StaleAfterDays",
    "TargetMatch",
    "Timeline",
    "UpdateReport",
    "VaultStatus",
]


StaleAfterDays = int | Literal["auto"] | None
"""A collection's staleness threshold: days, ``"auto"`` (the default rule), None (never)."""


@dataclass(frozen=True)
class Collection:
    """A named folder of markdown that the vault indexes, and its per-collection settings.

    ``exclude``: globs (relative to the folder) never indexed; ``surface``: False keeps the
    collection searchable but out of automatic injection; ``stale_after_days``: see
    :mod:`memtrove.index.staleness`; ``redact``: False stores the files verbatim, secrets
    included (what hooks inject is redacted all the same).
    """

    name: str
    path: Path
    pattern: str = "**/*.md"
    exclude: tuple[str, ...] = ()
    surface: bool = True
    stale_after_days: StaleAfterDays = "auto"
    redact: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": str(self.path),
            "pattern": self.pattern,
            "exclude": list(self.exclude),
            "surface": self.surface,
            "stale_after_days": self.stale_after_days,
            "redact": self.redact,
        }


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


@dataclass(frozen=True)
class FileIssue:
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


@dataclass
class SecretsReport:
    """Secrets found in what a vault stores (``memtrove doctor``, ``memtrove redact``).

    ``documents``: bodies holding one (``refs``: up to 50 of their ``collection/path``);
    ``rows``: other stored text by table; ``kinds``: findings per kind. The secrets
    themselves are never reported. ``applied``: they were rewritten as ``[REDACTED:kind]``.
    """

    documents: int = 0
    refs: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    kinds: dict[str, int] = field(default_factory=dict)
    applied: bool = False

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


@dataclass
class UpdateReport:
    """What one ``update`` did: ``+added ~updated =unchanged -removed``, and every problem."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    renamed: int = 0
    skipped: list[FileIssue] = field(default_factory=list)
    notices: list[FileIssue] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    elapsed_seconds: float = 0.0

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
        data = asdict(self)
        data["summary"] = self.summary
        data["skipped_by_reason"] = self.skipped_by_reason
        return data


@dataclass(frozen=True)
class SearchResult:
    """One ranked document. ``score`` is in [0, 1]; higher is better.

    ``also_at`` names (``collection/path``) the other active documents with exactly this
    body: result lists show identical copies once, as their best-ranked one.
    """

    docid: str
    collection: str
    path: str
    title: str
    score: float
    snippet: str
    content_type: str
    modified_at: str
    doc_id: int = field(default=0, compare=False, repr=False)
    content: str | None = field(default=None, compare=False, repr=False)
    also_at: list[str] = field(default_factory=list, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON shape (``--json``, REST, MCP); ``content`` only when asked
        for, ``also_at`` only when the body has copies."""
        data: dict[str, Any] = {
            "docid": self.docid,
            "collection": self.collection,
            "path": self.path,
            "title": self.title,
            "score": round(self.score, 6),
            "snippet": self.snippet,
            "content_type": self.content_type,
            "modified_at": self.modified_at,
        }
        if self.content is not None:
            data["content"] = self.content
        if self.also_at:
            data["also_at"] = list(self.also_at)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SearchResult:
        """The inverse of :meth:`to_dict` (plus ``doc_id`` when present): the warm path."""
        content = data.get("content")
        return cls(
            docid=str(data["docid"]),
            collection=str(data["collection"]),
            path=str(data["path"]),
            title=str(data["title"]),
            score=float(data["score"]),
            snippet=str(data["snippet"]),
            content_type=str(data["content_type"]),
            modified_at=str(data["modified_at"]),
            doc_id=int(data.get("doc_id") or 0),
            content=None if content is None else str(content),
            also_at=[str(path) for path in data.get("also_at") or ()],
        )


class SearchResults(list[SearchResult]):
    """Ranked results (a list) plus how they were found.

    ``stages`` names the retrieval stages that ran, in order (``bm25``, ``vector``,
    ``expansion``, ``rrf``, ``rerank``, ``composite``, ``mmr``, ``bypass``); ``skipped`` maps
    each stage that did not run to the reason; ``warnings`` are worth showing a user.
    ``scale`` (hybrid only) is the best hit's own BM25 score in [0, 1) (its cosine when no
    keyword matched): the scores are normalised to a best of 1.0, and this says how strong
    that best is.
    """

    def __init__(
        self,
        results: Iterable[SearchResult] = (),
        *,
        stages: Sequence[str] = (),
        skipped: Mapping[str, str] | None = None,
        warnings: Sequence[str] = (),
        scale: float | None = None,
    ) -> None:
        super().__init__(results)
        self.stages = list(stages)
        self.skipped = dict(skipped or {})
        self.warnings = list(warnings)
        self.scale = scale

    def to_dict(self) -> dict[str, Any]:
        return {
            "results": [result.to_dict() for result in self],
            "stages": self.stages,
            "skipped": self.skipped,
            "warnings": self.warnings,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SearchResults:
        """The inverse of :meth:`to_dict`: the warm path's answers."""
        return cls(
            (SearchResult.from_dict(item) for item in data.get("results") or ()),
            stages=[str(stage) for stage in data.get("stages") or ()],
            skipped={str(k): str(v) for k, v in (data.get("skipped") or {}).items()},
            warnings=[str(warning) for warning in data.get("warnings") or ()],
        )


@dataclass(frozen=True)
class DocumentSummary:
    docid: str
    collection: str
    path: str
    title: str
    content_type: str
    modified_at: str
    confidence: float
    access_count: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Document:
    """A whole indexed document, its stored text and metadata."""

    doc_id: int
    docid: str
    collection: str
    path: str
    title: str
    hash: str
    content_type: str
    quality_score: float
    confidence: float
    pinned: bool
    snoozed_until: str | None
    created_at: str
    modified_at: str
    authored_at: str | None
    active: bool
    body: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CollectionStatus:
    name: str
    path: str
    pattern: str
    documents: int
    path_exists: bool


@dataclass(frozen=True)
class VaultStatus:
    path: str
    size_bytes: int
    schema: list[str]
    documents: int
    inactive_documents: int
    fragments: int
    collections: list[CollectionStatus]
    content_types: dict[str, int]
    last_modified_at: str | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Check:
    """One ``doctor`` finding: ``status`` is ``ok``, ``warn`` or ``fail``; ``fix`` says what to do."""

    name: str
    status: str
    detail: str
    fix: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class DoctorReport:
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


@dataclass(frozen=True)
class RerankPair:
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


@dataclass(frozen=True)
class RerankHealth:
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
    pairs: list[RerankPair] = field(default_factory=list)
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


@dataclass(frozen=True)
class TargetMatch:
    """The document a curation request (pin, snooze, forget) most likely means.

    ``method`` names the step of the cascade that found it: ``exact`` (a docid or path),
    ``bm25``, ``title`` (title words), ``vector``, or ``none``. ``confident`` is true for an
    exact reference, or when the top score is at least 0.7 or leads the second by 0.2;
    otherwise ``candidates`` are for the user to choose from and ``target`` is the best guess.
    """

    target: SearchResult | None
    confident: bool
    candidates: list[SearchResult]
    method: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target.to_dict() if self.target is not None else None,
            "confident": self.confident,
            "candidates": [candidate.to_dict() for candidate in self.candidates],
            "method": self.method,
        }


@dataclass(frozen=True)
class Timeline:
    """Documents either side of ``anchor`` in effective-time order, nearest first."""

    anchor: DocumentSummary
    before: list[DocumentSummary]
    after: list[DocumentSummary]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class MultiGet:
    """Several documents at once; ``truncated`` names (``collection/path``) the cut bodies."""

    documents: list[Document]
    errors: list[str]
    truncated: list[str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class IndexStats:
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
        return asdict(self)


@dataclass(frozen=True)
class LifecycleStatus:
    """Document counts by lifecycle state (``snoozed``: active and snoozed until later)."""

    active: int
    inactive: int
    pinned: int
    snoozed: int
    invalidated: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SessionRecord:
    """One agent session as the hooks saw it.

    ``turns`` counts its context-surfacing runs (prompts), ``injected_documents`` the distinct
    documents injected into it, ``estimated_tokens`` the tokens of everything injected.
    """

    session_id: str
    started_at: str
    last_seen_at: str
    turns: int
    injected_documents: int
    estimated_tokens: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
