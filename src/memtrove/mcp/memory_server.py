"""Registers the memory store's tools on the server :mod:`memtrove.mcp.server` builds.

Kept apart so the server module stays readable; the server, the ``call`` helper and the
tool annotations are handed in. Like :mod:`memtrove.mcp.server`, it is imported only when
serving (the SDK's types are needed at registration, where the tools' signatures are read).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field, StrictBool

from memtrove.mcp import memory_tools
from memtrove.memory.queue import ExtractionQueue

__all__ = ["register_memory_tools"]

Label = Annotated[str, Field(description="The entry's label (its slug is the key).")]
StoreName = Annotated[
    str | None, Field(description="Store; default the project store (recall adds global).")
]
Session = Annotated[str | None, Field(description="The session id the nudge named.")]
Kind = Annotated[str, Field(description="prediction or behavior.")]


def register_memory_tools(
    server: MCPServer[Any],
    call: Callable[..., CallToolResult],
    queue: ExtractionQueue,
    read_only: ToolAnnotations,
    writes: ToolAnnotations,
) -> None:
    """Add the memory-store tools to ``server`` (``call(tool, *args)`` runs one on the
    vault and turns errors into tool errors)."""

    @server.tool(annotations=writes)
    def memory_remember(
        label: Label,
        content: Annotated[str, Field(description="What to remember.")],
        store: StoreName = None,
        branch: Annotated[str | None, Field(description="Scope to a git branch.")] = None,
        confidence: Annotated[int | None, Field(description="How sure, 1-10.")] = None,
        overwrite: Annotated[
            StrictBool, Field(description="Replace an existing entry (its text is kept).")
        ] = False,
        session_id: Session = None,
    ) -> CallToolResult:
        """Save a durable fact, decision or preference under a label. An existing label is
        refused unless overwrite; passing session_id clears that session's extraction queue."""
        return call(
            lambda vault, *rest: memory_tools.memory_remember(vault, queue, *rest),
            label,
            content,
            store,
            branch,
            confidence,
            overwrite,
            session_id,
        )

    @server.tool(annotations=writes)
    def memory_recall(
        query: Annotated[str, Field(description="What to recall.")],
        store: StoreName = None,
        branch: Annotated[str | None, Field(description="Only unscoped and this branch.")] = None,
        limit: Annotated[int, Field(description="Most entries (1-1000).")] = 10,
    ) -> CallToolResult:
        """Entries for a query (keywords and meaning); counts each as recalled."""
        return call(memory_tools.memory_recall, query, store, branch, limit)

    @server.tool(annotations=writes)
    def memory_forget_entry(label: Label, store: StoreName = None) -> CallToolResult:
        """Forget a memory entry (its text is kept as an earlier version). Documents are
        forgotten with memory_forget."""
        return call(memory_tools.memory_forget_entry, label, store)

    @server.tool(annotations=writes)
    def memory_archive(
        label: Label,
        store: StoreName = None,
        restore: Annotated[
            StrictBool, Field(description="Bring an archived entry back instead.")
        ] = False,
    ) -> CallToolResult:
        """Archive a memory entry that is still true but no longer worth recalling: it is
        kept, but recall, find_duplicates and hygiene leave it out. restore brings it back."""
        return call(memory_tools.memory_archive, label, store, restore)

    @server.tool(annotations=read_only)
    def find_duplicates(
        store: StoreName = None,
        threshold: Annotated[float, Field(description="Cosine threshold (0-1].")] = 0.85,
    ) -> CallToolResult:
        """Near-duplicate entry pairs not yet judged, grouped into clusters."""
        return call(memory_tools.find_duplicates, store, threshold)

    @server.tool(annotations=writes)
    def dedup_mark_checked(
        label_a: Label,
        label_b: Label,
        status: Annotated[
            str, Field(description="duplicate, supplement, contradiction or unrelated.")
        ],
        store: StoreName = None,
    ) -> CallToolResult:
        """Record a verdict on a pair so find_duplicates stops listing it."""
        return call(memory_tools.dedup_mark_checked, label_a, label_b, status, store)

    @server.tool(annotations=read_only)
    def hygiene_report(
        store: StoreName = None,
        worktree: Annotated[
            str | None, Field(description="The git working tree (branch check).")
        ] = None,
    ) -> CallToolResult:
        """Store maintenance signals: duplicates, stale entries, orphaned branches."""
        return call(memory_tools.hygiene_report, store, worktree)

    @server.tool(annotations=read_only)
    def get_extraction_payload(
        session_id: Annotated[str, Field(description="The session id the nudge named.")],
    ) -> CallToolResult:
        """The session's queued tool calls to read for memories (nothing is removed)."""
        return call(
            lambda vault, session: memory_tools.get_extraction_payload(vault, queue, session),
            session_id,
        )

    @server.tool(annotations=writes)
    def extraction_done(session_id: Session = None) -> CallToolResult:
        """Acknowledge extraction: clears the session's queue and quiets the nudge."""
        return call(
            lambda vault, session: memory_tools.extraction_done(vault, queue, session),
            session_id,
        )

    @server.tool(annotations=writes)
    def rule_add(
        kind: Kind,
        statement: Annotated[str, Field(description="The prediction or behavior.")],
        rationale: Annotated[str | None, Field(description="Why.")] = None,
        when: Annotated[list[str] | None, Field(description="Situations it applies in.")] = None,
        store: StoreName = None,
    ) -> CallToolResult:
        """Add a prediction (what the user wants) or behavior (what you keep to)."""
        return call(memory_tools.rule_add, kind, statement, rationale, when, store)

    @server.tool(annotations=writes)
    def rule_link(
        kind: Kind,
        id: Annotated[str, Field(description="The rule's id.")],
        matcher_id: Annotated[str | None, Field(description="An existing matcher.")] = None,
        when: Annotated[str | None, Field(description="Or a new situation.")] = None,
        weight: Annotated[float, Field(description="Edge weight (0-1].")] = 1.0,
        store: StoreName = None,
    ) -> CallToolResult:
        """Link a situation to a rule."""
        return call(memory_tools.rule_link, kind, id, matcher_id, when, weight, store)

    @server.tool(annotations=writes)
    def rule_signal(
        kind: Kind,
        id: Annotated[str, Field(description="The rule's id.")],
        signal: Annotated[
            str, Field(description="confirm, disconfirm or soft (a quarter confirmation).")
        ],
        detail: Annotated[str | None, Field(description="What showed it.")] = None,
    ) -> CallToolResult:
        """Count evidence for or against a rule; every signal is recorded."""
        return call(memory_tools.rule_signal, kind, id, signal, detail)

    @server.tool(annotations=writes)
    def rule_codify(
        id: Annotated[str, Field(description="The behavior's id.")],
        detail: Annotated[str | None, Field(description="Where it was written.")] = None,
    ) -> CallToolResult:
        """Mark a behavior as codified into a standing rule."""
        return call(memory_tools.rule_codify, id, detail)

    @server.tool(annotations=read_only)
    def rule_list(kind: Kind, store: StoreName = None) -> CallToolResult:
        """Rules with confidence, signal counts and matchers."""
        return call(memory_tools.rule_list, kind, store)
