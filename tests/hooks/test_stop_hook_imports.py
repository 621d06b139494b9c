"""The Stop hooks' cold process loads only what its work needs: a real ``python -m memtrove
hook NAME`` process per hook, traced with ``-X importtime``, writes its memory and never
imports an interface stack, the logging package or traceback (loaded only on a failure)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.capture.transcripts import SESSION, SESSION_ONE, write_transcript
from tests.hooks.conftest import hook_env, open_test_vault  # noqa: F401  (fixtures)

STOP_HOOKS = ("decision-extractor", "handoff-generator", "feedback-loop")
NEVER = {"typer", "rich", "click", "httpx", "fastapi", "mcp", "uvicorn", "starlette",
         "pydantic", "numpy", "logging", "traceback", "wordllama", "safetensors",
         "tokenizers", "onnxruntime"}  # fmt: skip


def test_each_stop_hook_process_imports_only_what_it_needs(
    tmp_path: Path,
    hook_env: dict[str, str],  # noqa: F811
) -> None:
    transcript = write_transcript(tmp_path / "s.jsonl", SESSION_ONE)
    event = {"session_id": SESSION, "hook_event_name": "Stop", "transcript_path": str(transcript)}
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MEMTROVE_", "XDG_"))}
    for name in STOP_HOOKS:
        traced = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "memtrove", "hook", name],
            input=json.dumps(event).encode(),
            env={**clean, **hook_env},
            capture_output=True,
            timeout=60,
        )
        assert traced.returncode == 0
        assert json.loads(traced.stdout) == {"continue": True, "suppressOutput": False}
        imported = {
            line.split("|")[-1].strip().split(".")[0]
            for line in traced.stderr.decode().splitlines()
            if line.startswith("import time:")
        }
        assert "memtrove" in imported and "sqlean" in imported, name
        assert imported & NEVER == set(), name
        assert "Traceback" not in traced.stderr.decode(), name
    with open_test_vault(hook_env) as vault:  # the work was done, not skipped
        paths = [d.path for d in vault.list(50, collection="_memtrove")]
    assert any(p.startswith("agent/observations/") for p in paths)
    assert any(p.startswith("agent/handoffs/") for p in paths)
