"""LoCoMo through conversation import: each session written out as a Claude Code session
file, mined (``Vault.mine``), and retrieved as exchange documents.

The first speaker of a conversation plays the user, the second the assistant; every turn's
``dia_id`` is its line's uuid (and its message id), so each mined exchange knows the turns
it holds. A retrieved exchange stands for its turns in order, and the ranking of turns
that the metrics read is the retrieved exchanges' turns, first ones first: R@10 counts the
evidence among the first ten turns, as the per-turn evaluation does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from memtrove.mine.exchanges import Skips, exchanges
from memtrove.mine.formats import claude_code
from memtrove.mine.writer import document_path
from memtrove.text import to_iso

__all__ = ["exchange_turns", "write_sessions"]


def write_sessions(
    sample: Mapping[str, Any], turns: Sequence[Any], folder: Path, parse_date: Any
) -> None:
    """One ``.jsonl`` per session of ``sample`` in ``folder`` (``turns``: its :class:`Turn`\\ s)."""
    conversation = sample["conversation"]
    first = str(conversation.get("speaker_a", "")).strip()
    by_session: dict[int, list[Any]] = {}
    for turn in turns:
        by_session.setdefault(turn.session, []).append(turn)
    name = str(sample.get("sample_id", "locomo"))
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


def exchange_turns(folder: Path) -> dict[str, list[str]]:
    """Each mined exchange document's path -> the dialogue ids of its turns, in order."""
    found: dict[str, list[str]] = {}
    for path in sorted(folder.glob("session-*.jsonl")):
        for conversation in claude_code.read(path, Skips()):
            for exchange in exchanges(conversation):
                keys = [m.key for m in exchange.messages if m.key]
                found[document_path(exchange)] = keys
    return found
