"""``memtrove flush-tools`` and ``memtrove reminder`` as the hosts run them (processes fed
recorded-shape payloads), and the extraction nudge held back while a session compacts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memtrove.hooks.prompt_nudges import WRITE_NUDGE
from memtrove.memory.queue import COMPACTION_SECONDS

SESSION = "cursor-conv-41c2"
DEPLOY = "The photo service deploys to Fly.io in the ams region with blue-green releases."


@pytest.fixture
def env(isolated_environment: Path, tmp_path: Path) -> dict[str, str]:
    """The test's HOME and XDG folders (see tests/conftest.py), its own vault."""
    return dict(os.environ) | {
        "MEMTROVE_VAULT": str(tmp_path / "vault.sqlite"),
        "MEMTROVE_CONFIG_DIR": str(tmp_path / "config"),
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "photo-app"
    folder.mkdir()
    return folder


def run(arguments: list[str], stdin: bytes, env: dict[str, str], cwd: Path | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "memtrove", *arguments],
        input=stdin,
        env=env,
        cwd=cwd,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.decode()


def flush(env: dict[str, str], prompt: str, project: Path, session: str = SESSION) -> str:
    """Cursor's beforeSubmitPrompt: ``flush-tools --json``; the additional_context."""
    body = {"conversation_id": session, "hook_event_name": "beforeSubmitPrompt",
            "prompt": prompt, "workspace_roots": [str(project)]}  # fmt: skip
    answer = json.loads(run(["flush-tools", "--json"], json.dumps(body).encode(), env))
    assert set(answer) == {"additional_context", "continue"} and answer["continue"] is True
    return str(answer["additional_context"])


def hook(name: str, payload: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    return dict(json.loads(run(["hook", name], json.dumps(payload).encode(), env)))


def queue_calls(env: dict[str, str], session: str = SESSION) -> None:
    call = {"conversation_id": session, "tool_name": "Shell",
            "tool_input": {"command": "fly deploy"}, "tool_output": "deployed v7 to ams"}  # fmt: skip
    assert run(["buffer-tool"], json.dumps(call).encode(), env) == ""


def test_flush_tools_tiers(env: dict[str, str], project: Path) -> None:
    run(["remember", "Deploy target", DEPLOY, "--store", "photo-app"], b"", env)
    # tier 3 on an empty queue and an unrelated or short prompt
    assert flush(env, "ok", project) == WRITE_NUDGE
    assert flush(env, "What is the capital of Mongolia again?", project) == WRITE_NUDGE
    # tier 2: the related entry, named, with no recall counted
    related = flush(env, "How do we deploy the photo service?", project)
    assert related.startswith("<memory-recall>") and "- photo-app :: Deploy target" in related
    listed = json.loads(run(["recall", "deploy", "--store", "photo-app", "--json"], b"", env))
    assert listed[0]["recall_count"] == 1  # only this recall counted
    # tier 1 wins over the others and escalates; plain text without --json
    queue_calls(env)
    first = flush(env, "How do we deploy the photo service?", project)
    assert first.startswith("<memory-extraction>") and SESSION in first
    assert "memory-recall" not in first
    body = json.dumps({"session_id": SESSION, "prompt": "and now?"}).encode()
    assert run(["flush-tools"], body, env).startswith("<memory-extraction>")
    assert "Reminder:" in flush(env, "next step please", project)


def test_the_nudge_is_held_back_while_the_session_compacts(
    env: dict[str, str], project: Path
) -> None:
    queue_calls(env)
    hook("precompact-extract", {"session_id": SESSION, "hook_event_name": "PreCompact",
                                "trigger": "manual", "cwd": str(project)}, env)  # fmt: skip
    assert flush(env, "How do we deploy the photo service?", project) == ""
    surfaced = hook("context-surfacing", {"session_id": SESSION, "prompt": "How do we deploy?",
                                          "hook_event_name": "UserPromptSubmit"}, env)  # fmt: skip
    assert "<memory-extraction>" not in json.dumps(surfaced)
    # the compaction ends: the nudge comes back, polite (the held-back ones were not counted)
    hook("postcompact-inject", {"session_id": SESSION, "hook_event_name": "SessionStart",
                                "source": "compact"}, env)  # fmt: skip
    back = flush(env, "How do we deploy the photo service?", project)
    assert back.startswith("<memory-extraction>") and "When you reach a pause" in back
    # a /compact prompt is a compaction itself
    assert flush(env, "/compact keep the deploy notes", project) == ""


def test_a_compaction_that_never_ended_stops_holding_the_nudge(
    env: dict[str, str], project: Path
) -> None:
    queue_calls(env)
    hook("precompact-extract", {"session_id": SESSION, "hook_event_name": "PreCompact"}, env)
    assert flush(env, "How do we deploy the photo service?", project) == ""
    markers = list((Path(env["XDG_CACHE_HOME"]) / "memtrove" / "queue").glob("*.compacting"))
    assert len(markers) == 1
    old = time.time() - COMPACTION_SECONDS - 60
    os.utime(markers[0], (old, old))
    assert flush(env, "How do we deploy the photo service?", project).startswith(
        "<memory-extraction>"
    )
    assert not markers[0].exists()


def test_reminder_for_session_start(env: dict[str, str], project: Path) -> None:
    text = "We deploy the web app to Fly.io in the ams region with blue-green releases."
    for label in ("Deploy A", "Deploy B"):
        run(["remember", label, text, "--store", "photo-app"], b"", env)
    payload = json.dumps({"conversation_id": SESSION, "hook_event_name": "sessionStart",
                          "workspace_roots": [str(project)]}).encode()  # fmt: skip
    answer = json.loads(run(["reminder", "--json"], payload, env))
    assert set(answer) == {"additional_context"}
    context = answer["additional_context"]
    assert "store 'photo-app'" in context and "<memory-hygiene>" in context
    assert "near-duplicate" in context
    # Claude Code's SessionStart: plain text, the project from the working directory
    plain = run(["reminder"], b"", env, cwd=project)
    assert plain.startswith("<memtrove-memory>") or "<memtrove-memory>" in plain
    assert "store 'photo-app'" in plain
    # a start after a compaction ends the session's compaction
    queue_calls(env)
    hook("precompact-extract", {"session_id": SESSION, "hook_event_name": "PreCompact"}, env)
    assert flush(env, "How do we deploy the photo service?", project) == ""
    after = json.dumps({"session_id": SESSION, "source": "compact", "cwd": str(project)})
    run(["reminder", "--json"], after.encode(), env)
    assert flush(env, "How do we deploy the photo service?", project).startswith(
        "<memory-extraction>"
    )


@pytest.mark.parametrize(
    "stdin",
    [
        b"",
        b"not json",
        b"[1, 2, 3]",
        b'{"session_id": 7, "prompt": ["x"], "workspace_roots": "nope"}',
        b'{"session_id": "s\\u0000x/../../etc", "prompt": "\\ud800\\ud800 deploy the photo"}',
        b'{"prompt": "deploy", "cwd": "/no/such\\u0000dir", "workspace_roots": [null]}',
        b"{" * 100_000,
        b'{"prompt": "' + b"a" * 3_000_000 + b'"}',
    ],
)
def test_hostile_payloads_always_answer(env: dict[str, str], stdin: bytes) -> None:
    for command in ("flush-tools", "reminder"):
        answer = json.loads(run([command, "--json"], stdin, env))
        assert set(answer) - {"continue"} == {"additional_context"}
        assert isinstance(answer["additional_context"], str)


def test_an_unopenable_vault_still_answers(env: dict[str, str], tmp_path: Path) -> None:
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"this is not a database" * 100)
    env = env | {"MEMTROVE_VAULT": str(broken)}
    body = json.dumps({"session_id": "s", "prompt": "How do we deploy the photo service?"})
    done = subprocess.run([sys.executable, "-m", "memtrove", "flush-tools", "--json"],
                          input=body.encode(), env=env, capture_output=True, timeout=60)  # fmt: skip
    assert done.returncode == 0
    assert json.loads(done.stdout) == {"additional_context": WRITE_NUDGE, "continue": True}
    assert b"Traceback" not in done.stderr
    reminder = json.loads(run(["reminder", "--json"], b"{}", env))
    assert "<memtrove-memory>" in reminder["additional_context"]
