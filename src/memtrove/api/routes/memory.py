"""The memory store and rule engines over REST: ``/memory/...`` and ``/rules/{kind}...``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, cast

from fastapi import APIRouter, Query, Request

from memtrove.api.memory_schemas import (
    ArchiveRequest,
    CodifyRequest,
    DedupRequest,
    ForgetEntryRequest,
    RecallRequest,
    RememberRequest,
    RuleLinkRequest,
    RuleRequest,
    RuleSignalRequest,
)
from memtrove.api.routes.common import ERRORS, VaultDependency
from memtrove.memory.queue import ExtractionQueue
from memtrove.memory.slugs import GLOBAL_STORE

__all__ = ["router"]

router = APIRouter(tags=["memory"], responses=ERRORS)
StoreQuery = Annotated[str | None, Query(description="Default: the project store.")]


def _queue(request: Request) -> ExtractionQueue:
    return cast(ExtractionQueue, request.app.state.queue)


@router.post("/memory/remember")
def remember(body: RememberRequest, vault: VaultDependency, request: Request) -> dict[str, Any]:
    """Write an entry (409 when the label exists and overwrite is false)."""
    result = vault.memory.remember(
        body.label, body.content, body.store, body.branch, body.confidence, body.overwrite
    )
    drained = _queue(request).drain(body.session_id) if body.session_id else 0
    return result.to_dict() | {"drained": drained}


@router.post("/memory/recall")
def recall(body: RecallRequest, vault: VaultDependency) -> dict[str, Any]:
    """Entries for a query; ``count: false`` searches without stamping a recall."""
    run = vault.memory.recall if body.count else vault.memory.search_entries
    return {
        "entries": [item.to_dict() for item in run(body.query, body.store, body.branch, body.limit)]
    }


@router.post("/memory/forget")
def forget(body: ForgetEntryRequest, vault: VaultDependency) -> dict[str, Any]:
    """Forget an entry (its text is kept as an earlier version)."""
    return {"forgotten": vault.memory.forget_entry(body.label, body.store).to_dict()}


@router.post("/memory/archive")
def archive(body: ArchiveRequest, vault: VaultDependency) -> dict[str, Any]:
    """Archive an entry (kept, but out of recall, duplicates, hygiene and search), or bring
    it back with ``archived: false``."""
    return {"entry": vault.memory.archive_entry(body.label, body.store, body.archived).to_dict()}


@router.get("/memory/entries")
def entries(
    vault: VaultDependency,
    store: StoreQuery = None,
    branch: str | None = None,
    include_archived: bool = False,
) -> dict[str, Any]:
    """The store's entries, newest first; archived ones only with ``include_archived``."""
    found = vault.memory.entries(store, branch, include_archived=include_archived)
    return {"entries": [entry.to_dict() for entry in found]}


@router.get("/memory/versions")
def versions(vault: VaultDependency, label: str, store: StoreQuery = None) -> dict[str, Any]:
    """Earlier texts of an entry, newest first."""
    return {
        "versions": [version.to_dict() for version in vault.memory.entry_versions(label, store)]
    }


@router.get("/memory/duplicates")
def duplicates(
    vault: VaultDependency,
    store: StoreQuery = None,
    threshold: Annotated[float, Query(gt=0.0, le=1.0)] = 0.85,
) -> dict[str, Any]:
    return vault.memory.find_duplicates(store, threshold).to_dict()


@router.post("/memory/dedup")
def dedup(body: DedupRequest, vault: VaultDependency) -> dict[str, Any]:
    first, second = vault.memory.dedup_mark_checked(
        body.label_a, body.label_b, body.status, body.store
    )
    return {
        "store": vault.memory.resolve_store(body.store),
        "slug_a": first,
        "slug_b": second,
        "status": body.status,
    }


@router.get("/memory/hygiene")
def hygiene(
    vault: VaultDependency, store: StoreQuery = None, worktree: str | None = None
) -> dict[str, Any]:
    report = vault.memory.hygiene(store, Path(worktree) if worktree else None)
    return report.to_dict() | {"lines": report.lines()}


@router.get("/memory/extraction/{session_id}")
def extraction_payload(session_id: str, vault: VaultDependency, request: Request) -> dict[str, Any]:
    """The session's queued tool calls (nothing is removed); ``payload`` null when empty."""
    return {
        "payload": _queue(request).payload(session_id, vault.memory.resolve_store(), GLOBAL_STORE)
    }


@router.post("/memory/extraction/{session_id}/done")
def extraction_done(session_id: str, request: Request) -> dict[str, Any]:
    return {"drained": _queue(request).drain(session_id)}


@router.post("/rules/{kind}")
def add_rule(kind: str, body: RuleRequest, vault: VaultDependency) -> dict[str, Any]:
    rule = vault.rules.add_rule(
        kind, body.statement, rationale=body.rationale, when=body.when, store=body.store
    )
    return rule.to_dict()


@router.get("/rules/{kind}")
def list_rules(kind: str, vault: VaultDependency, store: StoreQuery = None) -> dict[str, Any]:
    return {"rules": [rule.to_dict() for rule in vault.rules.rules(kind, store)]}


@router.post("/rules/{kind}/{item_id}/link")
def link_rule(
    kind: str, item_id: str, body: RuleLinkRequest, vault: VaultDependency
) -> dict[str, Any]:
    matcher = vault.rules.link_rule(
        kind,
        item_id,
        matcher_id=body.matcher_id,
        when=body.when,
        weight=body.weight,
        store=body.store,
    )
    return {"matcher_id": matcher, "id": item_id}


@router.post("/rules/{kind}/{item_id}/signal")
def signal_rule(
    kind: str, item_id: str, body: RuleSignalRequest, vault: VaultDependency
) -> dict[str, Any]:
    value = vault.rules.signal_rule(kind, item_id, body.signal, body.detail)
    return {
        "id": item_id,
        "confidence": value,
        "provenance": vault.rules.rule_provenance(kind, item_id),
    }


@router.post("/rules/behavior/{item_id}/codify")
def codify(
    item_id: str, vault: VaultDependency, body: CodifyRequest | None = None
) -> dict[str, Any]:
    vault.rules.codify_behavior(item_id, (body or CodifyRequest()).detail)
    return {"id": item_id, "codified": True}
