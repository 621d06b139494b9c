"""``memtrove buffer-batch`` and ``memtrove buffer-tool``: queue tool calls for extraction.

``buffer-batch`` reads Claude Code's PostToolBatch payload (``session_id`` and
``tool_calls``); ``buffer-tool`` one tool call as Cursor's postToolUse sends it
(``conversation_id``, ``tool_name``, ``tool_input``, ``tool_output``). Both print nothing
and exit 0 whatever happens (an error goes to stderr and ``hooks.log``): they run after
every tool call and must never hold the agent up. Field names are read leniently
(``tool_name``/``name``, ``tool_input``/``input``/``arguments``,
``tool_response``/``tool_output``/``output``/``result``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memtrove.hooks.events import read_payload
from memtrove.hooks.hooklog import HookLog
from memtrove.memory.queue import ExtractionQueue
from memtrove.paths import cache_location, queue_location

__all__ = ["main", "tool_calls"]


def _first(data: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        if name in data:
            return data[name]
    return None


def _call(data: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "tool_name": str(_first(data, "tool_name", "name", "tool") or ""),
        "tool_input": _first(data, "tool_input", "input", "arguments", "args"),
        "tool_response": _first(data, "tool_response", "tool_output", "output", "result"),
    }


def tool_calls(kind: str, payload: Any) -> tuple[str, list[dict[str, Any]]]:
    """(session id, normalized calls) of a ``batch`` or ``tool`` payload."""
    if not isinstance(payload, dict):
        raise ValueError("the payload is not a JSON object")
    if kind == "batch":
        session = str(_first(payload, "session_id", "sessionId", "conversation_id") or "")
        raw = _first(payload, "tool_calls", "toolCalls", "calls") or []
        if not isinstance(raw, list):
            raise ValueError("tool_calls is not a list")
        return session, [_call(item) for item in raw if isinstance(item, dict)]
    session = str(_first(payload, "conversation_id", "session_id", "sessionId") or "")
    return session, [_call(payload)]


READ_SECONDS = 4.0  # within the 5 s Claude Code gives the PostToolBatch hook


def main(kind: str, queue_folder: Path | None = None) -> int:
    """Queue the calls on stdin; always 0, never a byte on stdout."""
    cache = Path(cache_location())
    log = HookLog(cache / "hooks.log", f"buffer-{kind}")
    try:
        raw = read_payload(sys.stdin.buffer, READ_SECONDS)  # bounded: a writer may not close
        if not raw.strip():
            return 0
        session, calls = tool_calls(kind, json.loads(raw))
        if not session:
            log.warning("no session id in the payload; nothing queued")
            return 0
        ExtractionQueue(queue_folder or Path(queue_location())).append(session, calls)
    except Exception as error:  # fail open: the agent loop must go on
        log.error(f"{type(error).__name__}: {error}")
    return 0
