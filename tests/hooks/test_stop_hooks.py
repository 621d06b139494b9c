"""The Stop hooks and session-bootstrap in-process, as the runner runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtrove.hooks.catalog import HOOKS
from memtrove.hooks.settings import HookSettings
from tests.capture.transcripts import SESSION, SESSION_ONE, SESSION_TWO, write_transcript
from tests.fakes.model_server import ModelServer
from tests.hooks.conftest import (  # noqa: F401  (fixtures)
    context_of,
    hook_env,
    open_test_vault,
    run_hook,
    surfacing_vault,
    template_vault,
)

STOP_HOOKS = ("decision-extractor", "handoff-generator", "feedback-loop")
PLAIN = {"continue": True, "suppressOutput": False}


def stop(transcript: Path | str, session: str = SESSION) -> bytes:
    return json.dumps(
        {"session_id": session, "hook_event_name": "Stop", "transcript_path": str(transcript)}
    ).encode()


def test_the_catalog_and_the_timeouts() -> None:
    for name in STOP_HOOKS:
        spec = HOOKS[name]
        assert (spec.event, spec.timeout_seconds, spec.takes_context) == ("Stop", 30, False)
    assert HOOKS["session-bootstrap"].event == "SessionStart"


@pytest.mark.parametrize("name", STOP_HOOKS)
@pytest.mark.parametrize(
    "raw",
    [b"", b"{not json", b"[1, 2]", b'{"session_id": 5}', b'{"session_id": "s", "transcript_path": "relative.jsonl"}',
     b'{"session_id": "s", "transcript_path": "/nonexistent/x.jsonl"}'],
)  # fmt: skip
def test_stop_hooks_answer_plainly_whatever_they_get(
    name: str,
    raw: bytes,
    hook_env: dict[str, str],  # noqa: F811
) -> None:
    assert run_hook(name, raw, hook_env) == PLAIN


def test_stop_hooks_write_and_answer_plainly(tmp_path: Path, hook_env: dict[str, str]) -> None:  # noqa: F811
    transcript = write_transcript(tmp_path / "s.jsonl", SESSION_ONE)
    for name in STOP_HOOKS:
        assert run_hook(name, stop(transcript), hook_env) == PLAIN
    with open_test_vault(hook_env) as vault:
        paths = [d.path for d in vault.list(50, collection="_memtrove")]
        row = vault._connection.execute(
            "SELECT handoff_path, ended_at FROM session_log WHERE session_id = ?", (SESSION,)
        ).fetchone()
    assert any(p.startswith("agent/observations/") for p in paths)
    assert any(p.startswith("agent/handoffs/") for p in paths) and row[0] and row[1]


def test_a_broken_vault_fails_open(tmp_path: Path, hook_env: dict[str, str]) -> None:  # noqa: F811
    Path(hook_env["MEMTROVE_VAULT"]).write_bytes(b"this is not a database" * 100)
    transcript = write_transcript(tmp_path / "s.jsonl", SESSION_ONE)
    for name in STOP_HOOKS:
        assert run_hook(name, stop(transcript), hook_env) == PLAIN
    log = Path(hook_env["XDG_CACHE_HOME"]) / "memtrove" / "hooks.log"
    assert "decision-extractor" in log.read_text()


def test_invalidation_is_read_from_the_environment() -> None:
    env = {"HOME": "/tmp", "MEMTROVE_CONTRADICTION_INVALIDATE": "true"}
    assert HookSettings.from_env(env).contradiction_invalidate
    assert not HookSettings.from_env({"HOME": "/tmp"}).contradiction_invalidate


def test_would_invalidate_is_logged(tmp_path: Path, hook_env: dict[str, str]) -> None:  # noqa: F811
    first = write_transcript(tmp_path / "one.jsonl", SESSION_ONE)
    second = write_transcript(tmp_path / "two.jsonl", SESSION_TWO)
    run_hook("decision-extractor", stop(first), hook_env)
    run_hook("decision-extractor", stop(second, "another-session"), hook_env)
    log = (Path(hook_env["XDG_CACHE_HOME"]) / "memtrove" / "hooks.log").read_text()
    assert "would invalidate agent/decisions/" in log
    with open_test_vault(hook_env) as vault:
        invalidated = vault._connection.execute(
            "SELECT COUNT(*) FROM documents WHERE invalidated_at IS NOT NULL"
        ).fetchone()[0]
    assert invalidated == 0


def test_session_bootstrap_injects_the_last_handoff_within_budget(
    tmp_path: Path,
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
) -> None:
    transcript = write_transcript(tmp_path / "s.jsonl", SESSION_ONE)
    run_hook("decision-extractor", stop(transcript), hook_env)
    run_hook("handoff-generator", stop(transcript), hook_env)
    start = json.dumps({"session_id": "next-session", "hook_event_name": "SessionStart",
                        "source": "startup"}).encode()  # fmt: skip
    answer = run_hook("session-bootstrap", start, hook_env)
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = context_of(answer)
    assert context.startswith("<vault-session>") and context.endswith("</vault-session>")
    assert "Last session" in context and "session cache" in context
    assert "Decisions of the last 7 days" in context and len(context) <= 2000 * 4
    # Its own session's handoff is not offered back to it.
    own = json.dumps({"session_id": SESSION, "hook_event_name": "SessionStart"}).encode()
    assert "Last session" not in context_of(run_hook("session-bootstrap", own, hook_env))
    with open_test_vault(hook_env) as vault:
        assert (
            vault._connection.execute(
                "SELECT COUNT(*) FROM session_log WHERE session_id = 'next-session'"
            ).fetchone()[0]
            == 1
        )


def test_the_hooks_ask_the_configured_model(
    tmp_path: Path,
    hook_env: dict[str, str],  # noqa: F811
    model_server: ModelServer,
) -> None:
    observed = (
        "<observations><observation><type>decision</type><title>Keep Redis for sessions"
        "</title><narrative>Redis stays the session store.</narrative><triples><triple>"
        "<subject>session store</subject><predicate>uses</predicate><object>Redis</object>"
        "</triple></triples></observation></observations>"
    )
    summary = "<summary><request><item>Fix the cache</item></request></summary>"
    model_server.set_chat_reply(lambda prompt: summary if "Summarise" in prompt else observed)
    env = {**hook_env, "MEMTROVE_LLM_URL": model_server.url}
    transcript = write_transcript(tmp_path / "s.jsonl", SESSION_ONE)
    for name in ("decision-extractor", "handoff-generator"):
        assert run_hook(name, stop(transcript), env) == PLAIN
    with open_test_vault(hook_env) as vault:
        bodies = [vault.get(f"_memtrove/{d.path}").body for d in vault.list(20, "_memtrove")]
        facts = vault._connection.execute("SELECT predicate FROM entity_triples").fetchall()
    assert any('source: "observer"' in body and "Keep Redis" in body for body in bodies)
    assert any("# Handoff: Fix the cache" in body for body in bodies)
    assert [tuple(row) for row in facts] == [("uses",)]


def test_a_huge_line_read_from_the_end_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memtrove.hooks import transcript as module
    from tests.capture.transcripts import assistant, user

    monkeypatch.setattr(module, "MAX_LINE_BYTES", 256 * 1024)
    path = tmp_path / "huge.jsonl"
    with path.open("w") as handle:
        handle.write(json.dumps(user("first prompt")) + "\n")
        handle.write(json.dumps(assistant("x" * (3 * 1024 * 1024))) + "\n")
        for index in range(3):
            handle.write(json.dumps(user(f"prompt {index}")) + "\n")
    messages = module.read_transcript(str(path), 200, tail_over=128 * 1024)
    assert [m.content for m in messages] == ["first prompt", "prompt 0", "prompt 1", "prompt 2"]
