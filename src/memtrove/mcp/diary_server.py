"""Registers ``diary_write`` and ``diary_read`` (an agent's diary, for hosts without hooks)
on the server :mod:`memtrove.mcp.server` builds; the server and the ``call`` helper are
handed in."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from memtrove.capture.diary import DEFAULT_TOPIC, MAX_ENTRY_CHARS
from memtrove.vault.diary import diary_area

if TYPE_CHECKING:
    from memtrove.vault import Vault

__all__ = ["MCP_AGENT", "diary_read", "diary_write", "register_diary_tools"]

MCP_AGENT = "agent"  # who writes when the tool is not told

VaultName = Annotated[
    str | None,
    Field(description="A named vault. Not supported yet: the configured vault is used."),
]
_READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
_WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)


def diary_write(vault: Vault, entry: str, topic: str, agent: str) -> tuple[str, dict[str, Any]]:
    saved = diary_area(vault).write(entry, topic=topic, agent=agent)
    return f"Saved diary entry {saved.path} (#{saved.docid})", saved.to_dict()


def diary_read(vault: Vault, last_n: int, agent: str | None) -> tuple[str, dict[str, Any]]:
    from memtrove.retrieval.arguments import check_limit

    entries = diary_area(vault).read(check_limit(last_n, name="last_n"), agent=agent)
    if not entries:
        who = f" by {agent}" if agent else ""
        text = f"No diary entries{who} yet (diary_write adds one)"
    else:
        text = "\n\n".join(
            f"[{e.written_at}] {e.agent} ({e.topic}) #{e.docid}\n{e.text}" for e in entries
        )
    return text, {"count": len(entries), "entries": [entry.to_dict() for entry in entries]}


def _notes(vault: str | None) -> tuple[str, ...]:
    if not vault:
        return ()
    return (f"note: named vaults are not supported yet; used the configured vault, not {vault!r}",)


def register_diary_tools(server: MCPServer[Any], call: Callable[..., CallToolResult]) -> None:
    """Add ``diary_write`` and ``diary_read`` to ``server``."""

    @server.tool("diary_write", annotations=_WRITES)
    def diary_write_tool(
        entry: Annotated[
            str,
            Field(
                description=f"What happened, was decided or learned (at most {MAX_ENTRY_CHARS:,} characters)."
            ),
        ],
        topic: Annotated[str, Field(description="What the entry is about.")] = DEFAULT_TOPIC,
        agent: Annotated[str, Field(description="Who writes it.")] = MCP_AGENT,
        vault: VaultName = None,
    ) -> CallToolResult:
        """Save a diary entry as an agent memory (searchable at once): for hosts without
        hooks, to record what a session did and learned."""
        return call(diary_write, entry, topic, agent, notes=_notes(vault))

    @server.tool("diary_read", annotations=_READ_ONLY)
    def diary_read_tool(
        last_n: Annotated[int, Field(description="How many entries, newest first (1-1000).")] = 10,
        agent: Annotated[str | None, Field(description="Only this agent's entries.")] = None,
        vault: VaultName = None,
    ) -> CallToolResult:
        """Recent diary entries, newest first."""
        return call(diary_read, last_n, agent, notes=_notes(vault))
