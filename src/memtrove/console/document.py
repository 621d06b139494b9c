"""The console's document page (``GET /ui/doc?ref=``, HTML): the text rendered as safe
markdown (:mod:`memtrove.console.safe`), its metadata, relations in and out and the A-MEM
note's evolution; a forgotten or archived document is shown too, marked inactive. The
changes it offers are :mod:`memtrove.console.actions`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from memtrove.console.app import Console
from memtrove.console.safe import render_markdown
from memtrove.errors import MemtroveError
from memtrove.index.types import CONTENT_TYPES
from memtrove.vault import Vault

__all__ = ["document_router"]

Text = Annotated[str, Query(max_length=2000)]


def document_router(vault: Vault, console: Console) -> APIRouter:
    """The document page over ``vault``."""
    router = APIRouter(include_in_schema=False)

    @router.get("/ui/doc", response_class=HTMLResponse)
    def document_page(request: Request, ref: Text) -> HTMLResponse:
        try:
            document = vault.get(ref, include_inactive=True)
            nodes, edges = vault.neighbourhood(ref) if document.active else ({}, [])
            evolution = vault.memory_evolution(ref) if document.active else None
        except MemtroveError as error:
            return console.error_page(request, error, "search")
        body, cut = render_markdown(document.body)
        return console.page(
            request,
            "document.html",
            "search",
            document=document,
            ref=f"#{document.docid}",
            body=body,
            cut=cut,
            nodes=nodes,
            edges=edges,
            evolution=evolution,
            types=CONTENT_TYPES,
        )

    return router
