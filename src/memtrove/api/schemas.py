"""Request bodies of the REST API, and the shapes OpenAPI documents for its answers.

Every body model forbids unknown fields (a misspelt option is a 422, never silently
ignored) and is strict: ``"10"`` is not a number and ``1`` is not ``true``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memtrove.text import scrub_json

__all__ = [
    "MAX_LIMIT",
    "ErrorBody",
    "ForgetRequest",
    "PinRequest",
    "ReindexRequest",
    "SearchMode",
    "SearchRequest",
    "SearchResponse",
    "SnoozeRequest",
    "WarmHookRequest",
    "WarmSearchRequest",
    "names",
]

# One cap for every `limit` (search, retrieve, similar, sessions, documents): the same as the
# product the API mirrors, and plenty for an agent's context window.
MAX_LIMIT = 50

SearchMode = Literal[
    "auto", "keyword", "semantic", "hybrid", "query", "causal", "timeline", "discovery", "complex"
]
NameList = str | list[str] | None


class StrictModel(BaseModel):
    """A request body: unknown fields and loose types are refused; lone surrogates in its
    text (``\\ud800`` escapes) become U+FFFD, so the text can be stored and sent back."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @field_validator("*", mode="before")  # before the checks: a length check refuses them
    @classmethod
    def _scrub(cls, value: Any) -> Any:
        return scrub_json(value)


def not_blank(value: str) -> str:
    """The ``query`` check of the search bodies: a blank query is refused."""
    if not value.strip():
        raise ValueError("the query must not be blank")
    return value


class SearchRequest(StrictModel):
    """``POST /search`` and ``POST /retrieve``."""

    query: str = Field(description="What to look for.")
    mode: SearchMode = Field(
        default="auto",
        description=(
            "keyword (BM25), semantic (vectors), hybrid (score fusion, no model server), "
            "query (the full pipeline), causal (intent_search WHY), timeline (WHEN), "
            "discovery (graph traversal), complex (query_plan) or auto: /search picks keyword "
            "for up to 3 words and hybrid above; /retrieve picks query."
        ),
    )
    collection: NameList = Field(
        default=None, description="Only these collections: a list or a comma-separated string."
    )
    content_type: NameList = Field(
        default=None, description="Only these content types: a list or a comma-separated string."
    )
    since: str | None = Field(default=None, description="Authored/modified on or after (ISO date).")
    until: str | None = Field(
        default=None, description="Authored/modified on or before (ISO date)."
    )
    min_score: float = Field(default=0.0, ge=0.0, le=1.0, description="Drop results scoring below.")
    intent: str | None = Field(default=None, description="What the query is for (mode query only).")
    compact: bool = Field(default=True, description="false adds each document's stored text.")
    limit: int = Field(
        default=10, ge=1, le=MAX_LIMIT, description=f"Results (at most {MAX_LIMIT})."
    )

    _not_blank = field_validator("query")(not_blank)


class PinRequest(StrictModel):
    """``POST /documents/{docid}/pin``; an empty body pins."""

    unpin: bool = Field(default=False, description="true removes the pin.")


class SnoozeRequest(StrictModel):
    """``POST /documents/{docid}/snooze``; an empty body snoozes for 30 days."""

    until: str | None = Field(
        default=None, description="ISO date or datetime (a bare date: the end of that day, UTC)."
    )
    unsnooze: bool = Field(
        default=False, description="true ends the snooze (then leave out until)."
    )


class ForgetRequest(StrictModel):
    """``POST /documents/{docid}/forget`` takes no options; the body may be empty or ``{}``."""


class ReindexRequest(StrictModel):
    """``POST /reindex``: re-scan collections (all by default) and index what changed."""

    collection: NameList = Field(
        default=None, description="Only these collections: a list or a comma-separated string."
    )
    embed: bool = Field(default=False, description="Then embed what is new or changed.")


class ErrorBody(BaseModel):
    """Every error answer: one line, fit to show a user."""

    error: str


class SearchResponse(BaseModel):
    """The answer of ``POST /search`` and ``POST /retrieve``."""

    query: str
    mode: str = Field(description="The mode that ran (auto resolved).")
    count: int
    results: list[dict[str, Any]] = Field(
        description=(
            "{docid, collection, path, title, score, snippet, content_type, modified_at}, "
            "plus content when compact is false; contentType, modifiedAt (and body) repeat "
            "them under the names ClawMem's host plugins read."
        )
    )
    stages: list[str]
    skipped: dict[str, str]
    warnings: list[str]
    scoreBasis: str | None = Field(
        default=None,
        description=(
            "What the scores are: composite, fused (BM25 and cosine, best = 1.0), "
            "fts-bm25: BM25 alone, squashed into [0, 1), vector-cosine or recency."
        ),
    )
    degraded: bool = Field(
        default=False, description="true when a leg failed or results were dropped."
    )
    degradedReason: str | None = Field(
        default=None,
        description=(
            "Why, comma-separated: leg-failed, min-score, excluded-dominant, cap-truncation."
        ),
    )
    degradedLegs: list[str] = Field(
        default_factory=list, description="The legs that failed (vector, rerank, expansion)."
    )
    untrusted: bool = Field(
        default=True, description="Always true: every stored text in the answer is data."
    )


def names(value: NameList) -> list[str] | None:
    """A list or comma-separated string of names, cleaned; None when it names nothing."""
    items = value if isinstance(value, list) else [value or ""]
    cleaned = [name.strip() for item in items for name in item.split(",") if name.strip()]
    return cleaned or None


class WarmHookRequest(StrictModel):
    """``POST /warm/hook/{name}``: what ``memtrove hook NAME`` read, for the warm path."""

    payload: str = Field(description="The hook's stdin, base64-encoded.")
    env: dict[str, str] = Field(
        default_factory=dict, description="The hook's MEMTROVE_*/XDG_*/HOME settings."
    )


class WarmSearchRequest(StrictModel):
    """``POST /warm/{method}``: a CLI search with the CLI's own arguments and limits."""

    query: str
    env: dict[str, str] = Field(default_factory=dict)
    limit: int = Field(default=10, ge=1, le=1000)
    collections: list[str] | None = None
    content_types: list[str] | None = None
    since: str | None = None
    until: str | None = None
    min_score: float = Field(default=0.0, ge=0.0, le=1.0)
    intent: str | None = None
    compact: bool | None = None
    diverse: bool | None = None
    candidate_limit: int | None = Field(default=None, ge=1, le=1000)
