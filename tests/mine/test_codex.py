"""The Codex reader on every rollout in bench/mine/codex. Expected turns, calls and times
were taken by reading the files directly (each line's type, payload type, role and text)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtrove.mine.exchanges import Conversation, Exchange, Skips, exchanges
from memtrove.mine.formats import codex, reader

FOLDER = Path(__file__).resolve().parents[3] / "shared" / "bench" / "mine" / "codex"
REAL = FOLDER / (
    "codemie-ai-codemie-code__rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
)
OLD = FOLDER / (
    "codemie-ai-codemie-code__rollout-2026-01-02T19-00-00-019b7f95-0000-7000-0000-000000000001.jsonl"
)
SYNTHETIC = FOLDER / (
    "daaain-claude-code-log__rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl"
)

needs_bench = pytest.mark.skipif(not FOLDER.is_dir(), reason="bench/mine is not here")


def read(path: Path) -> tuple[list[Conversation], list[Exchange], Skips]:
    skips = Skips()
    conversations = list(codex.read(path, skips))
    return conversations, [e for c in conversations for e in exchanges(c)], skips


def test_the_module_is_the_codex_reader() -> None:
    assert reader("codex") is codex


@needs_bench
def test_every_rollout_is_sniffed_and_claude_code_is_not() -> None:
    for path in FOLDER.iterdir():
        assert codex.sniff(path, path.read_bytes()[:8192]), path.name
    for path in (FOLDER.parent / "claude-code").glob("*.jsonl"):
        assert not codex.sniff(path, path.read_bytes()[:8192]), path.name


@needs_bench
def test_the_real_session() -> None:
    conversations, found, skips = read(REAL)
    assert conversations[0].conversation_id == "019e1625-789d-76c0-80ab-3724b5ddb799"
    # 2 user turns (lines 5 and 21), each also an event_msg user_message (lines 6, 22)
    assert [e.messages[0].text for e in found] == [
        "show tools",
        "let's update the defailt context compart to 90 in env var",
    ]
    assert [e.speakers for e in found] == [("User", "Codex"), ("User", "Codex")]
    assert found[0].messages[0].timestamp == "2026-05-11T08:27:17Z"
    reply = found[1].messages[1].text
    # turn 2 holds 97 of the 99 function calls: exec_command 42, write_stdin 53, update_plan 2
    assert reply.count("[exec_command: ") == 42
    assert reply.count("[write_stdin") == 53
    assert reply.count("[update_plan") == 2
    assert reply.count("[apply_patch") == 3
    assert reply.count("[web_search: ") == 3
    assert "Implemented the default context compaction setting" in reply
    assert skips["reasoning"] == 25
    assert skips["developer message"] == 1
    assert skips["injected context"] == 1  # AGENTS.md + environment_context, one message
    assert "encrypted_content" not in reply


@needs_bench
def test_a_rollout_that_grew_keeps_its_first_exchange() -> None:
    _, one, _ = read(FOLDER / "codemie-ai-codemie-code__turn-1.jsonl")
    _, two, _ = read(FOLDER / "codemie-ai-codemie-code__turn-2.jsonl")
    assert [e.key for e in one] == [two[0].key]
    assert one[0].messages == two[0].messages
    assert two[1].messages[0].text == "What languages can you work with?"
    assert two[1].authored_at == "2026-05-12T10:01:02Z"  # the agent message, 10:01:02.100


@needs_bench
def test_user_text_only_in_events_and_calls_without_outputs() -> None:
    _, found, _ = read(FOLDER / "codemie-ai-codemie-code__turn-spawn-skill.jsonl")
    assert [e.messages[0].text for e in found] == ["run a review"]
    reply = found[0].messages[1].text.splitlines()
    assert reply == [
        "[exec_command: sed -n '1,50p' /home/user/.codex/plugins/cache/superpowers/skills/"
        "brainstorming/SKILL.md] -> ok",
        "[spawn_agent: review code]",  # no output
        "[wait_agent]",
    ]


@needs_bench
def test_the_older_shape_and_the_synthetic_one() -> None:
    _, found, _ = read(OLD)
    assert len(found) == 1 and found[0].messages[0].role == "assistant"  # no user message
    assert found[0].messages[0].text.splitlines() == [
        "[shell: ls -la] -> total 100",
        "[shell: cat nonexistent.txt] -> error: cat: nonexistent.txt: No such file or directory",
        "[shell: pwd] -> /path/to/codemie-code",
    ]
    _, found, skips = read(SYNTHETIC)
    assert found[0].messages[0].text == "List the synthetic files."
    assert found[0].messages[1].text.splitlines() == [
        "[exec_command: find . -maxdepth 1 -type f] -> ./alpha.txt",
        "[apply_patch: *** Begin Patch] -> Done!",
        '[mcp__synthetic__lookup: fixture] -> {"status":"ok"}',
        "The synthetic files are alpha.txt and beta.txt.",
    ]
    assert skips["future_synthetic_record record"] == 1
    assert skips["reasoning"] == 1


def test_a_malformed_line_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    records = [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "x"}},
        {
            "timestamp": "2026-01-01T00:00:01Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "hi there codex"}],
            },
        },
    ]
    text = "\n".join(json.dumps(r) for r in records) + "\n{oops\n[1, 2]\n"
    path.write_text(text, encoding="utf-8")
    _, found, skips = read(path)
    assert [e.messages[0].text for e in found] == ["hi there codex"]
    assert skips == {"malformed line": 1, "not a rollout record": 1}


def test_the_ide_extension_context_is_cut_to_the_request(tmp_path: Path) -> None:
    text = (
        "# Context from my IDE setup:\n\n## Active file: src/app.py\n\n## Open tabs:\n- app.py\n\n"
        "## My request for Codex:\nrename the handler to on_submit"
    )
    records = [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "ide"}},
        {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}},
        {"timestamp": "2026-01-01T00:00:02Z", "type": "event_msg",
         "payload": {"type": "user_message", "message": text}},
        {"timestamp": "2026-01-01T00:00:03Z", "type": "response_item",
         "payload": {"type": "message", "role": "assistant",
                     "content": [{"type": "output_text", "text": "Renamed it in src/app.py."}]}},
    ]  # fmt: skip
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    _, found, _ = read(path)
    assert [e.messages[0].text for e in found] == ["rename the handler to on_submit"]
    assert len(found) == 1 and found[0].messages[1].text == "Renamed it in src/app.py."
