"""Claude.ai data export: ``conversations.json``, a list of conversations with ``chat_messages``.

The export zip (read in place: its ``conversations.json``) also holds ``projects.json``,
``users.json`` and ``memories.json``; those are not conversations and :func:`sniff` refuses
them (they never name ``chat_messages``).

A message's text comes from its ``content`` blocks when it has any: ``text`` blocks are
kept, ``thinking`` and ``token_budget`` are dropped, ``tool_use`` and ``tool_result`` become
one bounded line (an artifact is named by its title and type, with its first lines). The
top-level ``text`` is used for a message without text blocks, and for a human message whose
``text`` is longer than its blocks (real exports cut the block short); an assistant's
top-level ``text`` is never preferred, because it joins the thinking with the answer.
Attachments add their file name and the first lines of their ``extracted_content``
(:data:`ATTACHMENT_LINES` lines, :data:`ATTACHMENT_CHARS` characters); ``files`` add their
names. A message left with no text is skipped, and counted.

Branches: newer exports give each message a ``parent_message_uuid``. Retrying an answer or
editing a prompt makes a second child; the branch kept is the one that leads to the latest
leaf (by ``created_at``, then by position), walked back to the root. Without parents the
messages are taken in file order.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memtrove.mine.exchanges import ASSISTANT, USER, Conversation, Message, Skips, word
from memtrove.mine.json_stream import export_head, json_items
from memtrove.text import parse_iso_datetime, scrub

__all__ = ["ATTACHMENT_CHARS", "ATTACHMENT_LINES", "LABEL", "SUMMARY_CHARS", "read", "sniff"]

LABEL = "claude-ai"
SUMMARY_CHARS = 200
"""The longest tool summary, in characters (one line)."""
ATTACHMENT_LINES = 5
ATTACHMENT_CHARS = 500
USER_SPEAKER = "User"
ASSISTANT_SPEAKER = "Claude"
_SKIPPED_BLOCKS = frozenset({"thinking", "redacted_thinking", "token_budget"})


def sniff(path: Path, head: bytes) -> bool:
    """A ``.json`` list whose first conversation names ``chat_messages`` (or, with a long
    summary pushing that key past the head, one that starts like a conversation), or the
    export zip whose ``conversations.json`` does."""
    read = export_head(path, head)
    if read is None:
        return False
    head = read
    stripped = head.lstrip(b" \t\r\n\xef\xbb\xbf")
    if not stripped.startswith((b"[", b"{")):
        return False
    if b'"chat_messages"' in head:
        return True
    return b'"uuid"' in head and b'"summary"' in head and b'"mapping"' not in head


def read(path: Path, skips: Skips) -> Iterator[Conversation]:
    """The conversations of an export, each as the branch that continues to its latest leaf."""
    for index, item in enumerate(json_items(path, skips)):
        if isinstance(item, dict) and "chat_messages" not in item and _is_conversation(item):
            skips.skip("no messages")
            continue
        if not isinstance(item, dict) or not isinstance(item.get("chat_messages"), list):
            skips.skip("not a conversation")
            continue
        conversation = _conversation(path, index, item, skips)
        if conversation is not None:
            yield conversation


def _is_conversation(item: dict[str, Any]) -> bool:
    return "uuid" in item and ("name" in item or "created_at" in item)


def _conversation(
    path: Path, index: int, item: dict[str, Any], skips: Skips
) -> Conversation | None:
    raw = [message for message in item["chat_messages"] if isinstance(message, dict)]
    if len(raw) != len(item["chat_messages"]):
        skips.skip("unreadable message", len(item["chat_messages"]) - len(raw))
    fallback = parse_iso_datetime(item.get("created_at"))
    messages: list[Message] = []
    for message in _branch(raw):
        kept = _message(message, fallback, skips)
        if kept is not None:
            messages.append(kept)
    if not messages:
        skips.skip("no messages")
        return None
    identity, name = item.get("uuid"), item.get("name")
    return Conversation(
        format=LABEL,
        source=path,
        conversation_id=scrub(identity) if isinstance(identity, str) and identity else str(index),
        title=scrub(name).strip() or None if isinstance(name, str) else None,
        messages=tuple(messages),
    )


def _branch(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages from the root to the latest leaf (file order when there are no parents)."""
    ids = {m["uuid"]: n for n, m in enumerate(messages) if isinstance(m.get("uuid"), str)}
    parents = [m.get("parent_message_uuid") for m in messages]
    if not any(isinstance(parent, str) and parent in ids for parent in parents):
        return messages
    has_child = {ids[parent] for parent in parents if isinstance(parent, str) and parent in ids}
    # only cycles (each message another's parent: a damaged file) leave no leaf: then the
    # newest message ends the branch, and the walk stops where it comes round again
    leaves = [n for n in range(len(messages)) if n not in has_child] or list(range(len(messages)))
    newest = max(leaves, key=lambda n: (str(_stamp(messages[n]) or ""), n))
    chain: list[int] = []
    seen: set[int] = set()
    position: int | None = newest
    while position is not None and position not in seen:
        seen.add(position)
        chain.append(position)
        parent = messages[position].get("parent_message_uuid")
        position = ids.get(parent) if isinstance(parent, str) else None
    return [messages[n] for n in reversed(chain)]


def _stamp(message: dict[str, Any]) -> str | None:
    return parse_iso_datetime(message.get("created_at"))


def _message(message: dict[str, Any], fallback: str | None, skips: Skips) -> Message | None:
    sender = message.get("sender")
    if sender not in ("human", "assistant"):
        skips.skip("unreadable message")
        return None
    human = sender == "human"
    pieces = _blocks(message.get("content"), human)
    raw_text = message.get("text")
    top = raw_text if isinstance(raw_text, str) else ""
    block_text = "\n\n".join(piece for piece, is_text in pieces if is_text)
    if top.strip() and (not block_text or (human and len(top.strip()) > len(block_text))):
        pieces = [(top.strip(), True), *((p, t) for p, t in pieces if not t)]
    pieces.extend((line, False) for line in _attachments(message))
    text = scrub("\n\n".join(piece for piece, _ in pieces)).strip()
    if not text:
        skips.skip("empty message")
        return None
    identity = message.get("uuid")
    return Message(
        role=USER if human else ASSISTANT,
        speaker=USER_SPEAKER if human else ASSISTANT_SPEAKER,
        text=text,
        timestamp=_stamp(message) or fallback,
        key=identity if isinstance(identity, str) and identity else None,
    )


def _blocks(content: object, human: bool) -> list[tuple[str, bool]]:
    """(text, is_text_block) for each block kept, in order."""
    if not isinstance(content, list):
        return []
    pieces: list[tuple[str, bool]] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = word(block.get("type"))
        if kind in _SKIPPED_BLOCKS:
            continue
        if kind == "text":
            text = block.get("text")
            if isinstance(text, str) and text.strip():
                pieces.append((text.strip(), True))
        elif kind == "tool_use":
            pieces.append((_tool_use(block), False))
        elif kind == "tool_result":
            summary = _tool_result(block)
            if summary:
                pieces.append((summary, False))
    return pieces


def _tool_use(block: dict[str, Any]) -> str:
    name = block.get("name") if isinstance(block.get("name"), str) else "tool"
    arguments = block.get("input")
    if name == "artifacts" and isinstance(arguments, dict):
        title = arguments.get("title") or arguments.get("id") or "untitled"
        kind = arguments.get("type")
        command = arguments.get("command")
        about = ", ".join(str(x) for x in (kind, command) if isinstance(x, str) and x)
        head = _first_lines(arguments.get("content"), 3, SUMMARY_CHARS)
        line = f"[artifact {_one_line(title, 80)}" + (f" ({about})" if about else "") + "]"
        return f"{line}\n{head}" if head else line
    try:
        shown = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        shown = ""
    return f"[tool {_one_line(name, 60)}: {_one_line(shown, SUMMARY_CHARS)}]"


def _tool_result(block: dict[str, Any]) -> str:
    name = block.get("name") if isinstance(block.get("name"), str) else ""
    error = block.get("is_error") is True
    if name == "artifacts" and not error:
        return ""  # the artifact's own "OK": its tool_use already names it
    content = block.get("content")
    texts: list[str] = []
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        texts.extend(
            str(part["text"])
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    shown = _one_line(" ".join(texts), SUMMARY_CHARS)
    if not shown:
        return ""
    return f"[tool {'error' if error else 'result'}: {shown}]"


def _attachments(message: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    attachments = message.get("attachments")
    for attachment in attachments if isinstance(attachments, list) else []:
        if not isinstance(attachment, dict):
            continue
        name = attachment.get("file_name")
        label = _one_line(name, 120) if isinstance(name, str) and name.strip() else "attachment"
        excerpt = _first_lines(attachment.get("extracted_content"), ATTACHMENT_LINES)
        lines.append(f"[attachment {label}]" + (f"\n{excerpt}" if excerpt else ""))
    files = message.get("files")
    for item in files if isinstance(files, list) else []:
        name = item.get("file_name") if isinstance(item, dict) else None
        if isinstance(name, str) and name.strip():
            lines.append(f"[file {_one_line(name, 120)}]")
    return lines


def _first_lines(value: object, count: int, limit: int = ATTACHMENT_CHARS) -> str:
    if not isinstance(value, str):
        return ""
    lines = [line.rstrip() for line in value.strip().splitlines()[:count]]
    text = "\n".join(lines)
    more = len(text) > limit or len(value.strip().splitlines()) > count
    return (text[:limit].rstrip() + " …") if more else text


def _one_line(value: object, limit: int) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
