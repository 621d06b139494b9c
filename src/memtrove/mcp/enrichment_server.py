"""Registers ``memory_evolution_status`` (how A-MEM changed a document's note) on the
server :mod:`memtrove.mcp.server` builds; the server, the ``call`` helper and the
read-only annotation are handed in."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

if TYPE_CHECKING:
    from memtrove.vault import Vault

__all__ = ["memory_evolution_status", "register_enrichment_tools"]


def memory_evolution_status(vault: Vault, docid: str, limit: int) -> tuple[str, dict[str, Any]]:
    status = vault.enrichment.memory_evolution(docid, limit)
    return status.text(), status.to_dict()


def register_enrichment_tools(
    server: MCPServer[Any], call: Callable[..., CallToolResult], read_only: ToolAnnotations
) -> None:
    """Add ``memory_evolution_status`` to ``server``."""

    @server.tool("memory_evolution_status", annotations=read_only)
    def memory_evolution_status_tool(
        docid: Annotated[str, Field(description="#docid, docid or collection/path.")],
        limit: Annotated[int, Field(description="Most changes to return (1-100).")] = 10,
        vault: Annotated[
            str | None,
            Field(description="A named vault. Not supported yet: the configured vault is used."),
        ] = None,
    ) -> CallToolResult:
        """How A-MEM enrichment changed a document's keywords and context (newest first),
        which newer document caused each change, and why."""
        notes = (
            (f"note: named vaults are not supported yet; used the configured vault, not {vault!r}",)
            if vault
            else ()
        )
        return call(memory_evolution_status, docid, limit, notes=notes)
