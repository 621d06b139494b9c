"""`memtrove budget` (tokens injected per session and prompt against the profile's budget)
and `memtrove log` (the session history)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result

from memtrove import Vault
from memtrove.hooks.transcript import read_turns
from tests.capture.transcripts import SESSION, assistant, user, write_transcript
from tests.conftest import where, write

from memtrove.cli import app  # isort: skip

OTHER = "1a2b3c4d-0000-4000-8000-00000000beef"


def memtrove(vault: Vault, *args: str, **env: str) -> Result:
    environment = {"MEMTROVE_CONFIG_DIR": str(vault.config_file.parent), **env}
    return CliRunner().invoke(app, ["--vault", str(where(vault)), *args], env=environment)


def ok(result: Result) -> str:
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result.stdout


def sessions(vault: Vault, tmp_path: Path) -> tuple[str, str]:
    """Session SESSION: two prompts (300 and 900 tokens), the reply to the first using
    one of its two documents, then a handoff that changed app/cache.py. Session OTHER: one
    prompt, not judged yet."""
    folder = tmp_path / "notes"
    write(folder, "redis.md", "# Redis pool sizing\n\nUse a pool of 50 connections per host.")
    write(folder, "deploy.md", "# Deploy checklist\n\nRun migrations before switching traffic.")
    vault.add_collection(folder, name="notes")
    vault.update()
    redis, deploy = vault.get("notes/redis.md"), vault.get("notes/deploy.md")
    log = vault.sessions.log_context_usage
    log(SESSION, "context-surfacing", injected=[(redis.doc_id, 0.9), (deploy.doc_id, 0.6)],
        estimated_tokens=300, turn_index=0, query_text="how big is the redis pool?")  # fmt: skip
    log(SESSION, "context-surfacing", injected=[(deploy.doc_id, 0.8)],
        estimated_tokens=900, turn_index=1, query_text="deploy \x1b[2Jsteps")  # fmt: skip
    transcript = write_transcript(
        tmp_path / "t.jsonl",
        [
            user("how big is the redis pool?"),
            assistant("Per notes/redis.md the pool is 50.", edit=str(folder / "app" / "cache.py")),
            user("deploy steps"),
            assistant("I will look into that later."),
        ],
    )
    turns = read_turns(str(transcript))
    vault.capture.apply_feedback(SESSION, turns)
    vault.capture.write_handoff(SESSION, turns, use_llm=False)
    log(OTHER, "context-surfacing", injected=[(redis.doc_id, 0.7)], estimated_tokens=100,
        turn_index=0, query_text="redis again")  # fmt: skip
    return redis.path, deploy.path


def by_id(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["session_id"]: item for item in report["sessions"]}


def test_budget_per_session_and_prompt_against_the_profile(vault: Vault, tmp_path: Path) -> None:
    sessions(vault, tmp_path)
    report = json.loads(ok(memtrove(vault, "budget", "--json")))
    assert (report["profile"], report["token_budget"]) == ("balanced", 800)
    found = by_id(report)
    assert set(found) == {SESSION, OTHER}
    first = found[SESSION]
    assert (first["prompts"], first["prompt_tokens"], first["max_tokens"]) == (2, 1200, 900)
    assert (first["average_tokens"], first["over_budget"]) == (600, 1)
    assert (first["injections"], first["judged"], first["referenced"]) == (3, 3, 1)
    turns = first["prompt_log"]
    assert [p["estimated_tokens"] for p in turns] == [300, 900]
    assert [p["over_budget"] for p in turns] == [False, True]
    assert [p["share_of_budget"] for p in turns] == [0.375, 1.125]
    assert [(p["judged"], p["referenced"]) for p in turns] == [(2, 1), (1, 0)]
    assert turns[0]["injected"][0]["path"] == "notes/redis.md"
    assert turns[0]["injected"][0]["referenced"] is True
    assert found[OTHER]["judged"] == 0 and found[OTHER]["prompt_log"][0]["referenced"] == 0

    deep = json.loads(ok(memtrove(vault, "budget", "--json", MEMTROVE_PROFILE="deep")))
    assert deep["token_budget"] == 1200 and by_id(deep)[SESSION]["over_budget"] == 0
    speed = json.loads(ok(memtrove(vault, "budget", "--profile", "speed", "--json")))
    assert speed["token_budget"] == 400
    assert by_id(speed)[SESSION]["prompt_log"][1]["share_of_budget"] == 2.25

    one = json.loads(ok(memtrove(vault, "budget", "--session", OTHER, "--json")))
    assert [item["session_id"] for item in one["sessions"]] == [OTHER]
    latest = json.loads(ok(memtrove(vault, "budget", "--last", "1", "--json")))
    assert len(latest["sessions"]) == 1

    text = ok(memtrove(vault, "budget", "--session", SESSION))
    assert "profile balanced: 800 tokens per prompt" in text
    assert "2 prompts, " in text and "1 of 3 judged injections referenced" in text
    assert "  900 tokens  112% of 800 OVER  0/1 referenced  deploy \\x1b[2Jsteps" in text
    assert "\x1b" not in text


def test_budget_refuses_what_it_cannot_answer_in_one_line(vault: Vault, tmp_path: Path) -> None:
    empty = memtrove(vault, "budget")
    assert empty.exit_code == 0 and "no sessions recorded yet" in empty.stdout
    unknown = memtrove(vault, "budget", "--session", "no-such-session")
    assert unknown.exit_code == 1
    assert unknown.stderr.strip() == (
        "memtrove: error: no session 'no-such-session' recorded (memtrove log lists them)"
    )
    bad = memtrove(vault, "budget", "--profile", "turbo")
    assert bad.exit_code == 2
    assert bad.stderr.strip() == (
        "memtrove: error: unknown profile 'turbo': use one of speed, balanced, deep"
    )


def test_log_lists_sessions_with_duration_handoff_summary_and_files(
    vault: Vault, tmp_path: Path
) -> None:
    assert "no sessions recorded yet" in ok(memtrove(vault, "log"))
    sessions(vault, tmp_path)
    listed = json.loads(ok(memtrove(vault, "log", "--json")))
    assert {item["session_id"] for item in listed} == {SESSION, OTHER}
    ended = next(item for item in listed if item["session_id"] == SESSION)
    assert ended["handoff_path"] and ended["ended_at"] and ended["summary"]
    assert ended["files_changed"] == [str(tmp_path / "notes" / "app" / "cache.py")]
    assert isinstance(ended["duration_seconds"], int) and ended["duration_seconds"] >= 0
    assert len(json.loads(ok(memtrove(vault, "log", "--last", "1", "--json")))) == 1

    text = ok(memtrove(vault, "log"))
    assert f"  {SESSION}  " in text and "(ended), 2 prompts, 1200 tokens injected" in text
    assert f"  handoff: {ended['handoff_path']}" in text
    assert f"  files: {tmp_path / 'notes' / 'app' / 'cache.py'}" in text
    assert "(open), 1 prompts" in text
    refused = memtrove(vault, "log", "--last", "0")
    assert refused.exit_code == 2 and "Traceback" not in refused.stderr
