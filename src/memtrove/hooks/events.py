"""Claude Code's hook payloads, normalized; and the JSON a hook answers with.

Claude Code writes one JSON object on a hook's stdin. Only a few fields matter here and
they arrive in snake_case (current Claude Code) or camelCase (older hosts and other
agents), so :func:`parse_event` reads both into one frozen :class:`HookEvent`. Anything
unreadable (empty stdin, invalid JSON or UTF-8, a JSON value that is not an object, a
field of the wrong type) reads as the empty event: a hook never fails on its input.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MAX_STDIN_BYTES",
    "HookEvent",
    "HookResult",
    "context_output",
    "estimate_tokens",
    "parse_event",
    "plain_output",
]

# Claude Code's payloads are a few kilobytes; a prompt pasted with a whole file stays far
# below this. Reading is capped so a runaway writer cannot exhaust memory.
MAX_STDIN_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class HookEvent:
    """The fields of a hook payload that memtrove's hooks read.

    ``source`` is SessionStart's ``startup|resume|clear|compact``; ``trigger`` is
    PreCompact's ``manual|auto``. Strings are empty when the payload lacks them.
    """

    hook_event_name: str = ""
    session_id: str = ""
    prompt: str = ""
    transcript_path: str = ""
    cwd: str = ""
    source: str = ""
    trigger: str = ""
    tool_input: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class HookResult:
    """What a hook produced: the context to inject (empty: none) and work to do after the
    answer is written (logging), which the runner runs once the JSON is out, so a slow or
    locked vault can delay the log but never the answer."""

    context: str = ""
    after: list[Callable[[], object]] = field(default_factory=list)
    # context-surfacing: the injected documents (collection/path) in order and the estimated
    # tokens of the whole injection; read by ``memtrove eval --method surfacing``.
    surfaced: list[str] = field(default_factory=list)
    copies: dict[str, tuple[str, ...]] = field(default_factory=dict)  # key -> also at
    tokens: int = 0


_SURROGATE = re.compile("[\ud800-\udfff]")  # as memtrove.text.scrub; stdlib only here


def _text(payload: Mapping[str, Any], snake: str, camel: str) -> str:
    value = payload.get(snake)
    if value is None:
        value = payload.get(camel)
    if not isinstance(value, str):
        return ""
    return value if value.isascii() else _SURROGATE.sub("\ufffd", value)


def parse_event(raw: bytes | str) -> HookEvent:
    """Read a hook payload; anything unreadable gives the empty :class:`HookEvent`."""
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", errors="replace")
    text = raw.strip().lstrip("\ufeff")
    if not text:
        return HookEvent()
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError):
        return HookEvent()
    if not isinstance(payload, dict):
        return HookEvent()
    tool_input = payload.get("tool_input", payload.get("toolInput"))
    return HookEvent(
        hook_event_name=_text(payload, "hook_event_name", "hookEventName"),
        session_id=_text(payload, "session_id", "sessionId").strip(),
        prompt=_text(payload, "prompt", "prompt"),
        transcript_path=_text(payload, "transcript_path", "transcriptPath"),
        cwd=_text(payload, "cwd", "cwd"),
        source=_text(payload, "source", "source"),
        trigger=_text(payload, "trigger", "trigger"),
        tool_input=tool_input if isinstance(tool_input, dict) else {},
    )


def plain_output() -> dict[str, Any]:
    """The answer of a hook that injects nothing (PreCompact, Stop, or an unknown hook)."""
    return {"continue": True, "suppressOutput": False}


def context_output(hook_event_name: str, context: str = "") -> dict[str, Any]:
    """The answer of a hook whose event takes context; ``context`` may be empty."""
    return {
        "continue": True,
        "suppressOutput": False,
        "hookSpecificOutput": {"hookEventName": hook_event_name, "additionalContext": context},
    }


def estimate_tokens(text: str) -> int:
    """Tokens as the spec counts them everywhere: ``ceil(characters / 4)``."""
    return math.ceil(len(text) / 4)
