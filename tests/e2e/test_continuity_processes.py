"""Continuity by default: the installed SessionStart hook (``session-start``) opens a new
session with the last handoff of the same project, written by the real Stop hooks of the
session before; another project's session starts without it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.capture.transcripts import assistant, user, write_transcript
from tests.e2e.test_hooks_processes import context, hook, process_env
from tests.hooks.conftest import hook_env, open_test_vault  # noqa: F401  (fixtures)

FIRST = "0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d"
SECOND = "1c2d3e4f-5061-4b7c-8d9e-0f1a2b3c4d5e"
ELSEWHERE = "2d3e4f50-6172-4c8d-9e0f-1a2b3c4d5e6f"
STEP = "the retry test for CreateInvoice with a reused idempotency key"


def _start(session: str, cwd: Path, env: dict[str, str]) -> str:
    start = {
        "session_id": session,
        "hook_event_name": "SessionStart",
        "source": "startup",
        "cwd": str(cwd),
    }
    answer, _ = hook("session-start", json.dumps(start).encode(), env)
    return context(answer)


def test_the_next_session_in_the_project_starts_from_the_last_handoff(
    tmp_path: Path,
    hook_env: dict[str, str],  # noqa: F811
) -> None:
    env = process_env(hook_env)
    billing, website = tmp_path / "billing", tmp_path / "website"
    for folder in (billing, website):
        folder.mkdir()
        subprocess.run(["git", "init", "-q", str(folder)], check=True)
    transcript = write_transcript(
        tmp_path / "projects" / "billing" / f"{FIRST}.jsonl",
        [
            user("Invoices are created twice when the client retries. Can you fix it?"),
            assistant(
                "The handler had no idempotency check. I added an idempotency key column to "
                "invoices and made CreateInvoice look it up first.",
                edit=str(billing / "invoices/create.py"),
            ),
            user(
                "Good. We decided to keep the idempotency key for 24 hours. "
                "Never retry CreateInvoice without the key."
            ),
            assistant(f"Agreed. Still to do: {STEP}; I left a TODO in the test file."),
        ],
    )
    stop = {
        "session_id": FIRST,
        "hook_event_name": "Stop",
        "transcript_path": str(transcript),
        "cwd": str(billing),
    }
    for name in ("decision-extractor", "handoff-generator"):
        hook(name, json.dumps(stop).encode(), env)
    with open_test_vault(hook_env) as vault:
        (handoff,) = vault.capture.latest_handoffs(5)
        assert handoff.session_id == FIRST

    (billing / "invoices").mkdir()
    text = _start(SECOND, billing / "invoices", env)  # a folder of the same repository
    assert "<vault-session>" in text and "Last session in this project" in text
    assert STEP in text and "Next steps:" in text
    assert text.index("<vault-session>") < text.index("<memtrove-memory>")
    assert len(text[: text.index("</vault-session>")]) // 4 <= 320  # within its budget

    for prompt in ("where were we?", "What did we do last time?", "Pick up where we left off"):
        ask = {
            "session_id": SECOND,
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
            "cwd": str(billing),
        }
        answer, _ = hook("context-surfacing", json.dumps(ask).encode(), env)
        assert STEP in context(answer) and "Last session in this project" in context(answer)
    ask = {
        "session_id": SECOND,
        "hook_event_name": "UserPromptSubmit",
        "prompt": "How does the invoice handler validate amounts?",
        "cwd": str(billing),
    }
    answer, _ = hook("context-surfacing", json.dumps(ask).encode(), env)
    assert "Last session in this project" not in json.dumps(answer)

    # the agent's tools see it too: memory_retrieve over the real MCP client
    from tests.e2e.test_internal_filter_processes import _mcp

    (found,) = _mcp(env, [("memory_retrieve", {"query": "what happened in the last session?"})])
    paths = [f"{r['collection']}/{r['path']}" for r in found.structured_content["results"]]
    assert any(path.startswith("_memtrove/agent/handoffs/") for path in paths), paths
    (timeline,) = _mcp(env, [("memory_retrieve", {"query": "what did we do today?"})])
    shown = timeline.content[0].text
    assert "Sessions in this window:" in shown and f"{FIRST[:8]}" in shown, shown
    assert "(handoff: _memtrove/agent/handoffs/" in shown

    # the user's decision and rule from session 1: each found, once
    asked = [
        ("memory_retrieve", {"query": "how long do we keep the idempotency key?"}),
        ("memory_retrieve", {"query": "can CreateInvoice be retried without the key?"}),
    ]
    for answer, words in zip(_mcp(env, asked), ("24 hours", "Never retry"), strict=True):
        holding = [r for r in answer.structured_content["results"] if words in json.dumps(r)]
        assert len(holding) == 1, answer.content[0].text

    other = _start(ELSEWHERE, website, env)
    assert "<vault-session>" not in other and "<memtrove-memory>" in other
    again = _start(FIRST, billing, env)  # the session that wrote it is not shown its own
    assert "<vault-session>" not in again
