"""Request bodies of the memory-store and rule routes (strict, like every body)."""

from __future__ import annotations

from pydantic import Field

from memtrove.api.schemas import MAX_LIMIT, StrictModel

__all__ = [
    "ArchiveRequest",
    "CodifyRequest",
    "DedupRequest",
    "ForgetEntryRequest",
    "RecallRequest",
    "RememberRequest",
    "RuleLinkRequest",
    "RuleRequest",
    "RuleSignalRequest",
]


class RememberRequest(StrictModel):
    label: str = Field(description="The entry's label (its slug is the key).")
    content: str = Field(description="What to remember.")
    store: str | None = Field(default=None, description="Default: the server's project store.")
    branch: str | None = Field(default=None, description="Scope to a git branch.")
    confidence: int | None = Field(default=None, ge=1, le=10, description="How sure, 1-10.")
    overwrite: bool = Field(default=False, description="Replace an existing entry.")
    session_id: str | None = Field(default=None, description="Clear this session's queue.")


class RecallRequest(StrictModel):
    query: str
    store: str | None = None
    branch: str | None = None
    limit: int = Field(default=10, ge=1, le=MAX_LIMIT)
    count: bool = Field(default=True, description="false searches without counting a recall.")


class ForgetEntryRequest(StrictModel):
    label: str
    store: str | None = None


class ArchiveRequest(StrictModel):
    label: str
    store: str | None = None
    archived: bool = Field(default=True, description="false brings an archived entry back.")


class DedupRequest(StrictModel):
    label_a: str
    label_b: str
    status: str = Field(description="duplicate, supplement, contradiction or unrelated.")
    store: str | None = None


class RuleRequest(StrictModel):
    statement: str
    rationale: str | None = None
    when: list[str] = Field(default_factory=list, description="Situations it applies in.")
    store: str | None = None


class RuleLinkRequest(StrictModel):
    matcher_id: str | None = None
    when: str | None = None
    weight: float = Field(default=1.0, gt=0.0, le=1.0)
    store: str | None = None


class RuleSignalRequest(StrictModel):
    signal: str = Field(description="confirm, disconfirm or soft (a quarter confirmation).")
    detail: str | None = None


class CodifyRequest(StrictModel):
    detail: str | None = None
