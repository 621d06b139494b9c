"""The values memtrove's operations return: immutable records, JSON-ready.

They are named tuples rather than dataclasses: ``memtrove search`` starts a process per query,
and building dataclasses (and importing :mod:`dataclasses`, which imports :mod:`inspect`) is
about a quarter of that process's time. ``_replace`` makes a changed copy; ``to_dict`` is the
JSON shape.
"""

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

__all__ = [
    "Collection",
    "Document",
    "DocumentSummary",
    "SearchResult",
    "SearchResults",
    "SessionRecord",
    "StaleAfterDays",
    "TargetMatch",
]


StaleAfterDays = int | Literal["auto"] | None
"""A collection's staleness threshold: days, ``"auto"`` (the default rule), None (never)."""


class Collection(NamedTuple):
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


class SearchResult(NamedTuple):
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
    doc_id: int = 0
    content: str | None = None
    also_at: tuple[str, ...] = ()

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
    def from_dict(cls, data: Mapping[str, Any]) -> "SearchResult":
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
            also_at=tuple(str(path) for path in data.get("also_at") or ()),
        )


_FUSED_STAGES = frozenset({"fusion", "rrf", "merge"})


def score_basis(stages: Sequence[str]) -> str | None:
    """What the scores of an answer whose stages were ``stages`` are (``scoreBasis``)."""
    ran = set(stages)
    if "composite" in ran:
        return "composite"
    if ran & _FUSED_STAGES or {"bm25", "vector"} <= ran:
        return "fused"
    if "bm25" in ran:
        return "fts-bm25"
    if "vector" in ran:
        return "vector-cosine"
    if ran & {"recent", "timeline"}:
        return "recency"
    return None


class SearchResults(list[SearchResult]):
    """Ranked results (a list) plus how they were found.

    ``stages`` names the retrieval stages that ran, in order (``bm25``, ``vector``,
    ``expansion``, ``rrf``, ``rerank``, ``composite``, ``mmr``, ``bypass``); ``skipped`` maps
    each stage that did not run to the reason; ``warnings`` are worth showing a user.
    ``scale`` (hybrid only) is the best hit's own BM25 score in [0, 1) (its cosine when no
    keyword matched): the scores are normalised to a best of 1.0, and this says how strong
    that best is.

    ``degraded_reason`` (None: a whole answer) says why the answer is less than asked for:
    ``leg-failed`` (a leg asked for failed at run time: ``degraded_legs`` names them),
    ``min-score`` (fewer than ``limit`` because hits scored under ``min_score``),
    ``excluded-dominant`` (internal documents left out after fetching left it short),
    ``cap-truncation`` (copies of one body collapsed left it short at the fetch cap);
    several reasons are joined by ``,``. ``to_dict`` gives them as ``degraded``,
    ``degradedReason`` and ``degradedLegs``.

    ``score_basis`` (``scoreBasis``) says what the scores are, read from the stages:
    ``composite`` (composite scoring ranked them), ``fused`` (BM25 and cosine fused, best =
    1.0), ``fts-bm25`` (``|bm25| / (1 + |bm25|)`` alone), ``vector-cosine`` (the best
    fragment's cosine alone), ``recency`` (newest first), None when nothing ran.
    """

    def __init__(
        self,
        results: Iterable[SearchResult] = (),
        *,
        stages: Sequence[str] = (),
        skipped: Mapping[str, str] | None = None,
        warnings: Sequence[str] = (),
        scale: float | None = None,
        degraded_reason: str | None = None,
        degraded_legs: Sequence[str] = (),
    ) -> None:
        super().__init__(results)
        self.stages = list(stages)
        self.skipped = dict(skipped or {})
        self.warnings = list(warnings)
        self.scale = scale
        self.degraded_reason = degraded_reason or None
        self.degraded_legs = list(degraded_legs)

    @property
    def degraded(self) -> bool:
        return self.degraded_reason is not None

    @property
    def score_basis(self) -> str | None:
        return score_basis(self.stages)

    def how(self) -> dict[str, Any]:
        """How the results were found (every key of :meth:`to_dict` but ``results``)."""
        return {
            "stages": self.stages,
            "skipped": self.skipped,
            "warnings": self.warnings,
            "scoreBasis": self.score_basis,
            "degraded": self.degraded,
            "degradedReason": self.degraded_reason,
            "degradedLegs": self.degraded_legs,
        }

    def to_dict(self) -> dict[str, Any]:
        return {"results": [result.to_dict() for result in self], **self.how()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "SearchResults":
        """The inverse of :meth:`to_dict`: the warm path's answers."""
        return cls(
            (SearchResult.from_dict(item) for item in data.get("results") or ()),
            stages=[str(stage) for stage in data.get("stages") or ()],
            skipped={str(k): str(v) for k, v in (data.get("skipped") or {}).items()},
            warnings=[str(warning) for warning in data.get("warnings") or ()],
            degraded_reason=str(data.get("degradedReason") or "") or None,
            degraded_legs=[str(leg) for leg in data.get("degradedLegs") or ()],
        )


class DocumentSummary(NamedTuple):
    docid: str
    collection: str
    path: str
    title: str
    content_type: str
    modified_at: str
    confidence: float
    access_count: int

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


class Document(NamedTuple):
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
    review_by: str | None = None  # frontmatter: YYYY-MM-DD, due for review from that day
    domain: str | None = None  # frontmatter: the area of knowledge
    workstream: str | None = None  # frontmatter: the line of work

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


class TargetMatch(NamedTuple):
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


class SessionRecord(NamedTuple):
    """One agent session as the hooks saw it.

    ``turns`` counts its context-surfacing runs (prompts), ``injected_documents`` the distinct
    documents injected into it, ``estimated_tokens`` the tokens of everything injected. Once
    ``handoff-generator`` has run: ``handoff_path`` (vault path of its handoff document),
    ``summary``, ``files_changed`` and ``ended_at``.
    """

    session_id: str
    started_at: str
    last_seen_at: str
    turns: int
    injected_documents: int
    estimated_tokens: int
    handoff_path: str | None = None
    summary: str | None = None
    files_changed: tuple[str, ...] = ()
    ended_at: str | None = None
    machine: str | None = None  # the host the session ran on (session-start records it)

    def to_dict(self) -> dict[str, Any]:
        return {**self._asdict(), "files_changed": list(self.files_changed)}
