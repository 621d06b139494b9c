"""The hooks memtrove installs: name, Claude Code event, timeout and implementing module.

Imports nothing: the warm path (:mod:`memtrove.hooks.remote`) reads it first thing in a
hook process, where every import is paid for on every prompt.
"""

from __future__ import annotations

import math

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["HOOKS", "TIMEOUT_MARGIN", "HookSpec"]

TIMEOUT_MARGIN = 1.0  # seconds kept back from Claude Code's timeout (startup, writing)
MAX_TIME_LIMIT = 3600.0  # MEMTROVE_HOOK_TIMEOUT past this is taken as this


class HookSpec:
    """A hook: the Claude Code event it is installed for, whether that event takes
    context, Claude Code's timeout for it (seconds, as ``setup hooks`` writes it), and the
    module whose ``run(event, settings, open_vault, log)`` answers."""

    __slots__ = ("event", "module", "name", "summary", "takes_context", "timeout_seconds")

    def __init__(
        self,
        name: str,
        event: str,
        takes_context: bool,
        timeout_seconds: float,
        module: str,
        summary: str,
    ) -> None:
        self.name = name
        self.event = event
        self.takes_context = takes_context
        self.timeout_seconds = timeout_seconds
        self.module = module
        self.summary = summary

    def __repr__(self) -> str:
        return f"HookSpec({self.name!r}, {self.event!r})"

    def time_limit(self, configured: float | None = None) -> float:
        """Seconds the hook may take: ``configured`` (``MEMTROVE_HOOK_TIMEOUT``) when set,
        else a margin under Claude Code's timeout."""
        if configured is not None and 0 < configured < math.inf:
            return min(configured, MAX_TIME_LIMIT)
        return max(1.0, self.timeout_seconds - TIMEOUT_MARGIN)

    def answer(self, context: str = "") -> dict[str, Any]:
        """The JSON answer carrying ``context`` (ignored by events that take none)."""
        from memtrove.hooks.events import context_output, plain_output

        return context_output(self.event, context) if self.takes_context else plain_output()


HOOKS: dict[str, HookSpec] = {
    spec.name: spec
    for spec in (
        HookSpec(
            "context-surfacing",
            "UserPromptSubmit",
            True,
            8,
            "memtrove.hooks.context_surfacing",
            "inject <vault-context> for each prompt",
        ),
        HookSpec(
            "postcompact-inject",
            "SessionStart",
            True,
            5,
            "memtrove.hooks.postcompact",
            "re-inject the saved state after a compaction",
        ),
        HookSpec(
            "curator-nudge",
            "SessionStart",
            True,
            5,
            "memtrove.hooks.curator",
            "show the curator report's actions",
        ),
        HookSpec(
            "session-start",
            "SessionStart",
            True,
            5,
            "memtrove.hooks.session_start",
            "remind of the memory store, with its hygiene report",
        ),
        HookSpec(
            "precompact-extract",
            "PreCompact",
            False,
            5,
            "memtrove.hooks.precompact",
            "save the session's state before compaction",
        ),
        HookSpec(
            "decision-extractor",
            "Stop",
            False,
            30,
            "memtrove.hooks.decision_extractor",
            "write the turn's observations, decisions and antipatterns",
        ),
        HookSpec(
            "handoff-generator",
            "Stop",
            False,
            30,
            "memtrove.hooks.handoff_generator",
            "write the session's handoff and session_log row",
        ),
        HookSpec(
            "feedback-loop",
            "Stop",
            False,
            30,
            "memtrove.hooks.feedback_loop",
            "mark which injected documents the reply used",
        ),
        HookSpec(
            "session-bootstrap",
            "SessionStart",
            True,
            5,
            "memtrove.hooks.session_bootstrap",
            "inject the last handoff, recent decisions and stale notes (opt-in)",
        ),
        HookSpec(
            "staleness-check",
            "SessionStart",
            True,
            5,
            "memtrove.hooks.staleness_check",
            "list the notes due for review (opt-in)",
        ),
        HookSpec(
            "pretool-inject",
            "PreToolUse",
            True,
            5,
            "memtrove.hooks.pretool_inject",
            "inject notes about the file a tool uses (opt-in; MEMTROVE_PRETOOL_INJECT)",
        ),
    )
}
