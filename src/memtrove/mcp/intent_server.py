"""Registers the intent-aware tools (``intent_search``, ``find_causal_links``,
``query_plan``) on the server :mod:`memtrove.mcp.server` builds; imported only when serving."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field, StrictBool

from memtrove.mcp import intent_tools

__all__ = ["register_intent_tools"]

Query = Annotated[str, Field(description="What to look for.")]
Limit = Annotated[int, Field(description="Most results to return (1-1000).")]
VaultName = Annotated[
    str | None,
    Field(description="A named vault. Not supported yet: the configured vault is used."),
]


def register_intent_tools(
    server: MCPServer[Any],
    call: Callable[..., CallToolResult],
    read_only: ToolAnnotations,
    vault_notes: Callable[[str | None], tuple[str, ...]],
) -> None:
    """Add the intent-aware tools to ``server``."""

    @server.tool(annotations=read_only)
    def intent_search(
        query: Query,
        limit: Limit = 10,
        force_intent: Annotated[
            str | None, Field(description="WHY, WHEN, ENTITY or WHAT (default: classified).")
        ] = None,
        enable_graph_traversal: Annotated[
            StrictBool, Field(description="Follow memory_relations edges for WHY and ENTITY.")
        ] = True,
        vault: VaultName = None,
    ) -> CallToolResult:
        """Why/when/who questions: classifies the intent, then searches with intent-weighted
        fusion and, for WHY and ENTITY, graph traversal across linked documents."""
        return call(
            intent_tools.intent_search,
            query,
            limit,
            force_intent,
            enable_graph_traversal,
            notes=vault_notes(vault),
        )

    @server.tool(annotations=read_only)
    def find_causal_links(
        docid: Annotated[str, Field(description="#docid, docid, or collection/path.")],
        direction: Annotated[
            str, Field(description="causes (what it led to), caused_by, or both.")
        ] = "both",
        depth: Annotated[int, Field(description="Hops to follow (1-10).")] = 5,
        vault: VaultName = None,
    ) -> CallToolResult:
        """Walk the causal edges through a document (use after intent_search)."""
        return call(
            intent_tools.find_causal_links, docid, direction, depth, notes=vault_notes(vault)
        )

    @server.tool(annotations=read_only)
    def query_plan(
        query: Query,
        limit: Limit = 10,
        compact: Annotated[StrictBool, Field(description="Summary lines only.")] = True,
        vault: VaultName = None,
    ) -> CallToolResult:
        """Multi-topic questions: split into sub-queries, run each, merge with provenance."""
        return call(intent_tools.query_plan, query, limit, compact, notes=vault_notes(vault))
