"""Registers ``build_graphs`` (the temporal backbone and bulk semantic edges) on the server
:mod:`memtrove.mcp.server` builds; the server, the ``call`` helper and the write annotation
are handed in."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

if TYPE_CHECKING:
    from memtrove.vault import Vault

__all__ = ["build_graphs", "register_graph_build_tools"]


def build_graphs(
    vault: Vault, graph_types: list[str], semantic_threshold: float
) -> tuple[str, dict[str, Any]]:
    report = vault.graph.build_graphs(graph_types, semantic_threshold=semantic_threshold)
    return report.text(), report.as_dict()


def register_graph_build_tools(
    server: MCPServer[Any], call: Callable[..., CallToolResult], writes: ToolAnnotations
) -> None:
    """Add ``build_graphs`` to ``server``."""

    @server.tool("build_graphs", annotations=writes)
    def build_graphs_tool(
        graph_types: Annotated[
            list[str], Field(description="Which graphs: temporal, semantic, or all.")
        ] = ["all"],  # noqa: B006 (the SDK copies defaults into the schema; never mutated)
        semantic_threshold: Annotated[
            float, Field(description="Least cosine for a semantic edge (0-1).")
        ] = 0.7,
        vault: Annotated[
            str | None,
            Field(description="A named vault. Not supported yet: the configured vault is used."),
        ] = None,
    ) -> CallToolResult:
        """Add temporal edges between documents in time order and semantic edges between
        each document and its nearest neighbours; run after bulk ingestion. Safe to rerun."""
        notes = (
            (f"note: named vaults are not supported yet; used the configured vault, not {vault!r}",)
            if vault
            else ()
        )
        return call(build_graphs, list(graph_types), semantic_threshold, notes=notes)
