"""Registers ``lifecycle_sweep`` (archive by the ``config.yaml`` policy; a dry run unless
told) and ``lifecycle_restore`` (un-archive by query, collection or all) on the server
:mod:`memtrove.mcp.server` builds; the server, the ``call`` helper and the annotation for
tools that write are handed in."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field, StrictBool

if TYPE_CHECKING:
    from memtrove.vault import Vault

__all__ = ["lifecycle_restore", "lifecycle_sweep", "register_lifecycle_tools"]

VaultName = Annotated[
    str | None,
    Field(description="A named vault. Not supported yet: the configured vault is used."),
]


def lifecycle_sweep(vault: Vault, dry_run: bool) -> tuple[str, dict[str, Any]]:
    if not isinstance(dry_run, bool):
        from memtrove.errors import InvalidQueryError

        raise InvalidQueryError("dry_run must be true or false")
    report = vault.lifecycle.sweep(apply=not dry_run)
    return report.text(), report.to_dict()


def lifecycle_restore(
    vault: Vault, query: str | None, collection: str | None, every: bool
) -> tuple[str, dict[str, Any]]:
    report = vault.lifecycle.restore(query=query, collection=collection, all=every)
    return report.text(), report.to_dict()


def _notes(vault: str | None) -> tuple[str, ...]:
    if not vault:
        return ()
    return (f"note: named vaults are not supported yet; used the configured vault, not {vault!r}",)


def register_lifecycle_tools(
    server: MCPServer[Any], call: Callable[..., CallToolResult], writes: ToolAnnotations
) -> None:
    """Add ``lifecycle_sweep`` and ``lifecycle_restore`` to ``server``."""

    @server.tool("lifecycle_sweep", annotations=writes)
    def lifecycle_sweep_tool(
        dry_run: Annotated[
            StrictBool,
            Field(description="true (default) lists what would be archived; false archives."),
        ] = True,
        vault: VaultName = None,
    ) -> CallToolResult:
        """Archive documents unused past the lifecycle policy (never pinned or durable types);
        archived documents leave search and come back intact with lifecycle_restore."""
        return call(lifecycle_sweep, dry_run, notes=_notes(vault))

    @server.tool("lifecycle_restore", annotations=writes)
    def lifecycle_restore_tool(
        query: Annotated[
            str | None, Field(description="Restore the archived documents matching this.")
        ] = None,
        collection: Annotated[
            str | None, Field(description="Restore the archived documents of this collection.")
        ] = None,
        all: Annotated[StrictBool, Field(description="Restore every archived document.")] = False,
        vault: VaultName = None,
    ) -> CallToolResult:
        """Make archived documents active and searchable again (query, collection, or all)."""
        return call(lifecycle_restore, query, collection, all, notes=_notes(vault))
