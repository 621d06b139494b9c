"""Stop-hook capture with real hook processes on a recorded Claude Code session, and what the
next session's context-surfacing and session-bootstrap processes surface of it."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.capture.transcripts import BENCH, assistant, user
from tests.e2e.test_hooks_processes import context, hook, process_env
from tests.e2e.test_warm_path import (  # noqa: F401  (fixtures)
    Copy,
    a,
    imported,
    prepared,
    serve,
    stopped_cleanly,
)
from tests.e2e.test_warm_path import hook as warm_hook
from tests.hooks.conftest import (  # noqa: F401  (fixtures)
    hook_env,
    open_test_vault,
    surfacing_vault,
    template_vault,
)

RECORDED = BENCH / "daaain-claude-code-log__representative_messages.jsonl"
SESSION = "7e0c5a1b-2d3f-4a6b-8c9d-0e1f2a3b4c5d"
NEXT = "8f1d6b2c-3e4a-4b7c-9d0e-1f2a3b4c5d6e"
PROMPT = "Why were users logged out by the refresh token race last month?"
PLAIN = {"continue": True, "suppressOutput": False}


def append(transcript: Path, *entries: dict[str, object]) -> None:
    with transcript.open("a", encoding="utf-8") as handle:
        for item in entries:
            handle.write(json.dumps(item) + "\n")


def surfaced(text: str) -> list[str]:
    return re.findall(r"^(demo/[^\s]+\.md)$", text, re.M)


@pytest.mark.skipif(not RECORDED.is_file(), reason="recorded sessions not available")
def test_a_replayed_session_is_captured_and_surfaced_next_time(
    tmp_path: Path,
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
) -> None:
    # deep injects every result the threshold passes: two used, at least one unused
    env = process_env(hook_env) | {"MEMTROVE_PROFILE": "deep"}
    transcript = tmp_path / "projects" / "demo" / f"{SESSION}.jsonl"
    transcript.parent.mkdir(parents=True)
    shutil.copyfile(RECORDED, transcript)  # the recorded session, then one more turn of ours
    ask = {"session_id": SESSION, "hook_event_name": "UserPromptSubmit", "prompt": PROMPT}
    answer, _ = hook("context-surfacing", json.dumps(ask).encode(), env)
    shown = surfaced(context(answer))
    assert len(shown) >= 3, context(answer)
    used = shown[:2]
    append(
        transcript,
        user(PROMPT),
        assistant(
            f"From {used[0]} and {used[1]}: two tabs refreshed with the same token. We decided "
            "to keep the 10-second grace window for rotated refresh tokens. The error: "
            "RefreshTokenReused was raised for the second tab. Fixed by the grace window.",
            edit="/project/auth/refresh.py",
        ),
    )
    stop = {"session_id": SESSION, "hook_event_name": "Stop", "transcript_path": str(transcript)}
    for name in ("decision-extractor", "handoff-generator", "feedback-loop"):
        answer, done = hook(name, json.dumps(stop).encode(), env)
        assert answer == PLAIN and done.stdout.count(b"\n") == 1

    with open_test_vault(hook_env) as vault:
        con = vault._connection
        observations = [d.path for d in vault.list(100, collection="_memtrove")]
        assert any(p.startswith("agent/observations/") and "-decision-" in p for p in observations)
        assert any(p.startswith("agent/decisions/") for p in observations)
        handoff, files = con.execute(
            "SELECT handoff_path, files_changed FROM session_log WHERE session_id = ?", (SESSION,)
        ).fetchone()
        assert handoff.startswith("_memtrove/agent/handoffs/")
        assert json.loads(files) == ["/tmp/decorator_example.py", "/project/auth/refresh.py"]
        events = con.execute(
            "SELECT d.collection || '/' || d.path, e.was_referenced FROM recall_events e "
            "JOIN documents d ON d.id = e.doc_id WHERE e.session_id = ? AND e.checked_at IS NOT NULL",
            (SESSION,),
        ).fetchall()
        verdicts = dict(events)
        assert {verdicts[path] for path in used} == {1}
        assert 0 in verdicts.values()  # surfaced and not used: a negative
        negatives = con.execute(
            "SELECT COALESCE(SUM(negative_count), 0) FROM recall_stats"
        ).fetchone()[0]
        assert negatives >= 1
        assert (
            con.execute(
                "SELECT COUNT(*) FROM memory_relations WHERE relation_type = 'usage'"
            ).fetchone()[0]
            == 1
        )

    # The next session: its bootstrap shows the handoff and the decision ...
    start = {"session_id": NEXT, "hook_event_name": "SessionStart", "source": "startup"}
    answer, _ = hook("session-bootstrap", json.dumps(start).encode(), env)
    text = context(answer)
    assert "<vault-session>" in text and "grace window" in text and "Last session" in text
    # ... and context-surfacing relates the two documents used together.
    again = {"session_id": NEXT, "hook_event_name": "UserPromptSubmit", "prompt": PROMPT}
    answer, _ = hook("context-surfacing", json.dumps(again).encode(), env)
    assert set(used) <= set(surfaced(context(answer)))
    assert "--[usage]-->" in context(answer)
    # ... and the decision captured last session is surfaced when a prompt asks about it.
    decided = {
        "session_id": NEXT,
        "hook_event_name": "UserPromptSubmit",
        "prompt": "What did we decide about the grace window for rotated refresh tokens?",
    }
    answer, _ = hook("context-surfacing", json.dumps(decided).encode(), env)
    assert re.search(r"^_memtrove/agent/decisions/\S+\.md$", context(answer), re.M), context(answer)
    assert "_memtrove/agent/observations/" not in context(answer)


def test_parallel_stop_hooks_with_a_slow_model_stay_within_their_time(
    tmp_path: Path,
    hook_env: dict[str, str],  # noqa: F811
) -> None:
    """Claude Code starts the three side by side; a model slower than the hook's time is
    given up on, the heuristic writes, and every process exits before its timeout."""
    from tests.capture.transcripts import SESSION_ONE, write_transcript
    from tests.fakes.model_server import ModelServer

    transcript = write_transcript(tmp_path / f"{SESSION}.jsonl", SESSION_ONE)
    stop = json.dumps(
        {"session_id": SESSION, "hook_event_name": "Stop", "transcript_path": str(transcript)}
    ).encode()
    with ModelServer(slow_seconds=20) as server:
        server.set_mode("chat", "slow")
        env = process_env(hook_env, MEMTROVE_LLM_URL=server.url, MEMTROVE_HOOK_TIMEOUT="8")
        started = time.monotonic()
        names = ("decision-extractor", "handoff-generator", "feedback-loop")
        processes = [
            subprocess.Popen(
                [sys.executable, "-m", "memtrove", "hook", name],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            )
            for name in names
        ]
        for process in processes:  # each gets its payload at once, as Claude Code sends it
            assert process.stdin is not None
            process.stdin.write(stop)
            process.stdin.flush()
        outputs = [process.communicate(timeout=30) for process in processes]
        elapsed = time.monotonic() - started
    assert all(process.returncode == 0 for process in processes)
    assert [json.loads(out) for out, _ in outputs] == [PLAIN] * 3
    # the hook's own limit, plus process start-up on a busy machine: well short of the
    # model's 20 s
    assert elapsed < 8 + 7, elapsed
    log = (Path(hook_env["XDG_CACHE_HOME"]) / "memtrove" / "hooks.log").read_text()
    assert "observer failed, heuristic used" in log and "summary failed" in log
    with open_test_vault(hook_env) as vault:
        paths = [d.path for d in vault.list(50, collection="_memtrove")]
        body = vault.get(f"_memtrove/{paths[-1]}").body
    assert any(p.startswith("agent/handoffs/") for p in paths)
    assert any(p.startswith("agent/observations/") for p in paths)
    assert 'source: "observer"' not in body


def test_stop_hooks_through_a_running_server(tmp_path: Path, a: Copy) -> None:  # noqa: F811
    """With ``memtrove serve`` up, the Stop hooks take the warm path: the server answers
    at once and writes the capture after answering."""
    from tests.capture.transcripts import SESSION_ONE, write_transcript

    transcript = write_transcript(tmp_path / f"{SESSION}.jsonl", SESSION_ONE)
    stop = json.dumps(
        {"session_id": SESSION, "hook_event_name": "Stop", "transcript_path": str(transcript)}
    ).encode()
    running = serve(a)
    try:
        for name in ("decision-extractor", "handoff-generator", "feedback-loop"):
            done = warm_hook(stop, a.env, name=name, trace=True)
            assert json.loads(done.stdout) == PLAIN
            assert "sqlean" not in imported(done.stderr)  # the server did the work
        deadline = time.monotonic() + 30
        found: tuple[int, int] = (0, 0)
        while time.monotonic() < deadline:
            connection = sqlite3.connect(a.vault, timeout=30)
            try:
                found = connection.execute(
                    "SELECT (SELECT COUNT(*) FROM documents WHERE path LIKE 'agent/observations/%'),"
                    " (SELECT COUNT(*) FROM session_log WHERE handoff_path IS NOT NULL)"
                ).fetchone()
            finally:
                connection.close()
            if found[0] and found[1]:
                break
            time.sleep(0.1)
        assert found[0] >= 1 and found[1] == 1, found
        assert "error" not in a.log()
    finally:
        stopped_cleanly(running)
