"""handoff-generator's document and session_log row, from an LLM summary or by wording."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.capture.handoff import parse_summary
from memtrove.hooks.transcript import read_turns
from memtrove.models.registry import ModelSettings
from tests.capture.transcripts import BENCH, SESSION, SESSION_ONE, write_transcript
from tests.fakes.model_server import ModelServer

SUMMARY = """<summary><request><item>Fix the session cache timeouts</item></request>
<investigated><item>Redis pool exhaustion</item></investigated><learned></learned>
<completed><item>Pool raised to 50</item></completed><decided><item>Keep Redis</item></decided>
<open_questions><item>Is 50 enough at peak?</item></open_questions>
<next_steps><item>Load-test at twice the traffic</item></next_steps></summary>"""


def session_row(vault: Vault) -> tuple[object, ...]:
    row = vault._connection.execute(
        "SELECT handoff_path, summary, files_changed, ended_at FROM session_log WHERE session_id = ?",
        (SESSION,),
    ).fetchone()
    return tuple(row)


def test_parse_summary() -> None:
    summary = parse_summary(f"<think>hm</think>```xml\n{SUMMARY}\n```")
    assert summary is not None and summary.request == ("Fix the session cache timeouts",)
    assert summary.open_questions == ("Is 50 enough at peak?",) and summary.learned == ()
    assert parse_summary("no xml here") is None and parse_summary("<summary></summary>") is None


def test_the_regex_fallback_handoff(vault: Vault, tmp_path: Path) -> None:
    turns = read_turns(str(write_transcript(tmp_path / "t.jsonl", SESSION_ONE)))
    report = vault.capture.write_handoff(SESSION, turns)
    day = vault._clock().strftime("%Y-%m-%d")
    assert report.path == f"agent/handoffs/{day}-9f1e2d3c.md" and report.source == "heuristic"
    body = vault.get(f"_memtrove/{report.path}").body
    for heading in ("## Asked", "## Done", "## Decided", "## Files changed"):
        assert heading in body, heading
    assert "/project/app/cache.py" in body and 'type: "handoff"' in body
    path, summary, files, ended = session_row(vault)
    assert path == f"_memtrove/{report.path}" and json.loads(str(files)) == [
        "/project/app/cache.py"
    ]
    assert str(summary).startswith("Asked: The session cache") and ended
    # update_existing: the next Stop rewrites the same document.
    again = vault.capture.write_handoff(SESSION, turns)
    assert again.path == report.path and again.doc_id == report.doc_id


def test_the_llm_summary_and_its_failure(tmp_path: Path, model_server: ModelServer) -> None:
    turns = read_turns(str(write_transcript(tmp_path / "t.jsonl", SESSION_ONE)))
    settings = ModelSettings(llm_url=model_server.url)
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "c", models=settings) as vault:
        model_server.set_chat_reply(SUMMARY)
        report = vault.capture.write_handoff(SESSION, turns)
        body = vault.get(f"_memtrove/{report.path}").body
        assert report.source == "observer" and "## Open questions" in body
        assert "Load-test at twice the traffic" in body and "/project/app/cache.py" in body
        model_server.set_mode("chat", "malformed_json")
        failed = vault.capture.write_handoff(SESSION, turns)
        assert failed.source == "heuristic" and failed.llm_error
        assert "## Asked" in vault.get(f"_memtrove/{report.path}").body


def test_secrets_never_reach_the_handoff(vault: Vault, tmp_path: Path) -> None:
    from tests.capture.transcripts import assistant, user

    key = "sk-ant-api03-" + "A" * 40
    turns = read_turns(
        str(
            write_transcript(
                tmp_path / "t.jsonl", [user(f"use key {key} please"), assistant("Done.")]
            )
        )
    )
    report = vault.capture.write_handoff(SESSION, turns)
    assert key not in vault.get(f"_memtrove/{report.path}").body
    assert key not in str(session_row(vault))


@pytest.mark.skipif(not BENCH.is_dir(), reason="recorded sessions not available")
def test_recorded_sessions_get_handoffs(vault: Vault) -> None:
    written = 0
    for index, path in enumerate(sorted(BENCH.rglob("*.jsonl"))):
        turns = read_turns(str(path))
        if len(turns) >= 2:
            report = vault.capture.write_handoff(f"recorded-{index}", turns)
            assert "# Handoff:" in vault.get(f"_memtrove/{report.path}").body
            written += 1
    assert written >= 5
