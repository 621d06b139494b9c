"""Reading Claude Code's session transcript (JSONL) for the compaction and Stop hooks.

Rules (clawmem inventory section 4): a transcript path must be absolute, end in
``.jsonl``, name a regular file and be under 1 GB. Each line is a JSON object, either
Claude Code's ``{"type": ..., "message": {"role", "content"}}`` or a flat
``{"role", "content"}``; content is a string or a list of blocks, of which ``text``,
``tool_use`` (name, id and JSON input) and ``tool_result`` (its first 500 characters) are
rendered as text. Malformed lines are skipped. Files over 10 MB are read from the end in
2 MB chunks until enough messages are found, so a long session costs the tail only. The
file is opened through :func:`memtrove.files.open_regular`: a FIFO or a device put in
its place is refused once open (never waited on, never read without end), and its size is
taken from the open file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from memtrove.files import open_regular

if TYPE_CHECKING:
    from memtrove.capture.turns import Turn

__all__ = [
    "CHUNK_BYTES",
    "MAX_TRANSCRIPT_BYTES",
    "STOP_TAIL_BYTES",
    "TAIL_THRESHOLD_BYTES",
    "Message",
    "memory_dirs",
    "read_transcript",
    "read_turns",
    "validate_transcript_path",
]

MAX_TRANSCRIPT_BYTES = 1024**3
TAIL_THRESHOLD_BYTES = 10 * 1024 * 1024
CHUNK_BYTES = 2 * 1024 * 1024
MAX_LINE_BYTES = 16 * 1024 * 1024  # a longer line, read from the end, is skipped
TOOL_RESULT_CHARS = 500
ROLES = ("user", "assistant", "system")


@dataclass(frozen=True)
class Message:
    """One transcript message as plain text."""

    role: str
    content: str
    timestamp: str = ""  # the entry's ``timestamp`` as written (Claude Code: ISO-8601 UTC)


def validate_transcript_path(path: str) -> Path | None:
    """``path`` when it may be read as a transcript (see the module docstring), else None."""
    if not path or not os.path.isabs(path) or not path.endswith(".jsonl"):
        return None
    candidate = Path(path)
    try:
        if not candidate.is_file() or candidate.stat().st_size >= MAX_TRANSCRIPT_BYTES:
            return None
    except OSError:
        return None
    return candidate


def _block_text(block: Any) -> str:
    if not isinstance(block, dict):
        return block if isinstance(block, str) else ""
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return text if isinstance(text, str) else ""
    if kind == "tool_use":
        arguments = json.dumps(block.get("input") or {}, ensure_ascii=False)
        return f'[tool_use name="{block.get("name", "")}" id="{block.get("id", "")}"] {arguments}'
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            content = "\n".join(_block_text(part) for part in content)
        text = content[:TOOL_RESULT_CHARS] if isinstance(content, str) else ""
        return f'[tool_result id="{block.get("tool_use_id", "")}"] {text}'
    return ""


def _message(line: str) -> Message | None:
    try:
        entry = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(entry, dict):
        return None
    message = entry.get("message", entry)
    if not isinstance(message, dict):
        return None
    role, content = message.get("role"), message.get("content")
    if role not in ROLES or not content:
        return None
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = "\n".join(part for part in map(_block_text, content) if part)
    else:
        text = json.dumps(content, ensure_ascii=False)
    stamp = entry.get("timestamp")
    when = stamp[:40] if isinstance(stamp, str) else ""
    return Message(role=str(role), content=text, timestamp=when) if text else None


def _parse(lines: Iterable[str]) -> list[Message]:
    return [m for m in map(_message, lines) if m is not None]


def _tail_messages(
    handle: BinaryIO, size: int, wanted: int, chunk_bytes: int = CHUNK_BYTES
) -> list[Message]:
    """Messages from the end of the file, 2 MB (``chunk_bytes``) at a time, until
    ``wanted`` are found."""
    messages: list[Message] = []
    partial = b""  # the start of a line cut by the chunk boundary
    skipping = False  # inside a line longer than MAX_LINE_BYTES
    position = size
    while position > 0 and len(messages) < wanted:
        step = min(chunk_bytes, position)
        position -= step
        handle.seek(position)
        lines = (handle.read(step) + partial).split(b"\n")
        partial = lines.pop(0) if position > 0 else b""
        if len(partial) > MAX_LINE_BYTES:  # one huge line: skipped, never held whole
            partial = b""
            skipping = True
        elif skipping and lines:
            lines.pop()  # the rest of the skipped line, up to its newline
            skipping = False
        found = _parse(line.decode("utf-8", errors="replace") for line in lines)
        messages = found + messages
    return messages


def read_transcript(
    path: str, last: int = 200, role: str | None = None, *, tail_over: int = TAIL_THRESHOLD_BYTES
) -> list[Message]:
    """The last ``last`` messages (of ``role``, when given) of a valid transcript; [] when
    the path is invalid or unreadable. A file larger than ``tail_over`` bytes is read from
    its end, in chunks of at most ``tail_over`` (the Stop hooks, run after every response,
    pass 1 MB)."""
    checked = validate_transcript_path(path)
    if checked is None:
        return []
    try:
        with open_regular(checked, max_bytes=MAX_TRANSCRIPT_BYTES - 1) as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > tail_over:
                # With a role filter more of the tail is read, so enough messages qualify.
                wanted = last if role is None else last * 4
                chunk = min(CHUNK_BYTES, max(1, tail_over))
                messages = _tail_messages(handle, size, wanted, chunk)
            else:
                # what the file holds when it was opened: one that grows since is not followed
                text = handle.read(size).decode("utf-8", errors="replace")
                messages = _parse(text.splitlines())
    except OSError:
        return []
    if role is not None:
        messages = [m for m in messages if m.role == role]
    return messages[-last:] if last > 0 else []


def memory_dirs(transcript_path: str, cwd: str, claude_dir: Path) -> list[Path]:
    """Where Claude Code's auto-memory folder of this project may be, most specific first:
    ``<transcript folder>/memory``, then ``<claude_dir>/projects/<cwd as a name>/memory``
    (Claude Code names project folders by the path with ``/`` as ``-``; both the
    ``-home-me-app`` and the ``home-me-app`` spelling are tried)."""
    candidates: list[Path] = []
    if transcript_path and os.path.isabs(transcript_path):
        candidates.append(Path(transcript_path).parent / "memory")
    if cwd and os.path.isabs(cwd):
        name = cwd.rstrip("/").replace("/", "-")
        for variant in dict.fromkeys((name, name.lstrip("-"))):
            if variant:
                candidates.append(claude_dir / "projects" / variant / "memory")
    return candidates


STOP_TAIL_BYTES = 1024 * 1024


def read_turns(path: str, last: int = 200) -> list[Turn]:
    """The turns of a transcript's last ``last`` messages (see
    :func:`memtrove.capture.turns.split_turns`), a file over 1 MB read from its end; []
    when it cannot be read."""
    from memtrove.capture.turns import split_turns

    return split_turns(read_transcript(path, last, tail_over=STOP_TAIL_BYTES))
