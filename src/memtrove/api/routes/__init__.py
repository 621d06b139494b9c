"""The REST routes, one module per area; :data:`ROUTERS` lists them in the docs' order."""

from __future__ import annotations

from fastapi import APIRouter

from memtrove.api.routes import (
    beads,
    documents,
    enrichment,
    graph_build,
    intent,
    knowledge,
    lifecycle,
    maintenance,
    memory,
    mine,
    profile,
    search,
    status,
    warm,
)

__all__ = ["ROUTERS"]

ROUTERS: tuple[APIRouter, ...] = (
    status.router,
    search.router,
    documents.router,
    maintenance.router,
    lifecycle.router,
    memory.router,
    knowledge.router,
    intent.router,
    graph_build.router,
    enrichment.router,
    mine.router,
    profile.router,
    beads.router,
    warm.router,
)
