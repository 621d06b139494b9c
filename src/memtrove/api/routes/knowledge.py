"""Facts about an entity: ``GET /graph/entity/{name}``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from memtrove.api.routes.common import ERRORS, VaultDependency

__all__ = ["router"]

router = APIRouter(tags=["graph"], responses=ERRORS)


@router.get("/graph/entity/{name}")
def entity_facts(
    vault: VaultDependency,
    name: Annotated[
        str, Path(description="An entity name or its vault:type:slug id.", max_length=500)
    ],
    as_of: Annotated[
        str | None, Query(description="Only facts valid on this date (YYYY-MM-DD).")
    ] = None,
    direction: Annotated[
        str, Query(description="outgoing (the entity is the subject), incoming or both.")
    ] = "both",
) -> dict[str, Any]:
    """The subject-predicate-object facts about an entity, with validity windows and a
    ``current`` flag: ``{entity, entity_id, name, type, as_of, direction, count, facts}``
    (``entity_id`` null and no facts when no entity matches)."""
    return vault.knowledge.kg_query(name, as_of, direction).to_dict()
