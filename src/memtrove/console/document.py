"""The console's document page (``GET /ui/doc?ref=``, HTML): the text rendered as safe
markdown (:mod:`memtrove.console.safe`), its metadata, relations in and out, the entities it
names with their current facts, the A-MEM note's evolution, and its recall history (each
injection, its session, and whether the reply used it). A folder's document links to its
file. A forgotten or archived document is shown too, marked inactive, with a restore
button. The changes it offers are :mod:`memtrove.console.actions`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from memtrove.console.app import Console, Text
from memtrove.console.safe import render_markdown
from memtrove.errors import MemtroveError
from memtrove.index.types import CONTENT_TYPES
from memtrove.results import Document
from memtrove.vault import Vault

if TYPE_CHECKING:
    from memtrove.graph.entity_resolution import Entity
    from memtrove.graph.triples import KnowledgeFact

__all__ = ["RECALL_ROWS", "document_router"]

RECALL_ROWS = 50  # injections listed, newest first


def _entities(vault: Vault, ref: str) -> list[tuple[Entity, list[KnowledgeFact]]]:
    """The entities the document names, each with its current facts."""
    return [
        (
            entity,
            [fact for fact in vault.knowledge.kg_query(entity.entity_id).facts if fact.current],
        )
        for entity in vault.knowledge.document_entities(ref)
    ]


def _file_link(vault: Vault, document: Document) -> str | None:
    """A ``file://`` link to a folder document's file; None for an internal collection or
    a collection no longer configured."""
    if document.collection.startswith("_"):
        return None
    try:
        folders = {collection.name: collection.path for collection in vault.collections()}
    except MemtroveError:  # an unreadable config.yaml: the page goes without the link
        return None
    folder = folders.get(document.collection)
    if folder is None:
        return None
    return (Path(folder).expanduser().absolute() / document.path).as_uri()


def document_router(vault: Vault, console: Console) -> APIRouter:
    """The document page over ``vault``."""
    router = APIRouter(include_in_schema=False)

    @router.get("/ui/doc", response_class=HTMLResponse)
    def document_page(request: Request, ref: Text) -> HTMLResponse:
        try:
            document = vault.get(ref, include_inactive=True)
            here = f"#{document.docid}"
            nodes, edges = vault.graph.neighbourhood(here) if document.active else ({}, [])
            evolution = vault.enrichment.memory_evolution(here) if document.active else None
            entities = _entities(vault, here) if document.active else None
            recalls = vault.sessions.recall_history(here, RECALL_ROWS)
        except MemtroveError as error:
            return console.error_page(request, error, "search")
        body, cut = render_markdown(document.body)
        return console.page(
            request,
            "document.html",
            "search",
            document=document,
            ref=here,
            body=body,
            cut=cut,
            nodes=nodes,
            edges=edges,
            evolution=evolution,
            entities=entities,
            recalls=recalls,
            file_link=_file_link(vault, document),
            types=CONTENT_TYPES,
        )

    return router
