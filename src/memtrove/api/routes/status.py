"""The vault's state: health, statistics, collections, sessions and lifecycle counts."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from memtrove import __version__
from memtrove.api import plugin_fields
from memtrove.api.routes.common import ERRORS, VaultDependency
from memtrove.api.schemas import MAX_LIMIT

__all__ = ["router"]

router = APIRouter(tags=["status"], responses=ERRORS)


@router.get("/health")
def health(vault: VaultDependency) -> dict[str, Any]:
    """Liveness plus the counts an agent checks first: documents and pending embeddings."""
    stats = vault.documents.index_stats()
    return plugin_fields.health(
        {
            "status": "ok",
            "service": "memtrove",
            "version": __version__,
            "vault": vault.location,
            "documents": stats.documents,
            "needs_embedding": stats.pending_embeds,
            "has_vectors": stats.vectors > 0,
        }
    )


@router.get("/stats")
def stats(vault: VaultDependency) -> dict[str, Any]:
    """``memtrove status`` (vault size, schema, documents, fragments, collections, content
    types) plus the index's ``health``: embeddings pending or failed, stale documents."""
    return {**vault.status().to_dict(), "health": vault.documents.index_stats().to_dict()}


@router.get("/collections")
def collections(vault: VaultDependency) -> dict[str, Any]:
    """Every configured collection: name, path, pattern, documents, whether its folder exists."""
    found = vault.status().collections
    return {"count": len(found), "collections": [item._asdict() for item in found]}


@router.get("/sessions")
def sessions(
    vault: VaultDependency,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="How many.")] = 10,
) -> dict[str, Any]:
    """The most recent agent sessions: turns, documents injected, tokens estimated."""
    found = vault.sessions.session_log(limit)
    return {
        "count": len(found),
        "sessions": [plugin_fields.session(session.to_dict()) for session in found],
    }


@router.get("/lifecycle/status")
def lifecycle_status(vault: VaultDependency) -> dict[str, Any]:
    """Documents by lifecycle state: active, inactive, pinned, snoozed, invalidated."""
    return vault.lifecycle.status().to_dict()
