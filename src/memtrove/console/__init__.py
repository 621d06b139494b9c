"""The web console ``memtrove serve`` answers at ``/``: search with each score explained,
documents (safe rendered text, relations, evolution; pin, snooze, forget), sessions and
the audit of what each prompt was injected, the graph explorer and the health page.

Server-rendered Jinja2 templates with two small scripts and a bundled graph library
(Cytoscape.js, MIT): everything ships in the package and works offline; see
:mod:`memtrove.console.app` for the security headers and CSRF.
"""

from __future__ import annotations

from fastapi import APIRouter

from memtrove.console.actions import action_router
from memtrove.console.app import Console, asset_router
from memtrove.console.document import document_router
from memtrove.console.graph import graph_router
from memtrove.console.login import login_router
from memtrove.console.pages import page_router
from memtrove.console.upkeep import upkeep_router
from memtrove.vault import Vault

__all__ = ["console_router"]


def console_router(vault: Vault, token: str | None = None) -> APIRouter:
    """Every console route over ``vault``: pages, assets, actions and the login that
    checks ``token`` (the server's, when it has one)."""
    console = Console()
    router = APIRouter(include_in_schema=False)
    router.include_router(asset_router())
    router.include_router(login_router(console, token))
    router.include_router(page_router(vault, console))
    router.include_router(graph_router(vault, console))
    router.include_router(document_router(vault, console))
    router.include_router(upkeep_router(vault, console))
    router.include_router(action_router(vault, console))
    return router
