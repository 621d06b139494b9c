"""Registers ``beads_sync`` (a project's Beads issues into the vault) on the server
:mod:`memtrove.mcp.server` builds; the server, the ``call`` helper and the annotation are
handed in. Like the reference's, the tool takes no ``vault`` argument."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

if TYPE_CHECKING:
    from memtrove.vault import Vault

__all__ = ["beads_sync", "register_beads_tools"]


def beads_sync(vault: Vault, project_path: str | None) -> tuple[str, dict[str, Any]]:
    """Sync the project's Beads issues: a one-line summary and the report's fields."""
    from memtrove.vault.beads import beads_area

    report = beads_area(vault).sync(project_path)
    return f"Beads synced from {report.project}: {report.summary()}", report.to_dict()


def register_beads_tools(
    server: MCPServer[Any], call: Callable[..., CallToolResult], writes: ToolAnnotations
) -> None:
    """Add ``beads_sync`` to ``server``."""

    @server.tool("beads_sync", annotations=writes)
    def beads_sync_tool(
        project_path: Annotated[
            str | None,
            Field(
                description="The project folder holding .beads/ (default: the working directory)."
            ),
        ] = None,
    ) -> CallToolResult:
        """Bring a project's Beads issues (`bd list --json`) into memory: one document per
        issue, and causal (blocks), supporting (discovered-from) and semantic (relates-to)
        edges between them, so searches and intent_search find them."""
        return call(beads_sync, project_path)
