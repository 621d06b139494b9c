"""The runner fails open: one valid JSON answer whatever happens, errors to stderr and log."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from memtrove.cli import curate, hooks_cli
from memtrove.hooks import context_surfacing
from memtrove.hooks.events import HookResult
from memtrove.hooks.hooklog import MAX_LOG_BYTES, HookLog
from memtrove.hooks.runner import HOOKS, main
from memtrove.vault.sessions import SessionsArea
from tests.hooks.conftest import FIXTURES, context_of, payload, run_hook

ALL_FIXTURES = sorted(path.name for path in FIXTURES.glob("*.json"))


def log_text(env: dict[str, str]) -> str:
    path = Path(env["XDG_CACHE_HOME"]) / "memtrove" / "hooks.log"
    return path.read_text() if path.exists() else ""


@pytest.mark.parametrize("hook", list(HOOKS))
@pytest.mark.parametrize("fixture", ALL_FIXTURES)
def test_every_hook_answers_every_recorded_payload(
    surfacing_vault: Path, hook_env: dict[str, str], hook: str, fixture: str
) -> None:
    answer = run_hook(hook, (FIXTURES / fixture).read_bytes(), hook_env)
    spec = HOOKS[hook]
    assert answer["continue"] is True and answer["suppressOutput"] is False
    if spec.takes_context:
        assert answer["hookSpecificOutput"]["hookEventName"] == spec.event
        assert isinstance(answer["hookSpecificOutput"]["additionalContext"], str)
    else:
        assert answer == {"continue": True, "suppressOutput": False}
    assert " error: " not in log_text(hook_env)


@pytest.mark.parametrize("fixture", ["empty.json", "malformed.json", "not_an_object.json"])
def test_unreadable_input_injects_nothing(hook_env: dict[str, str], fixture: str) -> None:
    answer = run_hook("context-surfacing", (FIXTURES / fixture).read_bytes(), hook_env)
    assert context_of(answer) == ""


def test_unknown_hook(hook_env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert run_hook("no-such-hook", b"{}", hook_env) == {"continue": True, "suppressOutput": False}
    assert "unknown hook 'no-such-hook'" in capsys.readouterr().err
    assert "unknown hook 'no-such-hook'" in log_text(hook_env)
    assert run_hook("", b"", hook_env) == {"continue": True, "suppressOutput": False}


def test_a_corrupt_vault_fails_open(
    hook_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    Path(hook_env["MEMTROVE_VAULT"]).write_bytes(b"not a database at all " * 200)
    answer = run_hook("context-surfacing", payload("user_prompt_submit.json"), hook_env)
    assert context_of(answer) == ""
    err = capsys.readouterr().err
    assert (
        err.startswith("memtrove hook context-surfacing: VaultOpenError") and err.count("\n") == 1
    )
    assert "Traceback" in log_text(hook_env)  # the file keeps the details


def test_a_bug_in_a_hook_fails_open(
    hook_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: Any) -> HookResult:
        raise ZeroDivisionError("oops")

    monkeypatch.setattr(context_surfacing, "run", broken)
    answer = run_hook("context-surfacing", payload("user_prompt_submit.json"), hook_env)
    assert answer["hookSpecificOutput"] == {
        "hookEventName": "UserPromptSubmit",
        "additionalContext": "",
    }
    assert "ZeroDivisionError: oops" in log_text(hook_env)


def test_a_failed_log_write_keeps_the_answer(
    surfacing_vault: Path, hook_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_: Any, **__: Any) -> int:
        raise RuntimeError("disk full")

    monkeypatch.setattr(SessionsArea, "log_context_usage", refuse)
    answer = run_hook("context-surfacing", payload("user_prompt_submit.json"), hook_env)
    assert "<vault-context>" in context_of(answer)
    assert "after answering: RuntimeError: disk full" in log_text(hook_env)


def test_settings_warnings_are_logged(hook_env: dict[str, str]) -> None:
    hook_env["MEMTROVE_PROFILE"] = "ludicrous"
    run_hook("context-surfacing", payload("user_prompt_submit_greeting.json"), hook_env)
    assert "unknown MEMTROVE_PROFILE 'ludicrous'" in log_text(hook_env)


def test_answers_are_ascii_json_even_for_odd_prompts(hook_env: dict[str, str]) -> None:
    raw = json.dumps({"prompt": "thumbnail \ud800 worker memory 🚀 über", "session_id": "s"})
    out = io.BytesIO()
    main(["context-surfacing"], env=hook_env, stdin=io.BytesIO(raw.encode()), stdout=out,
         watchdog=False)  # fmt: skip
    out.getvalue().decode("ascii")  # lone surrogates could not be written as UTF-8


def test_the_log_rotates_at_one_megabyte(tmp_path: Path) -> None:
    path = tmp_path / "hooks.log"
    path.write_text("x" * MAX_LOG_BYTES)
    HookLog(path, "context-surfacing").info("after rotation")
    assert path.read_text().endswith("context-surfacing [" + path.read_text().split("[")[1])
    assert "after rotation" in path.read_text()
    assert (tmp_path / "hooks.log.1").stat().st_size == MAX_LOG_BYTES
    HookLog(tmp_path / "ro" / "x" / "hooks.log", "h").info("fine")  # creates folders
    (tmp_path / "file").write_text("")
    HookLog(tmp_path / "file" / "hooks.log", "h").error("never raises")


def cli_app() -> typer.Typer:
    app = typer.Typer()
    hooks_cli.register(app)
    curate.register(app)
    return app


def test_cli_hook_command_lists_and_runs(
    surfacing_vault: Path, hook_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in hook_env.items():
        monkeypatch.setenv(name, value)
    runner = CliRunner()
    listing = runner.invoke(cli_app(), ["hook", "--list"])
    assert listing.exit_code == 0
    assert all(name in listing.output for name in HOOKS)
    as_json = json.loads(runner.invoke(cli_app(), ["hook", "--list", "--json"]).output)
    assert [item["name"] for item in as_json] == list(HOOKS)
    result = runner.invoke(
        cli_app(), ["hook", "context-surfacing"], input=payload("user_prompt_submit.json")
    )
    assert result.exit_code == 0
    assert "<vault-context>" in context_of(json.loads(result.stdout))
