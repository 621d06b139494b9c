"""ChatGPT data export: ``conversations.json`` (a list of conversations, or one conversation).

Each conversation maps node ids to ``{id, parent, children, message}``. The thread the user
sees is the path from ``current_node`` up through ``parent`` to the root: regenerated
answers and edited prompts sit on other branches and are left out. Without a usable
``current_node`` the newest leaf (latest message time) stands in for it.

On that path:

- skipped (counted): nodes without a message, ``system`` messages, messages marked
  ``is_visually_hidden_from_conversation``, custom instructions (``user_editable_context``),
  reasoning (``thoughts``, ``reasoning_recap``) and messages with no text;
- ``user`` messages are the user's turns; ``assistant`` and ``tool`` messages are the reply;
- an assistant message addressed to a tool (``recipient`` other than ``all``: browsing,
  plugins, code) and every ``tool`` message (browsing ``tether_*`` pages and quotes, tool
  errors, plugin and code output) become one bounded line such as
  ``[tool call browser: open_url("...")]`` or ``[browsing: URL ...]``, never a page dump;
- multimodal parts are named (``[image]``, ``[audio]``, ``[video]``, ``[file]``), and the
  private-use citation marks of recent exports are removed.

``create_time`` (epoch seconds) becomes UTC ISO; a message without one takes its
conversation's. The file is streamed (:mod:`memtrove.mine.json_stream`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memtrove.mine.exchanges import ASSISTANT, USER, Conversation, Message, Skips, word
from memtrove.mine.json_stream import export_head, json_items
from memtrove.text import iso_from_timestamp, scrub

__all__ = ["LABEL", "SUMMARY_CHARS", "read", "sniff"]

LABEL = "chatgpt"
SUMMARY_CHARS = 200
"""The longest tool or browsing summary, in characters (one line)."""
USER_SPEAKER = "User"
ASSISTANT_SPEAKER = "ChatGPT"
_REASONING = frozenset({"thoughts", "reasoning_recap"})
_CITATION = re.compile("[\ue200-\ue2ff]")  # citation marks of 2024+ answers
_PARTS = {
    "image_asset_pointer": "[image]",
    "audio_asset_pointer": "[audio]",
    "real_time_user_audio_video_asset_pointer": "[video]",
    "video_container_asset_pointer": "[video]",
    "file_asset_pointer": "[file]",
}


def sniff(path: Path, head: bytes) -> bool:
    """A ``.json`` file whose first bytes open a conversation with a ``mapping`` tree, or
    the export zip whose ``conversations.json`` does."""
    read = export_head(path, head)
    if read is None:
        return False
    head = read
    start = head.lstrip(b" \t\r\n\xef\xbb\xbf")[:1]
    return start in (b"[", b"{") and (b'"mapping"' in head or b'"current_node"' in head)


def read(path: Path, skips: Skips) -> Iterator[Conversation]:
    """The conversations of an export, each as the branch the user kept."""
    for index, item in enumerate(json_items(path, skips)):
        if not isinstance(item, dict) or not isinstance(item.get("mapping"), dict):
            skips.skip("not a conversation")
            continue
        conversation = _conversation(path, index, item, skips)
        if conversation is None:
            continue
        yield conversation


def _conversation(
    path: Path, index: int, item: dict[str, Any], skips: Skips
) -> Conversation | None:
    mapping: dict[str, Any] = item["mapping"]
    fallback = _iso(item.get("create_time"))
    messages: list[Message] = []
    for node_id in _branch(mapping, item.get("current_node")):
        node = mapping.get(node_id)
        message = node.get("message") if isinstance(node, dict) else None
        if not isinstance(message, dict):
            continue  # the root and other empty nodes
        kept = _message(node_id, message, fallback, skips)
        if kept is not None:
            messages.append(kept)
    if not messages:
        skips.skip("no messages")
        return None
    identity = item.get("conversation_id") or item.get("id")
    title = item.get("title")
    return Conversation(
        format=LABEL,
        source=path,
        conversation_id=scrub(identity) if isinstance(identity, str) and identity else str(index),
        title=scrub(title).strip() or None if isinstance(title, str) else None,
        messages=tuple(messages),
    )


def _branch(mapping: dict[str, Any], current: object) -> list[str]:
    """Node ids from the root down to ``current`` (else to the newest leaf)."""
    if not isinstance(current, str) or current not in mapping:
        current = _newest_leaf(mapping)
    path: list[str] = []
    seen: set[str] = set()
    node_id: object = current
    while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        path.append(node_id)
        node = mapping[node_id]
        node_id = node.get("parent") if isinstance(node, dict) else None
    path.reverse()
    return path


def _newest_leaf(mapping: dict[str, Any]) -> str | None:
    best: tuple[float, int] | None = None
    chosen: str | None = None
    for order, (node_id, node) in enumerate(mapping.items()):
        if not isinstance(node, dict) or node.get("children"):
            continue
        message = node.get("message")
        stamp = message.get("create_time") if isinstance(message, dict) else None
        key = (
            float(stamp) if isinstance(stamp, int | float) and _finite(stamp) else -math.inf,
            order,
        )
        if best is None or key > best:
            best, chosen = key, node_id
    return chosen


def _message(
    node_id: str, message: dict[str, Any], fallback: str | None, skips: Skips
) -> Message | None:
    author = message.get("author")
    role = author.get("role") if isinstance(author, dict) else None
    name = author.get("name") if isinstance(author, dict) else None
    content = message.get("content")
    kind = word(content.get("content_type")) if isinstance(content, dict) else None
    metadata = message.get("metadata")
    if isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"):
        skips.skip("hidden message")
        return None
    if role == "system":
        skips.skip("system message")
        return None
    if kind == "user_editable_context":
        skips.skip("custom instructions")
        return None
    if kind in _REASONING:
        skips.skip("reasoning")
        return None
    if not isinstance(content, dict) or role not in ("user", "assistant", "tool"):
        skips.skip("unreadable message")
        return None
    body = _text(content)
    recipient = message.get("recipient")
    if role == "tool":
        text = _tool_summary(str(kind), name, content, body)
    elif role == "assistant" and isinstance(recipient, str) and recipient != "all":
        call = _one_line(body, SUMMARY_CHARS)
        text = f"[tool call {_one_line(recipient, 60)}: {call}]" if call else ""
    elif kind == "code":
        language = content.get("language")
        fence = language if isinstance(language, str) and language != "unknown" else ""
        text = f"```{fence}\n{body.strip()}\n```" if body.strip() else ""
    else:
        text = body
    if not text.isascii():
        text = _CITATION.sub("", scrub(text))
    text = text.strip()
    if not text:
        skips.skip("empty message")
        return None
    user = role == "user"
    return Message(
        role=USER if user else ASSISTANT,
        speaker=USER_SPEAKER if user else ASSISTANT_SPEAKER,
        text=text,
        timestamp=_iso(message.get("create_time")) or fallback,
        key=node_id,
    )


def _text(content: dict[str, Any]) -> str:
    """The readable text of a content object: its string parts, named media, or ``text``."""
    parts = content.get("parts")
    if isinstance(parts, list):
        pieces: list[str] = []
        for part in parts:
            if isinstance(part, str):
                if part.strip():
                    pieces.append(part)
            elif isinstance(part, dict):
                pieces.append(_part(part))
        return "\n\n".join(pieces)
    for key in ("text", "result", "summary"):
        value = content.get(key)
        if isinstance(value, str):
            return value
    return ""


def _part(part: dict[str, Any]) -> str:
    kind = part.get("content_type")
    if kind == "audio_transcription" and isinstance(part.get("text"), str):
        return str(part["text"])
    if isinstance(kind, str):
        return _PARTS.get(kind, f"[{_one_line(kind, 40)}]")
    return "[attachment]"


def _tool_summary(kind: str, name: object, content: dict[str, Any], body: str) -> str:
    tool = _one_line(name, 60) if isinstance(name, str) and name else "tool"
    if kind == "tether_browsing_display":
        return f"[browsing: {_one_line(body, SUMMARY_CHARS)}]"
    if kind == "tether_quote":
        title, url = content.get("title"), content.get("url")
        where = " ".join(str(x) for x in (title, url) if isinstance(x, str) and x)
        return f"[quote {_one_line(where, 120)}: {_one_line(body, SUMMARY_CHARS)}]"
    if kind == "system_error":
        return f"[{tool} error: {_one_line(body, SUMMARY_CHARS)}]"
    if not body.strip():
        return ""
    return f"[{tool} result: {_one_line(body, SUMMARY_CHARS)}]"


def _one_line(value: object, limit: int) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _iso(value: object) -> str | None:
    """Epoch seconds as UTC ISO; None when missing or out of range."""
    if not isinstance(value, int | float) or not _finite(value):
        return None
    try:
        return iso_from_timestamp(float(value))
    except (OverflowError, OSError, ValueError):
        return None
