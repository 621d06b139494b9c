"""examples/cursor/hooks.json run as Cursor runs it: each command through ``sh -c`` with
``memtrove`` found on PATH, Cursor's JSON payload on stdin, its JSON answer on stdout.

Payload shapes, from Cursor's hooks documentation (cursor.com/docs/agent/hooks, "Hooks"):
every event's input carries ``conversation_id``, ``generation_id``, ``model``,
``hook_event_name``, ``cursor_version``, ``workspace_roots``, ``user_email`` and
``transcript_path``; ``sessionStart`` adds ``session_id``, ``is_background_agent`` and
``composer_mode`` and reads ``additional_context`` (plus ``env``, ``continue``,
``user_message``) from the answer; ``beforeSubmitPrompt`` adds ``prompt`` and ``attachments``
and reads ``continue`` (false blocks the prompt) and ``user_message``. Cursor takes no
context from ``beforeSubmitPrompt``: what must reach the model goes in at ``sessionStart`` or
through the MCP server (examples/cursor/mcp.json)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cursor"
CONVERSATION = "c0a5e1f2-7d3b-4f60-9c1e-2b8d4a6f9e17"


def common(event: str, project: Path) -> dict[str, Any]:
    return {
        "conversation_id": CONVERSATION,
        "generation_id": "9b1f7c2e-0d4a-4e8b-a6c3-5f2d1e0b7a94",
        "model": "claude-4.5-sonnet",
        "hook_event_name": event,
        "cursor_version": "2.1.0",
        "workspace_roots": [str(project)],
        "user_email": "dev@example.com",
        "transcript_path": None,
    }


@pytest.fixture
def env(isolated_environment: Path, tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MEMTROVE_")}
    return clean | {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{clean.get('PATH', '')}",
        "MEMTROVE_VAULT": str(tmp_path / "vault.sqlite"),
        "MEMTROVE_CONFIG_DIR": str(tmp_path / "config"),
    }


def run_event(event: str, payload: bytes, env: dict[str, str], cwd: Path) -> dict[str, Any]:
    hooks = json.loads((EXAMPLE / "hooks.json").read_text())
    assert hooks["version"] == 1
    (entry,) = hooks["hooks"][event]
    done = subprocess.run(
        ["sh", "-c", entry["command"]], input=payload, env=env, cwd=cwd,
        capture_output=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
    answer = json.loads(done.stdout)
    assert isinstance(answer, dict)
    return answer


def test_session_start_answers_additional_context(env: dict[str, str], tmp_path: Path) -> None:
    project = tmp_path / "photo-app"
    project.mkdir()
    remembered = subprocess.run(
        [sys.executable, "-m", "memtrove", "remember", "Deploy target",
         "The photo service deploys to Fly.io in ams.", "--store", "photo-app"],
        env=env, cwd=project, capture_output=True, timeout=60,
    )  # fmt: skip
    assert remembered.returncode == 0, remembered.stderr
    payload = common("sessionStart", project) | {
        "session_id": CONVERSATION, "is_background_agent": False, "composer_mode": "agent",
    }  # fmt: skip
    answer = run_event("sessionStart", json.dumps(payload).encode(), env, project)
    assert isinstance(answer["additional_context"], str)
    assert "memory" in answer["additional_context"].lower()
    assert answer.get("continue", True) is True


@pytest.mark.parametrize(
    "payload",
    [None, b"", b"\xff\x00", b"[]", b'{"prompt": 5, "attachments": "x"}'],
)  # fmt: skip
def test_before_submit_prompt_never_blocks_the_prompt(
    env: dict[str, str], tmp_path: Path, payload: bytes | None
) -> None:
    if payload is None:
        body = common("beforeSubmitPrompt", tmp_path) | {
            "prompt": "How do we deploy the photo service?",
            "attachments": [{"type": "file", "file_path": str(tmp_path / "fly.toml")}],
        }
        payload = json.dumps(body).encode()
    answer = run_event("beforeSubmitPrompt", payload, env, tmp_path)
    assert answer.get("continue", True) is True  # Cursor blocks the prompt on false


def test_the_mcp_example_starts_memtrove_mcp() -> None:
    server = json.loads((EXAMPLE / "mcp.json").read_text())["mcpServers"]["memtrove"]
    assert server == {"command": "memtrove", "args": ["mcp"]}
