"""A transcript's messages cut into turns: one prompt the user typed and what followed it.

The capture hooks read the transcript with :func:`memtrove.hooks.transcript.read_transcript`
(bounded: the last 200 messages, a large file read from its end) and hand the messages
here. Anything with ``role`` and ``content`` will do, so this layer needs no hook import.

A user message starts a turn unless it is a tool result or an echo of Claude Code itself
(``<command-...>``, ``<system-reminder>``, "Caveat:"): those belong to the turn they
answer. A turn's ``replies`` are its assistant messages, with the bulk of tool output and
numbered file dumps cut (what the assistant *said*, which is what a reference or a decision
is looked for in); ``files`` are the paths its Edit/Write/MultiEdit/NotebookEdit calls
named, first seen first; ``calls`` its tool calls as rendered (a Read of a surfaced
document's file is a use of it).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import NamedTuple, Protocol

__all__ = [
    "MAX_FILES",
    "MessageLike",
    "Turn",
    "edited_files",
    "fingerprint",
    "prune",
    "split_turns",
]

MAX_FILES = 50
MAX_CALLS = 100
CALL_CHARS = 2000
_NOT_A_PROMPT = (
    "[tool_result",
    "[Request interrupted",
    "<command-",
    "<local-command",
    "Caveat:",
    "<system-reminder",
)
_EDIT_CALL = re.compile(
    r'\[tool_use name="(?:Edit|Write|MultiEdit|NotebookEdit)"[^\]]*\] \{[^\n]*?'
    r'"(?:file_path|notebook_path)": "((?:[^"\\]|\\.)+)"'
)
_TOOL_CALL = re.compile(r'\[tool_use name="[^"]*" id="[^"]*"\] [^\n]*')
_TOOL_OUTPUT = re.compile(
    r"Result of (?:calling )?(?:the )?(?:Read|Grep|Glob|Bash|Write|Edit|NotebookEdit) tool[^\n]*\n"
    r"(?:[ \t]+[^\n]*\n)*",
    re.I,
)
_NUMBERED_DUMP = re.compile(r"(?:^ *\d+→[^\n]*\n){5,}", re.M)


class MessageLike(Protocol):
    @property
    def role(self) -> str: ...

    @property
    def content(self) -> str: ...


def _timestamp(message: MessageLike) -> str:
    value = getattr(message, "timestamp", "")
    return value if isinstance(value, str) else ""


class Turn(NamedTuple):
    """One prompt and the assistant's messages after it (``prompt`` is "" for messages
    before the first prompt of the window read)."""

    prompt: str
    replies: tuple[str, ...]
    files: tuple[str, ...]
    calls: tuple[str, ...] = ()  # the turn's tool calls as rendered (name and JSON input)
    at: str = ""  # the timestamp of its last message, when the transcript has one

    @property
    def reply(self) -> str:
        """The assistant's messages of the turn, joined."""
        return "\n\n".join(self.replies)


def is_prompt(message: MessageLike) -> bool:
    text = message.content.lstrip()
    return message.role == "user" and bool(text) and not text.startswith(_NOT_A_PROMPT)


def prune(content: str) -> str:
    """An assistant message without tool calls, tool output and file dumps."""
    text = _TOOL_OUTPUT.sub("", content)
    text = _NUMBERED_DUMP.sub("[file content pruned]\n", text)
    return _TOOL_CALL.sub("", text).strip()


def edited_files(content: str) -> list[str]:
    """Paths of the Edit/Write calls rendered in ``content``."""
    found: list[str] = []
    for match in _EDIT_CALL.finditer(content):
        path = match.group(1).replace("\\\\", "\\").replace('\\"', '"')
        if 0 < len(path) < 500 and "\n" not in path:
            found.append(path)
    return found


def split_turns(messages: Sequence[MessageLike]) -> list[Turn]:
    """The turns of ``messages`` in order; a turn without any reply is kept (its prompt
    still happened), messages before the first prompt form a turn with prompt ""."""
    turns: list[Turn] = []
    prompt: str | None = None
    replies: list[str] = []
    files: dict[str, None] = {}
    calls: list[str] = []
    at = ""

    def close() -> None:
        if prompt is not None or replies:
            kept = tuple(list(files)[:MAX_FILES])
            turns.append(Turn(prompt or "", tuple(replies), kept, tuple(calls[-MAX_CALLS:]), at))

    for message in messages:
        stamp = _timestamp(message)
        if is_prompt(message):
            close()
            prompt, replies, files, calls = message.content.strip(), [], {}, []
        at = stamp or at
        if message.role == "assistant":
            calls += [call[:CALL_CHARS] for call in _TOOL_CALL.findall(message.content)]
            for path in edited_files(message.content):
                files.setdefault(path)
            text = prune(message.content)
            if text:
                replies.append(text)
    close()
    return turns


def fingerprint(turn: Turn) -> str:
    """A short, stable name of a turn (its prompt and first reply), for a capture cursor."""
    first = turn.replies[0] if turn.replies else ""
    data = f"{turn.prompt}\x00{first[:2000]}".encode("utf-8", errors="surrogatepass")
    return hashlib.sha256(data).hexdigest()[:16]
