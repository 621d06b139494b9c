"""The console's graph explorer.

    /ui/graph?ref=              a document's neighbourhood, drawn (typed edges; click to
                                expand, double-click to open), and its causal chain both ways
    /ui/graph?entity=&as_of=    an entity's facts (subject, predicate, object) with their
                                validity windows, all of them or those valid on ``as_of``,
                                drawn the same way: other entities expand, literals do not
    /ui/graph.json?ref=|entity= the nodes and edges the page draws

Nodes are ``#docid`` for documents, ``entity:<id>`` for entities and ``value:<n>`` for a
fact's literal object; every label is data for the drawing library (text, never HTML).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse

from memtrove.console.app import SECURITY_HEADERS, Console, Text, json_error, names
from memtrove.errors import InvalidQueryError, MemtroveError
from memtrove.text import error_line
from memtrove.vault import Vault

__all__ = ["EDGE_TYPES", "graph_router"]

EDGE_TYPES = (
    "semantic", "causal", "temporal", "entity", "reference", "supporting", "contradicts",
    "usage", "fact",
)  # fmt: skip
CHAIN_DEPTH = 5

Day = Annotated[str, Query(max_length=10, pattern=r"^(\d{4}-\d{2}-\d{2})?$")]


def _document_data(vault: Vault, ref: str, types: list[str] | None) -> dict[str, Any]:
    nodes, edges = vault.graph.neighbourhood(ref, types)
    ids = {doc_id: f"#{summary.docid}" for doc_id, summary in nodes.items()}
    return {
        "nodes": [
            {
                "id": ids[doc_id],
                "kind": "document",
                "title": summary.title,
                "path": f"{summary.collection}/{summary.path}",
                "type": summary.content_type,
            }
            for doc_id, summary in nodes.items()
        ],
        "edges": [
            {
                "source": ids[edge.source_id],
                "target": ids[edge.target_id],
                "type": edge.relation_type,
                "label": edge.relation_type,
                "weight": round(edge.weight, 4),
            }
            for edge in edges
            if edge.source_id in ids and edge.target_id in ids
        ],
    }


def _entity_data(vault: Vault, entity: str, as_of: str | None) -> dict[str, Any]:
    found = vault.knowledge.kg_query(entity, as_of=as_of or None)
    if found.entity_id is None:
        raise InvalidQueryError(f"no entity matches {entity[:80]!r}")
    nodes: dict[str, dict[str, Any]] = {}
    edges: list[dict[str, Any]] = []

    def entity_node(node_id: str, name: str) -> str:
        key = f"entity:{node_id}"
        nodes.setdefault(key, {"id": key, "kind": "entity", "title": name, "type": "entity"})
        return key

    for fact in found.facts:
        subject = entity_node(fact.subject_id, fact.subject)
        if fact.object_id is not None:
            target = entity_node(fact.object_id, fact.object)
        else:
            target = f"value:{fact.id}"
            nodes[target] = {"id": target, "kind": "value", "title": fact.object, "type": "value"}
        window = f"{(fact.valid_from or '…')[:10]} to {(fact.valid_to or 'now')[:10]}"
        edges.append(
            {
                "source": subject,
                "target": target,
                "type": "fact",
                "label": f"{fact.predicate} ({window})",
                "weight": round(fact.confidence, 4),
                "id": f"fact:{fact.id}",
            }
        )
    return {"nodes": list(nodes.values()), "edges": edges}


def graph_router(vault: Vault, console: Console) -> APIRouter:
    """The graph pages over ``vault``."""
    router = APIRouter(include_in_schema=False)

    @router.get("/ui/graph", response_class=HTMLResponse)
    def graph_page(
        request: Request, ref: Text = "", entity: Text = "", as_of: Day = ""
    ) -> HTMLResponse:
        start = facts = chain = None
        try:
            if ref:
                start = vault.get(ref)
                chain = vault.intent.find_causal_links(f"#{start.docid}", "both", CHAIN_DEPTH)
            elif entity:
                facts = vault.knowledge.kg_query(entity, as_of=as_of or None)
        except MemtroveError as error:
            return console.error_page(request, error, "graph")
        return console.page(
            request,
            "graph.html",
            "graph",
            start=start,
            ref=ref,
            entity=entity,
            as_of=as_of,
            facts=facts,
            chain=chain,
            edge_types=EDGE_TYPES,
        )

    @router.get("/ui/graph.json")
    def graph_data(
        ref: Text = "", entity: Text = "", as_of: Day = "", types: Text = ""
    ) -> JSONResponse:
        wanted = names(types)
        try:
            if ref:
                data = _document_data(vault, ref, wanted)
            elif entity:
                data = _entity_data(vault, entity, as_of)
            else:
                raise InvalidQueryError("name a document (ref) or an entity")
        except MemtroveError as error:
            return json_error(error.status, error_line(str(error)))
        return JSONResponse(data, headers=SECURITY_HEADERS)

    return router
