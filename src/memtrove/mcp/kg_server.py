"""Registers ``kg_query`` (facts about an entity) on the server :mod:`memtrove.mcp.server`
builds; the server, the ``call`` helper and the read-only annotation are handed in."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

if TYPE_CHECKING:
    from memtrove.vault import Vault

__all__ = ["kg_query", "register_kg_tools"]


def kg_query(
    vault: Vault, entity: str, as_of: str | None, direction: str
) -> tuple[str, dict[str, Any]]:
    result = vault.knowledge.kg_query(entity, as_of, direction)
    return result.text(), result.to_dict()


def register_kg_tools(
    server: MCPServer[Any], call: Callable[..., CallToolResult], read_only: ToolAnnotations
) -> None:
    """Add ``kg_query`` to ``server``."""

    @server.tool("kg_query", annotations=read_only)
    def kg_query_tool(
        entity: Annotated[str, Field(description="An entity name or its vault:type:slug id.")],
        as_of: Annotated[
            str | None, Field(description="Only facts valid on this date (YYYY-MM-DD).")
        ] = None,
        direction: Annotated[
            str, Field(description="outgoing (entity is the subject), incoming, or both.")
        ] = "both",
        vault: Annotated[
            str | None,
            Field(description="A named vault. Not supported yet: the configured vault is used."),
        ] = None,
    ) -> CallToolResult:
        """Structured facts (subject predicate object, with validity windows) about an
        entity: what it uses, runs on, depends on, was replaced by; as_of for history."""
        notes = (
            (f"note: named vaults are not supported yet; used the configured vault, not {vault!r}",)
            if vault
            else ()
        )
        return call(kg_query, entity, as_of, direction, notes=notes)
