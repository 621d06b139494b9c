"""The extraction queue: filtering, the cap, redaction of realistic tool output, nudges."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memtrove.memory.queue import QUEUE_LIMIT, ExtractionQueue, is_filtered_tool, nudge_text
from memtrove.security.redaction import redact, redact_text

SECRETS = {
    "openai": "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z",
    "github": "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "slack": "xoxb-2142893716-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "stripe": "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "url password": "correct-horse-battery",
    "env password": "hunter2-but-longer",
    "bearer": "tok_8f3k2j5h1g9d7s6a",
    "private key": "MIIEowIBAAKCAQEA7bq3",
}


def realistic_calls() -> list[dict[str, Any]]:
    return [
        {
            "tool_name": "Bash",
            "tool_input": {"command": f"curl -H 'Authorization: Bearer {SECRETS['bearer']}' api/x"},
            "tool_response": {"stdout": '{"ok": true}', "stderr": ""},
        },
        {
            "tool_name": "Read",
            "tool_input": {"file_path": "/app/.env"},
            "tool_response": (
                f"OPENAI_API_KEY={SECRETS['openai']}\nGITHUB_TOKEN={SECRETS['github']}\n"
                f"AWS_ACCESS_KEY_ID={SECRETS['aws']}\nDB_PASSWORD={SECRETS['env password']}\n"
                f"DATABASE_URL=postgres://app:{SECRETS['url password']}@db:5432/main\n"
                f"SLACK_BOT={SECRETS['slack']}\nSTRIPE={SECRETS['stripe']}\nPORT=8080\n"
            ),
        },
        {
            "tool_name": "Bash",
            "tool_input": {"command": "cat ~/.ssh/id_rsa"},
            "tool_response": "-----BEGIN RSA PRIVATE KEY-----\n"
            + SECRETS["private key"]
            + "\nabcdef\n-----END RSA PRIVATE KEY-----\n",
        },
        {
            "tool_name": "WebFetch",
            "tool_input": {"url": "https://api.example.com", "headers": {"Authorization": "x"}},
            "tool_response": {"session": {"token": SECRETS["jwt"]}, "max_tokens": 512},
        },
    ]


def test_secrets_in_realistic_tool_calls_never_reach_the_disk(tmp_path: Path) -> None:
    queue = ExtractionQueue(tmp_path / "queue")
    assert queue.append("s1", realistic_calls()) == 4
    on_disk = queue.path("s1").read_text(encoding="utf-8")
    for name, secret in SECRETS.items():
        assert secret not in on_disk, name
    assert "[REDACTED" in on_disk and "PORT=8080" in on_disk and '"max_tokens": 512' in on_disk
    assert "/app/.env" in on_disk  # what is not secret survives


def test_ordinary_text_is_left_alone() -> None:
    for text in [
        "The tokenizer splits text; the password reset flow is documented.",
        "max_tokens: 1500 and PIN=1234",
        "https://example.com/path?q=1",
        "git commit -m 'fix token refresh'",
    ]:
        assert redact_text(text) == text
    assert redact({"count": 3, "items": ["a", "b"]}) == {"count": 3, "items": ["a", "b"]}


def test_filtering_and_draining_calls(tmp_path: Path) -> None:
    queue = ExtractionQueue(tmp_path / "queue")
    calls = [{"tool_name": name, "tool_input": {}, "tool_response": "x"} for name in
             ("Task", "skill", "Agent", "mcp__memtrove__search", "memtrove_status", "Edit")]  # fmt: skip
    assert queue.append("s", calls) == 1
    assert [c["tool_name"] for c in queue.peek("s")] == ["Edit"]
    assert is_filtered_tool("mcp__memtrove__memory_recall") and not is_filtered_tool("Bash")
    queue.note_nudge("s")
    remember = [{"tool_name": "mcp__memtrove__memory_remember", "tool_input": {}}]
    assert queue.append("s", remember) == 0
    assert queue.peek("s") == [] and queue.missed("s") == 0


def test_the_queue_keeps_the_newest_twenty(tmp_path: Path) -> None:
    queue = ExtractionQueue(tmp_path / "queue")
    for number in range(25):
        queue.append("s", [{"tool_name": "Bash", "tool_input": {"n": number}, "tool_response": ""}])
    kept = queue.peek("s")
    assert len(kept) == QUEUE_LIMIT
    assert [c["input"]["n"] for c in kept] == list(range(5, 25))


def test_peek_is_read_only_and_drain_empties(tmp_path: Path) -> None:
    queue = ExtractionQueue(tmp_path / "queue")
    queue.append("weird/../session id", [{"tool_name": "Bash", "tool_response": "ok"}])
    assert queue.path("weird/../session id").parent == tmp_path / "queue"
    payload = queue.payload("weird/../session id", "proj", "global")
    assert payload is not None and payload["projectStore"] == "proj"
    assert len(queue.peek("weird/../session id")) == 1
    assert queue.drain("weird/../session id") == 1
    assert queue.payload("weird/../session id", "proj", "global") is None


def test_huge_outputs_are_clipped(tmp_path: Path) -> None:
    queue = ExtractionQueue(tmp_path / "queue")
    queue.append("s", [{"tool_name": "Read", "tool_response": "x" * 100_000}])
    record = queue.peek("s")[0]
    assert len(record["output"]) < 5000 and "more characters" in record["output"]
    json.dumps(record)


@pytest.mark.parametrize(
    ("missed", "marker"),
    [
        (0, "When you reach a pause"),
        (1, "When you reach a pause"),
        (2, "Reminder:"),
        (3, "OVERDUE"),
    ],
)
def test_nudges_escalate(missed: int, marker: str) -> None:
    text = nudge_text("abc-123", 4, missed)
    assert text.startswith("<memory-extraction>") and marker in text
    assert 'session_id="abc-123"' in text  # the id is never shouted


def test_unencodable_text_is_replaced_not_lost(tmp_path: Path) -> None:
    queue = ExtractionQueue(tmp_path / "queue")
    calls = [{"tool_name": "Bash\ud800", "tool_input": {"command": "echo \ud800 hi"},
              "tool_response": "x\udfff DB_PASSWORD=hunter2-but-longer"}]  # fmt: skip
    assert queue.append("s\ud800", calls) == 1
    [kept] = queue.peek("s\ud800")
    assert kept["input"] == {"command": "echo \ufffd hi"}
    assert kept["output"] == "x\ufffd DB_PASSWORD=[REDACTED:password]"


def test_compaction_holds_the_nudge_back_uncounted(tmp_path: Path) -> None:
    queue = ExtractionQueue(tmp_path / "queue")
    session = "../../etc/passwd\u0000 s1"  # any id: files stay inside the folder
    queue.append(session, [{"tool_name": "Bash", "tool_response": "deployed to ams"}])
    queue.begin_compaction(session)
    assert queue.compacting(session) and not queue.compacting("other")
    assert queue.nudge(session, "How do we deploy?") == ""
    assert queue.missed(session) == 0 and len(queue.peek(session)) == 1
    assert all(path.parent == tmp_path / "queue" for path in (tmp_path / "queue").iterdir())
    assert queue.end_compaction(session) and not queue.end_compaction(session)
    assert "When you reach a pause" in queue.nudge(session, "How do we deploy?")
    assert queue.nudge(session, "  /COMPACT focus on the deploy") == ""
    assert queue.missed(session) == 1
    assert queue.nudge("", "x") == "" and not queue.compacting("") and not queue.end_compaction("")
    queue.begin_compaction("")  # nothing to mark
    assert not any(p.suffix == ".compacting" for p in (tmp_path / "queue").iterdir())
