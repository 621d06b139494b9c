"""session-start: the reminder, with hygiene only when a store needs tending; and rules
surfacing through context-surfacing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.hooks.conftest import context_of, open_test_vault, payload, run_hook

DEPLOY = "We deploy the web app to Fly.io in the ams region with blue-green releases."


def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "photo-app"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(folder)], check=True)
    return folder


def start(env: dict[str, str], cwd: Path) -> str:
    raw = payload("session_start_startup.json", cwd=str(cwd))
    return context_of(run_hook("session-start", raw, env))


def test_a_healthy_store_gets_only_the_reminder(
    surfacing_vault: Path, hook_env: dict[str, str], tmp_path: Path
) -> None:
    folder = repo(tmp_path)
    text = start(hook_env, folder)
    assert text.startswith("<memtrove-memory>") and "'photo-app'" in text
    assert "<memory-hygiene>" not in text


def test_hygiene_follows_when_something_needs_tending(
    surfacing_vault: Path, hook_env: dict[str, str], tmp_path: Path
) -> None:
    folder = repo(tmp_path)
    with open_test_vault(hook_env) as vault:
        vault.memory.remember("Deploy A", DEPLOY, store="photo-app")
        vault.memory.remember("Deploy B", DEPLOY + " ", store="photo-app")
        vault.memory.remember("Old branch note", "scoped to a gone branch", store="photo-app",
                       branch="feature/gone")  # fmt: skip
    text = start(hook_env, folder)
    assert "<memory-hygiene>" in text
    assert "1 near-duplicate pair(s) in store photo-app" in text
    assert "branch 'feature/gone'" in text


def test_confirmed_rules_surface_in_context(
    surfacing_vault: Path, hook_env: dict[str, str], tmp_path: Path
) -> None:
    folder = repo(tmp_path)
    situation = "the thumbnail worker runs out of memory"
    with open_test_vault(hook_env) as vault:
        fresh = vault.rules.add_rule("behavior", "Check pyvips cache limits first", when=[situation],
                               store="photo-app")  # fmt: skip
        trusted = vault.rules.add_rule("prediction", "The user wants a minimal patch", when=[situation],
                                 store="global")  # fmt: skip
        for _ in range(8):
            vault.rules.signal_rule("prediction", trusted.id, "confirm")
    prompt = "Why does the thumbnail worker run out of memory?"
    raw = payload("user_prompt_submit.json", prompt=prompt, cwd=str(folder))
    text = context_of(run_hook("context-surfacing", raw, hook_env))
    assert "<vault-rules>" in text
    assert "prediction" in text and "The user wants a minimal patch" in text
    assert fresh.statement not in text  # confidence 0.5 cannot reach 0.60


@pytest.mark.parametrize(
    ("prompt", "asks"),
    [
        ("where were we?", True),
        ("Where did we leave off with the invoices?", True),
        ("what did we do last time?", True),
        ("What did we decide yesterday about retries?", True),
        ("pick up where we left off", True),
        ("Remind me what happened in the previous session", True),
        ("where is the config file?", False),
        ("what did you change in the handler?", False),
        ("How does the last step of the pipeline work?", False),
        ("continue", False),
        ("What was the last commit message?", False),
    ],
)
def test_which_prompts_ask_where_the_work_stands(prompt: str, asks: bool) -> None:
    from memtrove.hooks.context_surfacing import _CONTINUATION

    assert bool(_CONTINUATION.search(prompt)) is asks
