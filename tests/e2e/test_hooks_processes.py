"""Hooks as Claude Code runs them: real processes fed recorded payloads on stdin."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.hooks.conftest import (  # noqa: F401  (fixtures)
    FIXTURES,
    hook_env,
    payload,
    surfacing_vault,
    template_vault,
)

INTERFACE_MODULES = {"typer", "rich", "click", "httpx", "fastapi", "mcp", "uvicorn",
                     "starlette", "pydantic"}  # fmt: skip
SESSION = "5d1c2c8e-6f0b-4c5e-9a52-0c4f1d9a7e11"


def process_env(hook_env: dict[str, str], **extra: str) -> dict[str, str]:  # noqa: F811
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MEMTROVE_", "XDG_"))}
    return {**clean, **hook_env, **extra}


def hook(
    name: str, stdin: bytes, env: dict[str, str], *, module: str = "memtrove", timeout: float = 30
) -> tuple[dict[str, Any], subprocess.CompletedProcess[bytes]]:
    command = [sys.executable, "-m", module, *(["hook"] if module == "memtrove" else []), name]
    done = subprocess.run(command, input=stdin, env=env, capture_output=True, timeout=timeout)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode("ascii").splitlines()
    assert len(lines) == 1, done.stdout
    assert b"Traceback" not in done.stderr
    answer: dict[str, Any] = json.loads(lines[0])
    return answer, done


def context(answer: dict[str, Any]) -> str:
    text: str = answer["hookSpecificOutput"]["additionalContext"]
    return text


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.glob("*.json")))
def test_context_surfacing_answers_every_payload(
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
    fixture: str,
) -> None:
    answer, _ = hook("context-surfacing", (FIXTURES / fixture).read_bytes(), process_env(hook_env))
    assert answer["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    text = context(answer).lower()
    assert "ignore previous" not in text and "different assistant" not in text
    assert "experiments/" not in text and "_private" not in text
    assert len(text) <= 800 * 4


@pytest.mark.parametrize("name", ["postcompact-inject", "curator-nudge", "precompact-extract"])
@pytest.mark.parametrize(
    "fixture",
    ["session_start_compact.json", "pre_compact_auto.json", "empty.json", "malformed.json",
     "binary.json"],
)  # fmt: skip
def test_other_hooks_answer(
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
    name: str,
    fixture: str,
) -> None:
    answer, _ = hook(name, (FIXTURES / fixture).read_bytes(), process_env(hook_env),
                     module="memtrove.hooks")  # fmt: skip
    if name == "precompact-extract":
        assert answer == {"continue": True, "suppressOutput": False}
    else:
        assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"


def test_unknown_hook_and_empty_stdin(hook_env: dict[str, str]) -> None:  # noqa: F811
    answer, done = hook("nope", b"", process_env(hook_env))
    assert answer == {"continue": True, "suppressOutput": False}
    assert b"unknown hook 'nope'" in done.stderr
    answer, _ = hook("context-surfacing", b"", process_env(hook_env))
    assert context(answer) == ""


@pytest.mark.parametrize("seconds", ["inf", "1e309", "99999999999999999999999", "nan"])
def test_a_timeout_past_any_wait_is_taken_as_a_bound(
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
    seconds: str,
) -> None:
    """A wait of inf (or 1e23) seconds raises in the timer thread: the hook printed a
    traceback and injected nothing."""
    env = process_env(hook_env, MEMTROVE_HOOK_TIMEOUT=seconds)
    answer, done = hook("context-surfacing", payload("user_prompt_submit.json"), env)
    assert "<vault-context>" in context(answer)
    assert not done.stderr, done.stderr


def test_the_hook_path_imports_no_interface_stack(
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
) -> None:
    command = [sys.executable, "-X", "importtime", "-m", "memtrove", "hook", "context-surfacing"]
    traced = subprocess.run(
        command, input=payload("user_prompt_submit.json", session_id="importtime"),
        env=process_env(hook_env), capture_output=True, timeout=60,
    )  # fmt: skip
    imported = {
        line.split("|")[-1].strip().split(".")[0]
        for line in traced.stderr.decode().splitlines()
        if line.startswith("import time:")
    }
    assert "memtrove" in imported and "sqlean" in imported
    assert imported & INTERFACE_MODULES == set()


def test_a_locked_vault_still_answers_within_the_timeout(
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
) -> None:
    env = process_env(hook_env, MEMTROVE_HOOK_TIMEOUT="3")
    holder = sqlite3.connect(surfacing_vault, isolation_level=None, timeout=10)
    holder.execute("BEGIN IMMEDIATE")  # another process is writing, and keeps at it
    try:
        started = time.monotonic()
        answer, done = hook("context-surfacing", payload("user_prompt_submit.json"), env)
        elapsed = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "<vault-context>" in context(answer)  # reads work under a writer (WAL)
    assert elapsed < 8
    assert b"locked" not in done.stdout
    log = (Path(hook_env["XDG_CACHE_HOME"]) / "memtrove" / "hooks.log").read_text()
    assert "timed out after 3 s" in log


def test_ten_hook_processes_at_once_lose_no_turn(
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
) -> None:
    # About locks, not speed: ten processes on a small busy machine may need more than the
    # 7 s a hook has (counted from its start, imports included).
    env = process_env(hook_env, MEMTROVE_HOOK_TIMEOUT="30")
    topics = ["thumbnail worker memory", "refresh token rotation", "resumable uploads",
              "pyvips decoder benchmark", "postgres metadata schema", "HEIC support options",
              "kickoff meeting notes", "launch scope for v1", "glossary of terms",
              "weekly status of week 33"]  # fmt: skip
    rounds = 3
    for round_number in range(rounds):
        processes = [
            subprocess.Popen(
                [sys.executable, "-m", "memtrove", "hook", "context-surfacing"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            )
            for _ in topics
        ]
        # Every payload is written at once, as Claude Code does when it starts a hook: a
        # hook's time limit counts from its start, waiting for stdin included.
        for index, (process, topic) in enumerate(zip(processes, topics, strict=True)):
            prompt = f"What do my notes say about {topic}? (round {round_number})"
            body = payload("user_prompt_submit.json", prompt=prompt, session_id=f"s{index}")
            assert process.stdin is not None
            process.stdin.write(body)
            process.stdin.close()
        for process in processes:
            assert process.stdout is not None and process.stderr is not None
            out, err = process.stdout.read(), process.stderr.read()
            process.wait(timeout=60)
            assert process.returncode == 0, err
            answer = json.loads(out)
            assert err == b"", err  # no lock error, no error of any kind
            assert answer["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    with sqlite3.connect(surfacing_vault) as connection:
        turns = connection.execute(
            "SELECT session_id, COUNT(*), MAX(turn_index) FROM context_usage GROUP BY session_id"
        ).fetchall()
    assert sorted(turns) == sorted((f"s{i}", rounds, rounds - 1) for i in range(len(topics)))


def test_the_readme_prompt_injects_the_postmortem_first_or_second(
    tmp_path: Path,
    hook_env: dict[str, str],  # noqa: F811
) -> None:
    """The example vault's own README prompt, through a real hook process."""
    from memtrove import Vault
    from tests.conftest import EXAMPLES

    with Vault.open(hook_env["MEMTROVE_VAULT"], config_dir=hook_env["MEMTROVE_CONFIG_DIR"]) as v:
        v.add_collection(EXAMPLES, name="example")
        v.update()
    prompt = "Why were users logged out by the refresh tokens race last month?"
    raw = payload("user_prompt_submit.json", prompt=prompt, session_id="readme-prompt")
    answer, _ = hook("context-surfacing", raw, process_env(hook_env))
    paths = [line for line in context(answer).splitlines() if line.startswith("example/")]
    postmortem = "example/problems/2026-09-10-refresh-token-race-logouts.md"
    assert postmortem in paths[:2], paths
    assert "@@" not in context(answer)  # passages, not diff headers
    exif = "example/antipatterns/exif-gps-in-logs.md"
    assert exif not in paths or paths.index(exif) > paths.index(postmortem)


# -- stdin that never ends: the hook still answers within its limit ----------------------------


def hook_with_open_stdin(
    command: list[str], data: bytes, env: dict[str, str]
) -> tuple[dict[str, Any], float, bytes]:
    """Start a hook, write ``data`` on its stdin and keep it open (a separate thread writes,
    since a hook that stops reading leaves the pipe full). Returns the answer, the seconds
    from start to the answer, and stderr; stdin is closed only after the process ended."""
    started = time.monotonic()
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert process.stdin is not None and process.stdout is not None

    def feed() -> None:
        with contextlib.suppress(OSError):  # the hook stopped reading and exited
            assert process.stdin is not None
            process.stdin.write(data)
            process.stdin.flush()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        line = process.stdout.readline()  # returns once the hook answered (and exited)
        answered = time.monotonic() - started
        process.wait(timeout=30)
        stderr = process.stderr.read() if process.stderr else b""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        with contextlib.suppress(OSError):
            process.stdin.close()
    assert process.returncode == 0, stderr
    assert b"Traceback" not in stderr, stderr
    answer: dict[str, Any] = json.loads(line)
    assert process.stdout.read() == b""  # exactly one line
    return answer, answered, stderr


HOOK_COMMANDS = {
    "memtrove hook": [sys.executable, "-m", "memtrove", "hook"],  # reads on the warm path
    "memtrove.hooks": [sys.executable, "-m", "memtrove.hooks"],  # the runner reads
}


@pytest.mark.parametrize("entry", sorted(HOOK_COMMANDS))
def test_an_open_stdin_with_a_partial_payload_is_answered_at_the_limit(
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
    entry: str,
) -> None:
    env = process_env(hook_env, MEMTROVE_HOOK_TIMEOUT="2")
    partial = payload("user_prompt_submit.json")[:-20]
    command = [*HOOK_COMMANDS[entry], "context-surfacing"]
    answer, seconds, _ = hook_with_open_stdin(command, partial, env)
    assert context(answer) == ""  # fail-open: the empty context
    assert seconds < 10, seconds  # 2 s, plus start-up on a busy machine
    log = (Path(hook_env["XDG_CACHE_HOME"]) / "memtrove" / "hooks.log").read_text()
    assert "stdin was still open after" in log and "incomplete payload" in log


@pytest.mark.parametrize("entry", sorted(HOOK_COMMANDS))
def test_a_complete_payload_is_answered_without_waiting_for_the_end_of_stdin(
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
    entry: str,
) -> None:
    env = process_env(hook_env, MEMTROVE_HOOK_TIMEOUT="30")
    command = [*HOOK_COMMANDS[entry], "context-surfacing"]
    answer, seconds, _ = hook_with_open_stdin(command, payload("user_prompt_submit.json"), env)
    assert "<vault-context>" in context(answer)  # the payload was read and answered
    assert seconds < 20, seconds  # long before the 30 s limit
    log_file = Path(hook_env["XDG_CACHE_HOME"]) / "memtrove" / "hooks.log"
    assert not log_file.exists() or "timed out" not in log_file.read_text()


@pytest.mark.parametrize("entry", sorted(HOOK_COMMANDS))
def test_a_huge_payload_is_answered_without_it(
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
    entry: str,
) -> None:
    env = process_env(hook_env, MEMTROVE_HOOK_TIMEOUT="30")
    huge = b'{"prompt": "' + b"thumbnail worker memory " * (10 * 1024 * 1024 // 24) + b'"}'
    command = [*HOOK_COMMANDS[entry], "context-surfacing"]
    answer, seconds, _ = hook_with_open_stdin(command, huge, env)
    assert context(answer) == ""
    assert seconds < 20, seconds
    log = (Path(hook_env["XDG_CACHE_HOME"]) / "memtrove" / "hooks.log").read_text()
    assert "the payload is larger than 8 MB" in log
