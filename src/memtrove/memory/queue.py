"""The extraction queue for MCP hosts: recent tool calls of a session, waiting to be read
for durable facts.

One JSONL file per session under ``<cache>/queue/`` (at most :data:`QUEUE_LIMIT` calls,
the oldest dropped), written atomically under a lock file, with secrets redacted before
anything touches the disk. memtrove's own tools and the meta tools (skills, tasks, agents)
are never queued: they would echo the store into itself or loop. A ``memory_remember`` or
``extraction_done`` call seen in a batch drains the session's queue.

Beside each queue, ``<session>.count`` counts the nudges the agent has let pass; the nudge
grows more insistent with it (polite, insistent, shouting) until the queue is drained.

While a session compacts, the nudge is held back: the compaction's summary is written with
tools blocked, so a nudge asking for tool calls would fail there. ``<session>.compacting``
is written when the compaction starts (PreCompact) and removed when it ends (SessionStart
after a compaction); one left behind by a compaction that never ended stops counting after
:data:`COMPACTION_SECONDS`. A ``/compact`` prompt is itself a compaction. Held back, the
nudge is neither shown nor counted; the queue keeps everything for the next prompt.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memtrove.files import exclusive_lock, write_atomic
from memtrove.security.redaction import redact
from memtrove.text import scrub, scrub_json, to_iso

__all__ = [
    "COMPACTION_SECONDS",
    "MAX_FIELD_CHARS",
    "QUEUE_LIMIT",
    "ExtractionQueue",
    "is_compaction_prompt",
    "is_draining_tool",
    "is_filtered_tool",
    "nudge_text",
]

QUEUE_LIMIT = 20
MAX_FIELD_CHARS = 4000  # of a tool's input or output kept in the queue
_META_TOOLS = frozenset({"skill", "task", "agent"})
_OWN_PREFIXES = ("mcp__memtrove__", "memtrove")
_DRAINING = ("memory_remember", "extraction_done")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
COMPACTION_SECONDS = 300  # compactions take seconds to a minute or two


def is_compaction_prompt(prompt: str) -> bool:
    """``/compact`` (with or without instructions): the prompt that starts a compaction."""
    words = prompt.lstrip().split(maxsplit=1)
    return bool(words) and words[0].lower() == "/compact"


def is_filtered_tool(name: str) -> bool:
    """memtrove's own tools and the meta tools are never queued."""
    lowered = name.strip().lower()
    return lowered in _META_TOOLS or lowered.startswith(_OWN_PREFIXES) or not lowered


def is_draining_tool(name: str) -> bool:
    """A call that means the agent extracted (``memory_remember``, ``extraction_done``)."""
    lowered = name.strip().lower()
    return any(lowered == tool or lowered.endswith("__" + tool) for tool in _DRAINING)


def _clip(value: Any) -> Any:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= MAX_FIELD_CHARS:
        return value
    return text[:MAX_FIELD_CHARS] + f"... [{len(text) - MAX_FIELD_CHARS:,} more characters]"


class ExtractionQueue:
    """The queues of every session, in one folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _name(self, session: str) -> str:
        safe = _UNSAFE.sub("_", session.strip())[:100]
        if safe != session.strip() or not safe:
            safe = f"{safe}-{hashlib.sha256(session.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"
        return safe

    def path(self, session: str) -> Path:
        return self.folder / f"{self._name(session)}.jsonl"

    def _count_path(self, session: str) -> Path:
        return self.folder / f"{self._name(session)}.count"

    def _locked(self, session: str) -> contextlib.AbstractContextManager[None]:
        return exclusive_lock(self.folder / f"{self._name(session)}.lock")

    def append(self, session: str, calls: Sequence[Mapping[str, Any]]) -> int:
        """Queue the calls worth extracting from (redacted, clipped); returns how many were
        queued. A memory write among them drains the queue instead."""
        if not session.strip():
            return 0
        if any(is_draining_tool(str(call.get("tool_name", ""))) for call in calls):
            self.drain(session)
            return 0
        records = [
            {
                "tool_name": scrub(str(call.get("tool_name", ""))),
                "input": _clip(scrub_json(redact(call.get("tool_input")))),
                "output": _clip(scrub_json(redact(call.get("tool_response")))),
                "at": to_iso(datetime.now(UTC)),
            }
            for call in calls
            if not is_filtered_tool(str(call.get("tool_name", "")))
        ]
        if not records:
            return 0
        with self._locked(session):
            kept = (self._read(session) + records)[-QUEUE_LIMIT:]
            text = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in kept)
            write_atomic(self.path(session), text, prefix=".queue-")
        return len(records)

    def peek(self, session: str) -> list[dict[str, Any]]:
        """The queued calls, oldest first (nothing is removed)."""
        return self._read(session)

    def drain(self, session: str) -> int:
        """Empty the session's queue and reset its nudge count; how many calls it held."""
        with self._locked(session):
            held = len(self._read(session))
            for path in (self.path(session), self._count_path(session)):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
        return held

    def missed(self, session: str) -> int:
        try:
            return max(0, int(self._count_path(session).read_text(encoding="ascii").strip()))
        except (OSError, ValueError):
            return 0

    def note_nudge(self, session: str) -> int:
        """Count one more nudge shown; returns how many were shown before it."""
        with self._locked(session):
            before = self.missed(session)
            write_atomic(self._count_path(session), str(before + 1), prefix=".queue-")
        return before

    def _compacting_path(self, session: str) -> Path:
        return self.folder / f"{self._name(session)}.compacting"

    def begin_compaction(self, session: str) -> None:
        """Hold the session's nudge back: a compaction has started."""
        if session.strip():
            self.folder.mkdir(parents=True, exist_ok=True)
            write_atomic(
                self._compacting_path(session), to_iso(datetime.now(UTC)), prefix=".queue-"
            )

    def end_compaction(self, session: str) -> bool:
        """The compaction is over; whether one was under way."""
        if not session.strip():
            return False
        try:
            self._compacting_path(session).unlink()
        except FileNotFoundError:
            return False
        return True

    def compacting(self, session: str) -> bool:
        """Whether the session is compacting (a marker younger than COMPACTION_SECONDS)."""
        if not session.strip():
            return False
        path = self._compacting_path(session)
        try:
            age = time.time() - path.stat().st_mtime
        except OSError:
            return False
        if age <= COMPACTION_SECONDS:
            return True
        with contextlib.suppress(OSError):  # a compaction that never ended: forget it
            path.unlink()
        return False

    def nudge(self, session: str, prompt: str = "") -> str:
        """The extraction nudge for the session's next prompt, counted as shown; "" when
        nothing is queued, and while the session compacts (then nothing is counted)."""
        if not session.strip() or is_compaction_prompt(prompt) or self.compacting(session):
            return ""
        waiting = len(self.peek(session))
        if not waiting:
            return ""
        return nudge_text(session, waiting, self.note_nudge(session))

    def payload(self, session: str, project_store: str, global_store: str) -> dict[str, Any] | None:
        """What an extractor reads (None when nothing is queued)."""
        calls = self.peek(session)
        if not calls:
            return None
        return {
            "session_id": session,
            "interactions": calls,
            "projectStore": project_store,
            "globalStore": global_store,
        }

    def _read(self, session: str) -> list[dict[str, Any]]:
        try:
            lines = self.path(session).read_text(encoding="utf-8").splitlines()
        except (FileNotFoundError, UnicodeDecodeError):
            return []
        records: list[dict[str, Any]] = []
        for line in lines:
            with contextlib.suppress(ValueError, RecursionError):
                record = json.loads(line)
                if isinstance(record, dict):
                    records.append(record)
        return records


def nudge_text(session: str, count: int, missed: int) -> str:
    """The extraction nudge: polite (missed 0-1), insistent (2), shouting (3 or more)."""
    call = (
        f'get_extraction_payload(session_id="{session}"), save what is durable with '
        f'memory_remember(..., session_id="{session}"), then '
        f'extraction_done(session_id="{session}")'
    )
    if missed <= 1:
        text = (
            f"{count} recent tool result(s) of this session may hold facts worth keeping. "
            f"When you reach a pause, call {call}."
        )
    elif missed == 2:
        text = (
            f"Reminder: {count} tool result(s) are still waiting to be reviewed for memory. "
            f"Do it now, before the next step: {call}."
        )
    else:
        text = (
            f"MEMORY EXTRACTION IS OVERDUE ({missed} REMINDERS IGNORED). {count} TOOL "
            f"RESULT(S) ARE WAITING. STOP AND CALL {call} NOW."
        )
    return f"<memory-extraction>{text}</memory-extraction>"
