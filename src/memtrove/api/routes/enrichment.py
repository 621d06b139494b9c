"""How A-MEM changed a document's note: ``GET /graph/evolution/{docid}``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from memtrove.api.routes.common import ERRORS, DocidPath, VaultDependency, reference

__all__ = ["router"]

router = APIRouter(tags=["graph"], responses=ERRORS)


@router.get("/graph/evolution/{docid}")
def evolution(
    vault: VaultDependency,
    docid: DocidPath,
    limit: Annotated[int, Query(description="Most changes to return (1-100).")] = 10,
) -> dict[str, Any]:
    """A document's note changes, newest first: ``{docid, title, keywords, context, count,
    evolution: [{version, triggered_by, triggered_by_title, previous_keywords, new_keywords,
    previous_context, new_context, reasoning, created_at}]}``."""
    return vault.enrichment.memory_evolution(reference(docid), limit).to_dict()
