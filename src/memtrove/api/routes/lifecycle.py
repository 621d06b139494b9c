"""Archiving by the lifecycle policy: ``POST /lifecycle/sweep`` and ``POST /lifecycle/restore``
(``GET /lifecycle/status`` is with the other counts, in :mod:`.status`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import Field

from memtrove.api.routes.common import ERRORS, VaultDependency
from memtrove.api.schemas import StrictModel

__all__ = ["RestoreRequest", "SweepRequest", "router"]

router = APIRouter(prefix="/lifecycle", tags=["lifecycle"], responses=ERRORS)


class SweepRequest(StrictModel):
    """``POST /lifecycle/sweep``: a dry run unless ``dry_run`` is false."""

    dry_run: bool = Field(default=True, description="false archives; true only lists.")


class RestoreRequest(StrictModel):
    """``POST /lifecycle/restore``: which archived documents to make active again."""

    query: str | None = Field(default=None, description="Those matching this (search syntax).")
    collection: str | None = Field(default=None, description="Those of this collection.")
    all: bool = Field(default=False, description="Every archived document.")


@router.post("/sweep")
def sweep(vault: VaultDependency, body: SweepRequest | None = None) -> dict[str, Any]:
    """Documents unused past the policy: ``{dry_run: true, candidates, documents, policy}``,
    or with ``dry_run: false`` archived: ``{dry_run: false, candidates, archived, purged,
    documents, policy}``."""
    request = body or SweepRequest()
    return vault.lifecycle.sweep(apply=not request.dry_run).to_dict()


@router.post("/restore")
def restore(vault: VaultDependency, body: RestoreRequest | None = None) -> dict[str, Any]:
    """``{restored, documents}``; an empty body is a 400 (name a query, a collection or
    ``all: true``)."""
    request = body or RestoreRequest()
    return vault.lifecycle.restore(
        query=request.query, collection=request.collection, all=request.all
    ).to_dict()
