"""OpenAI Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Each line is ``{timestamp, type, payload}``. ``session_meta`` names the session; the
conversation is the ``response_item`` messages (the user's ``input_text``, the assistant's
``output_text``) with its function, custom-tool and web-search calls summarised on one line
each (:mod:`memtrove.mine.summaries`), paired with their outputs by ``call_id``. Reasoning
is skipped (its text is encrypted or a summary of thoughts), and so are the developer
messages and the context Codex injects as user messages (``<environment_context>``,
``AGENTS.md`` instructions...); of a message the IDE extension prefixed with its context,
only the request is kept. The user's text appears twice, as a ``response_item`` message
and as an ``event_msg`` ``user_message`` (and the assistant's as ``agent_message``): the
events are used only where the response item is missing, so nothing is doubled. A file is
streamed line by line; a malformed line is counted and skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memtrove.mine.exchanges import (
    ASSISTANT,
    LINE_TOO_LONG,
    USER,
    Conversation,
    Message,
    Skips,
    bounded_lines,
    open_source,
    word,
)
from memtrove.mine.summaries import result_line, tool_line
from memtrove.text import parse_iso_datetime, scrub

__all__ = ["LABEL", "read", "sniff"]

LABEL = "codex"

_CONTEXT_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "# AGENTS.md instructions",
    "<INSTRUCTIONS>",
    "<turn_aborted>",
)
_IDE_CONTEXT = "# Context from my IDE setup"
_IDE_REQUEST = "## My request for Codex:"
_EXIT = re.compile(r"(?:Process exited with code|Exit code:?)\s*(-?\d+)")
_CALLS = {"function_call", "custom_tool_call", "local_shell_call"}
_OUTPUTS = {"function_call_output", "custom_tool_call_output"}
_NOISE_EVENTS = {"user_message", "agent_message"}


def sniff(path: Path, head: bytes) -> bool:
    """JSON lines whose first record is a ``session_meta`` (or a ``{type, payload}`` line)."""
    if not head.startswith(b"{"):
        return False
    text = head.decode("utf-8", errors="replace")
    return '"payload"' in text and (
        '"session_meta"' in text or '"response_item"' in text or '"event_msg"' in text
    )


class _Turn:
    """The assistant's part of the current exchange, until the next user message."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.texts: set[str] = set()
        self.timestamp: str | None = None
        self.calls: dict[str, int] = {}  # call_id -> line

    def add(self, line: str, timestamp: str | None) -> int:
        self.lines.append(line)
        if timestamp and (self.timestamp is None or timestamp > self.timestamp):
            self.timestamp = timestamp
        return len(self.lines) - 1


def read(path: Path, skips: Skips) -> Iterator[Conversation]:
    """The rollout in ``path`` as one conversation."""
    session: str | None = None
    messages: list[Message] = []
    turn = _Turn()
    last_user: str | None = None

    def close_turn() -> None:
        nonlocal turn
        text = "\n".join(turn.lines).strip()
        if text:
            messages.append(Message(ASSISTANT, "Codex", text, turn.timestamp))
        turn = _Turn()

    with open_source(path) as handle:
        for number, raw in enumerate(bounded_lines(handle)):
            if raw is None:
                skips.skip(LINE_TOO_LONG)
                continue
            if not raw.strip():
                continue
            try:
                entry = json.loads(raw)
            except (ValueError, RecursionError):  # RecursionError: nested past any real line
                skips.skip("malformed line")
                continue
            if not isinstance(entry, dict) or not isinstance(entry.get("payload"), dict):
                skips.skip("not a rollout record")
                continue
            kind, payload = entry.get("type"), entry["payload"]
            timestamp = parse_iso_datetime(entry.get("timestamp"))
            if kind == "session_meta":
                if session is None and isinstance(payload.get("id"), str):
                    session = payload["id"]
                continue
            if kind == "event_msg" and word(payload.get("type")) in _NOISE_EVENTS:
                text = payload.get("message")
                if not isinstance(text, str) or not text.strip():
                    continue
                text = scrub(text.strip())
                if payload["type"] == "user_message":
                    text = _request(text)
                    if text == last_user and not turn.lines:
                        continue  # the same message as its response item
                    close_turn()
                    messages.append(Message(USER, "User", text, timestamp, f"line-{number}"))
                    last_user = text
                elif text not in turn.texts:
                    turn.texts.add(text)
                    turn.add(text, timestamp)
                continue
            if kind != "response_item":
                skips.skip(f"{kind} record" if isinstance(kind, str) else "untyped record")
                continue
            item = word(payload.get("type"))
            if item == "message":
                role = payload.get("role")
                text = scrub(_message_text(payload.get("content")).strip())
                if role == "user":
                    text = _request(text)
                    if not text or text.startswith(_CONTEXT_PREFIXES):
                        skips.skip("injected context")
                    elif text == last_user and not turn.lines:
                        pass  # already taken from its user_message event
                    else:
                        close_turn()
                        messages.append(Message(USER, "User", text, timestamp, f"line-{number}"))
                        last_user = text
                elif role == "assistant":
                    if text and text not in turn.texts:
                        turn.texts.add(text)
                        turn.add(text, timestamp)
                else:
                    skips.skip(f"{role} message")
            elif item == "reasoning":
                skips.skip("reasoning")
            elif item in _CALLS:
                arguments = payload.get("arguments", payload.get("input", payload.get("action")))
                line = turn.add(scrub(tool_line(payload.get("name"), arguments)), timestamp)
                if isinstance(payload.get("call_id"), str):
                    turn.calls[payload["call_id"]] = line
            elif item in _OUTPUTS:
                position = turn.calls.get(str(payload.get("call_id")))
                if position is None:
                    skips.skip("output without its call")
                    continue
                summary = _output_summary(payload.get("output"))
                if summary:
                    turn.lines[position] += " -> " + scrub(summary)
            elif item == "web_search_call":
                action = payload.get("action")
                query = action.get("query") if isinstance(action, dict) else None
                turn.add(scrub(tool_line("web_search", {"query": query or ""})), timestamp)
            else:
                skips.skip(f"{item} item" if isinstance(item, str) else "untyped item")
    close_turn()
    if messages:
        yield Conversation(LABEL, path, session or path.stem, None, tuple(messages))


def _request(text: str) -> str:
    """A user message without the IDE extension's context block: only the request."""
    if text.startswith(_IDE_CONTEXT) and _IDE_REQUEST in text:
        return text.split(_IDE_REQUEST, 1)[1].strip()
    return text


def _message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for block in content:
        if isinstance(block, dict):
            if isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif block.get("type") in ("input_image", "image"):
                parts.append("[image]")
    return "\n".join(parts)


def _output_summary(output: Any) -> str:
    """The first line of a call's output (after Codex's ``Output:`` header), flagged as an
    error when the command exited non-zero."""
    exit_code: int | None = None
    if isinstance(output, str) and output.startswith("{"):
        try:
            decoded = json.loads(output)
        except (ValueError, RecursionError):
            decoded = None
        if isinstance(decoded, dict):
            metadata = decoded.get("metadata")
            if isinstance(metadata, dict) and isinstance(metadata.get("exit_code"), int):
                exit_code = metadata["exit_code"]
            output = decoded.get("output", output)
    if isinstance(output, str):
        found = _EXIT.search(output[:500])
        if found and exit_code is None:
            exit_code = int(found.group(1))
        header, marker, rest = output.partition("\nOutput:\n")
        if marker and header.startswith("Chunk ID"):
            output = rest
    return result_line(output, error=exit_code not in (None, 0))
