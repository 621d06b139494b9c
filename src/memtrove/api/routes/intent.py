"""Intent-aware retrieval: ``POST /search/intent``, ``POST /search/plan`` and
``GET /graph/causal/{docid}``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from pydantic import Field, field_validator

from memtrove.api.routes.common import ERRORS, DocidPath, VaultDependency, reference
from memtrove.api.schemas import MAX_LIMIT, NameList, StrictModel, names, not_blank

__all__ = ["IntentRequest", "PlanRequest", "router"]

router = APIRouter(tags=["search"], responses=ERRORS)


class IntentRequest(StrictModel):
    """``POST /search/intent``."""

    query: str = Field(description="The question.", max_length=10_000)
    limit: int = Field(default=10, ge=1, le=MAX_LIMIT, description="Results.")
    force_intent: Literal["WHY", "WHEN", "ENTITY", "WHAT"] | None = Field(
        default=None, description="Skip classification and search for this intent."
    )
    enable_graph_traversal: bool = Field(
        default=True, description="Follow memory_relations edges for WHY and ENTITY."
    )
    collection: NameList = Field(default=None, description="Only these collections.")

    _not_blank = field_validator("query")(not_blank)


class PlanRequest(StrictModel):
    """``POST /search/plan``."""

    query: str = Field(description="A question that may hold several topics.", max_length=10_000)
    limit: int = Field(default=10, ge=1, le=MAX_LIMIT, description="Results.")
    collection: NameList = Field(default=None, description="Only these collections.")

    _not_blank = field_validator("query")(not_blank)


@router.post("/search/intent")
def intent_search(body: IntentRequest, vault: VaultDependency) -> dict[str, Any]:
    """``intent_search``: ``{query, intent, confidence, source, temporal_start,
    temporal_end, count, results, stages, skipped, warnings}``."""
    results = vault.intent.intent_search(
        body.query,
        body.limit,
        force_intent=body.force_intent,
        enable_graph_traversal=body.enable_graph_traversal,
        collections=names(body.collection),
    )
    return {"query": body.query, "count": len(results), **results.to_dict()}


@router.post("/search/plan")
def query_plan(body: PlanRequest, vault: VaultDependency) -> dict[str, Any]:
    """``query_plan``: ``{query, clauses, count, results (each with the indexes of the
    clauses that found it), stages, skipped, warnings}``."""
    results = vault.intent.query_plan(body.query, body.limit, collections=names(body.collection))
    return {"query": body.query, "count": len(results), **results.to_dict()}


@router.get("/graph/causal/{docid}")
def causal(
    docid: DocidPath,
    vault: VaultDependency,
    direction: Annotated[str, Query(description="causes, caused_by or both.")] = "both",
    depth: Annotated[int, Query(ge=1, le=10, description="Hops (1-10).")] = 5,
) -> dict[str, Any]:
    """The causal chain through a document: ``{docid, title, direction, depth, count, links}``."""
    return vault.intent.find_causal_links(reference(docid), direction, depth).to_dict()
