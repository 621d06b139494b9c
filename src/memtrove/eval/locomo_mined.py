"""LoCoMo through conversation import: each session written out as a Claude Code session
file (or a conversation of a ChatGPT export), mined (``Vault.mining.mine``), and retrieved as
exchange documents.

The first speaker of a conversation plays the user, the second the assistant; every turn's
``dia_id`` is its line's uuid (and its message id), so each mined exchange knows the turns
it holds. A retrieved exchange stands for its turns, and R@k counts the evidence among the
turns of the first k exchanges, as a search of k returns them (MRR: the rank of the first
exchange holding some). Ten exchanges hold about twenty turns, so the report's notes add
the recall over the first ten turns of the exchanges retrieved, the same amount of text as
ten per-turn documents. On LoCoMo dev the mined R@10 is at or above the per-turn one for
every method; at equal text BM25 is the same and the vector methods .03-.06 lower, which
is the unit, not the import: the per-turn ranking itself, read as the exchanges of its
turns, scores .762 over its first ten turns against its .788 (see the README's
Conversation import).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from memtrove.mine.exchanges import Skips, exchanges
from memtrove.mine.formats import chatgpt, claude_code
from memtrove.mine.writer import document_path
from memtrove.text import to_iso

__all__ = ["FORMATS", "exchange_turns", "write_sessions"]


FORMATS = ("claude-code", "chatgpt")


def write_sessions(
    sample: Mapping[str, Any],
    turns: Sequence[Any],
    folder: Path,
    parse_date: Any,
    format: str = "claude-code",
) -> None:
    """``sample``'s sessions in ``folder`` (``turns``: its :class:`Turn`\\ s): one Claude
    Code ``.jsonl`` per session, or (``chatgpt``) one ``conversations.json`` export holding
    a conversation per session."""
    conversation = sample["conversation"]
    first = str(conversation.get("speaker_a", "")).strip()
    by_session: dict[int, list[Any]] = {}
    for turn in turns:
        by_session.setdefault(turn.session, []).append(turn)
    name = str(sample.get("sample_id", "locomo"))
    if format == "chatgpt":
        exported = [
            _chatgpt_conversation(f"{name}-session-{number}", items, first, parse_date)
            for number, items in sorted(by_session.items())
        ]
        (folder / "conversations.json").write_text(json.dumps(exported), encoding="utf-8")
        return
    for number, items in sorted(by_session.items()):
        moment = parse_date(items[0].session_date) if items[0].session_date else None
        lines = []
        parent: str | None = None
        for offset, turn in enumerate(items):
            role = "user" if turn.speaker == first else "assistant"
            text = turn.text + (f" [image: {turn.caption}]" if turn.caption else "")
            message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}]}
            if role == "assistant":
                message["id"] = turn.dia_id
            record: dict[str, Any] = {
                "type": role,
                "uuid": turn.dia_id,
                "parentUuid": parent,
                "sessionId": f"{name}-session-{number}",
                "message": message,
            }
            if moment is not None:
                record["timestamp"] = to_iso(moment + timedelta(seconds=offset))
            lines.append(json.dumps(record, ensure_ascii=False))
            parent = turn.dia_id
        path = folder / f"session-{number:03d}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _chatgpt_conversation(
    identity: str, items: Sequence[Any], first: str, parse_date: Any
) -> dict[str, Any]:
    moment = parse_date(items[0].session_date) if items[0].session_date else None
    mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None}}
    parent = "root"
    for offset, turn in enumerate(items):
        mapping[parent].setdefault("children", []).append(turn.dia_id)
        mapping[turn.dia_id] = {
            "id": turn.dia_id,
            "parent": parent,
            "children": [],
            "message": {
                "id": turn.dia_id,
                "author": {"role": "user" if turn.speaker == first else "assistant"},
                "create_time": moment.timestamp() + offset if moment else None,
                "content": {
                    "content_type": "text",
                    "parts": [turn.text + (f" [image: {turn.caption}]" if turn.caption else "")],
                },
                "recipient": "all",
            },
        }
        parent = turn.dia_id
    return {"id": identity, "title": identity, "mapping": mapping, "current_node": parent}


def exchange_turns(folder: Path, format: str = "claude-code") -> dict[str, list[str]]:
    """Each mined exchange document's path -> the dialogue ids of its turns, in order."""
    found: dict[str, list[str]] = {}
    module = chatgpt if format == "chatgpt" else claude_code
    pattern = "conversations.json" if format == "chatgpt" else "session-*.jsonl"
    for path in sorted(folder.glob(pattern)):
        for conversation in module.read(path, Skips()):
            for exchange in exchanges(conversation):
                keys = [m.key for m in exchange.messages if m.key]
                found[document_path(exchange)] = keys
    return found
