"""Session focus and the user profile as a user meets them: `memtrove focus` and `memtrove
profile` in real processes, then the hooks Claude Code runs, fed its JSON on stdin."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.hooks.conftest import (  # noqa: F401  (fixtures)
    hook_env,
    open_test_vault,
    surfacing_vault,
    template_vault,
)

PROMPT = "photo deduplication and storage design"
MEETING = "demo/notes/2026-08-20-mobile-sync-meeting.md"
BLOBS = "demo/decisions/0002-content-addressed-blob-storage.md"


def environment(hook_env: dict[str, str], **extra: str) -> dict[str, str]:  # noqa: F811
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MEMTROVE_", "XDG_"))}
    return {**clean, **hook_env, **extra}


def memtrove(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "memtrove", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)


def hook(name: str, payload: dict[str, Any], env: dict[str, str]) -> str:
    command = [sys.executable, "-m", "memtrove", "hook", name]
    done = subprocess.run(
        command, input=json.dumps(payload).encode(), env=env, capture_output=True, timeout=60
    )
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    lines = done.stdout.decode("ascii").splitlines()
    assert len(lines) == 1
    answer = json.loads(lines[0])
    return str(answer.get("hookSpecificOutput", {}).get("additionalContext", ""))


def surfaced(env: dict[str, str], session: str, prompt: str = PROMPT) -> list[str]:
    payload = {"session_id": session, "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    return re.findall(r"^demo/\S+\.md", hook("context-surfacing", payload, env), re.M)


def test_a_focus_topic_steers_context_surfacing(
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
) -> None:
    env = environment(hook_env)
    plain = surfaced(env, "plain-session")
    assert MEETING in plain and BLOBS in plain
    done = memtrove(env, "focus", "set", "postgres", "--session-id", "focused-session")
    assert done.returncode == 0, done.stderr
    steered = surfaced(env, "focused-session")
    # the decision that names PostgreSQL leads; the meeting, which does not, falls away
    assert steered[0] == BLOBS and MEETING not in steered
    # another session is not steered by this one's focus
    assert surfaced(env, "other-session", PROMPT + " ") == plain


def test_a_topic_nothing_matches_changes_nothing(
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
) -> None:
    env = environment(hook_env)
    plain = surfaced(env, "plain-session")
    memtrove(env, "focus", "set", "zanzibar quokka", "--session-id", "odd-session")
    assert surfaced(env, "odd-session") == plain


def test_the_environment_topic_and_the_focus_root(
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
    tmp_path: Path,
) -> None:
    env = environment(hook_env, MEMTROVE_SESSION_FOCUS="postgres")
    steered = surfaced(env, "any-session")
    assert steered[0] == BLOBS and MEETING not in steered
    # a focus file (under MEMTROVE_FOCUS_ROOT) wins over the environment's topic
    rooted = environment(hook_env, MEMTROVE_SESSION_FOCUS="postgres",
                         MEMTROVE_FOCUS_ROOT=str(tmp_path / "focus"))  # fmt: skip
    assert memtrove(rooted, "focus", "set", "mobile sync", "--session-id", "s2").returncode == 0
    assert (tmp_path / "focus" / "s2.focus").is_file()
    assert surfaced(rooted, "s2")[0] == MEETING


def test_a_hostile_session_id_means_no_focus(
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
    tmp_path: Path,
) -> None:
    env = environment(hook_env, MEMTROVE_FOCUS_ROOT=str(tmp_path / "focus" / "inner"))
    (tmp_path / "focus").mkdir()
    (tmp_path / "focus" / "escape.focus").write_text("postgres", encoding="utf-8")
    plain = surfaced(env, "plain-session")
    assert surfaced(env, "../escape", PROMPT + " ") == plain


def test_the_profile_at_session_start(
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
) -> None:
    env = environment(hook_env)
    start = {"session_id": "s-start", "hook_event_name": "SessionStart", "source": "startup"}
    assert "<vault-profile>" not in hook("session-start", start, env)  # none built yet
    rebuilt = memtrove(env, "profile", "rebuild", "--json")
    assert rebuilt.returncode == 0
    first_fact = json.loads(rebuilt.stdout)["static"][0]
    context = hook("session-start", start, env)
    block = context[context.index("<vault-profile>") : context.index("</vault-profile>") + 16]
    assert block.startswith("<vault-profile>\n## User profile\nKnown context:\n")
    assert f"- {first_fact}\n" in block
    assert -(-len(block) // 4) <= 300


def test_session_bootstrap_builds_a_missing_profile_and_puts_it_first(
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
) -> None:
    env = environment(hook_env)
    start = {"session_id": "s-boot", "hook_event_name": "SessionStart", "source": "startup"}
    context = hook("session-bootstrap", start, env)
    assert context.startswith("<vault-session>\n## User profile\nKnown context:\n- ")
    profile = context.split("\n\n")[0]
    assert -(-len(profile) // 4) <= 800 and -(-len(context) // 4) <= 2000
    shown = memtrove(env, "profile", "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["path"] == "_memtrove/profile.md"
