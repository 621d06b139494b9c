"""Registers ``profile`` (show or rebuild the user profile) on the server
:mod:`memtrove.mcp.server` builds; the server, the ``call`` helper and the annotation are
handed in. Like the reference's, the tool takes no ``vault`` argument."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field, StrictBool

if TYPE_CHECKING:
    from memtrove.vault import Vault

__all__ = ["profile", "register_profile_tools"]


def profile(vault: Vault, rebuild: bool) -> tuple[str, dict[str, Any]]:
    """The user profile (rebuilt first with ``rebuild``): its text and its fields."""
    from memtrove.vault.profile import profile_area

    area = profile_area(vault)
    found = area.rebuild() if rebuild else area.show()
    return found.text(), found.to_dict()


def register_profile_tools(
    server: MCPServer[Any], call: Callable[..., CallToolResult], writes: ToolAnnotations
) -> None:
    """Add ``profile`` to ``server``."""

    @server.tool("profile", annotations=writes)
    def profile_tool(
        rebuild: Annotated[
            StrictBool,
            Field(description="Rebuild it from the vault first (it is otherwise as last built)."),
        ] = False,
    ) -> CallToolResult:
        """The user profile: known context (facts from decision and hub documents) and
        current focus (recent sessions' state and next steps, recent progress). rebuild
        rebuilds it first."""
        return call(profile, rebuild)
