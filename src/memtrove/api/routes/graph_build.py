"""Building the graphs in bulk: ``POST /graphs/build``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import Field

from memtrove.api.routes.common import ERRORS, VaultDependency
from memtrove.api.schemas import StrictModel

__all__ = ["GraphBuildRequest", "router"]

router = APIRouter(tags=["graph"], responses=ERRORS)


class GraphBuildRequest(StrictModel):
    """``POST /graphs/build``: which graphs to build. ``temporal`` / ``semantic`` switch one
    off (both on by default); ``graph_types`` (temporal, semantic, all), when given, wins."""

    temporal: bool = Field(default=True, description="Build the temporal backbone.")
    semantic: bool = Field(default=True, description="Build semantic kNN edges.")
    graph_types: list[str] | None = Field(
        default=None, max_length=10, description="temporal, semantic or all (wins if given)."
    )
    semantic_threshold: float = Field(
        default=0.7, ge=0.0, le=1.0, description="Least cosine for a semantic edge."
    )


@router.post("/graphs/build")
def build_graphs(vault: VaultDependency, body: GraphBuildRequest | None = None) -> dict[str, Any]:
    """Add the temporal backbone (documents in time order) and semantic edges between each
    document and its nearest neighbours; safe to rerun. Answers the new edges and totals:
    ``{temporal, temporalTotal, semantic, semanticTotal, documents, notes}`` (a graph not
    built is left out)."""
    request = body or GraphBuildRequest()
    if request.graph_types is not None:  # given, it wins: [] is refused as over MCP
        return vault.graph.build_graphs(
            request.graph_types, semantic_threshold=request.semantic_threshold
        ).as_dict()
    kinds = [
        kind for kind, on in (("temporal", request.temporal), ("semantic", request.semantic)) if on
    ]
    if not kinds:
        return {"documents": 0, "notes": ["nothing to build: temporal and semantic are off"]}
    report = vault.graph.build_graphs(kinds, semantic_threshold=request.semantic_threshold)
    return report.as_dict()
