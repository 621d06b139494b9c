"""A field that names a kind (``type``, ``content_type``, ``role``, ``subtype``) holding a
list or an object, as in a damaged or crafted export, costs its message only: each reader
on a real file of bench/mine with such a field goes on, where it used to stop the whole run
with a TypeError. A Claude.ai conversation whose messages are each other's parents (no leaf)
is read too."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from memtrove.mine.exchanges import Skips, exchanges
from memtrove.mine.formats import reader

BENCH = Path(__file__).resolve().parents[3] / "shared" / "bench" / "mine"

pytestmark = pytest.mark.skipif(not BENCH.is_dir(), reason="bench/mine is not here")


def _read(label: str, path: Path) -> tuple[dict[str, list[str]], Skips]:
    """Each conversation's exchange keys, and what the reader skipped."""
    skips = Skips()
    found: dict[str, list[str]] = {}
    for conversation in reader(label).read(path, skips):
        keys = [exchange.key for exchange in exchanges(conversation)]
        found.setdefault(conversation.conversation_id, []).extend(keys)
    return found, skips


def _damage(node: Any, keys: frozenset[str], value: Any) -> int:
    """Put ``value`` under every key of ``keys`` in ``node``; how many it replaced."""
    replaced = 0
    if isinstance(node, dict):
        for key in list(node):
            if key in keys and isinstance(node[key], str):
                node[key] = value
                replaced += 1
            else:
                replaced += _damage(node[key], keys, value)
    elif isinstance(node, list):
        for item in node:
            replaced += _damage(item, keys, value)
    return replaced


@pytest.mark.parametrize("value", [["text"], {"type": "text"}])
@pytest.mark.parametrize(
    ("label", "source", "keys"),
    [
        ("chatgpt", "chatgpt/pkuppens-my_chat_gpt__conversations.json", {"content_type"}),
        ("claude-ai", "claude-ai/cl0ver012-chatlore__conversations.json", {"type"}),
    ],
)
def test_one_damaged_conversation_of_an_export_leaves_the_others_whole(
    tmp_path: Path, label: str, source: str, keys: set[str], value: Any
) -> None:
    original = BENCH / source
    items = json.loads(original.read_text(encoding="utf-8"))
    target = next(n for n, item in enumerate(items) if _damage(item, frozenset(keys), value))
    damaged = tmp_path / original.name
    damaged.write_text(json.dumps(items), encoding="utf-8")
    before, _ = _read(label, original)
    after, _ = _read(label, damaged)
    damaged_id = str(items[target].get("id") or items[target].get("uuid"))
    assert {k: v for k, v in after.items() if k != damaged_id} == {
        k: v for k, v in before.items() if k != damaged_id
    }
    assert len(before) > 1


@pytest.mark.parametrize(
    ("label", "source", "field"),
    [
        ("claude-code", "claude-code/marot-spotter__tool_heavy.jsonl", ("type",)),
        (
            "codex",
            "codex/codemie-ai-codemie-code__rollout-2026-05-11T11-26-55-"
            "019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
            ("payload", "type"),
        ),
    ],
)
def test_one_damaged_line_costs_that_line_only(
    tmp_path: Path, label: str, source: str, field: tuple[str, ...]
) -> None:
    original = BENCH / source
    lines = original.read_text(encoding="utf-8").splitlines()
    before, _ = _read(label, original)
    for position, line in enumerate(lines):
        entry = json.loads(line)
        holder = entry
        for key in field[:-1]:
            holder = holder.get(key) if isinstance(holder, dict) else None
        if isinstance(holder, dict) and holder.get(field[-1]) in ("user", "message"):
            holder[field[-1]] = [holder[field[-1]]]
            lines[position] = json.dumps(entry)
            break
    else:
        raise AssertionError("no line to damage")
    damaged = tmp_path / original.name
    damaged.write_text("\n".join(lines) + "\n", encoding="utf-8")
    after, _ = _read(label, damaged)
    assert set(after) == set(before)
    kept = sum(map(len, after.values()))
    assert sum(map(len, before.values())) - 1 <= kept


def test_a_slack_message_with_an_object_for_its_subtype_is_skipped(tmp_path: Path) -> None:
    export = tmp_path / "export"
    shutil.copytree(BENCH / "slack" / "houstondatavis-slack-export", export)
    day = next(p for p in sorted(export.rglob("*.json")) if p.parent != export)
    day.chmod(0o644)
    messages = json.loads(day.read_text(encoding="utf-8"))
    messages[0]["subtype"] = {"name": "bot_message"}
    day.write_text(json.dumps(messages), encoding="utf-8")
    after, skips = _read("slack", export)
    before, _ = _read("slack", BENCH / "slack" / "houstondatavis-slack-export")
    assert skips["malformed message"] >= 1
    assert 0 < sum(map(len, after.values())) <= sum(map(len, before.values()))


def test_a_claude_ai_conversation_made_only_of_a_cycle_is_read(tmp_path: Path) -> None:
    items = json.loads(
        (BENCH / "claude-ai" / "cl0ver012-chatlore__conversations.json").read_text("utf-8")
    )
    conversation = next(item for item in items if len(item["chat_messages"]) >= 2)
    first, second = conversation["chat_messages"][:2]
    first["parent_message_uuid"], second["parent_message_uuid"] = second["uuid"], first["uuid"]
    conversation["chat_messages"] = [first, second]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([conversation]), encoding="utf-8")
    found, _ = _read("claude-ai", path)
    assert list(found) == [conversation["uuid"]] and found[conversation["uuid"]]
