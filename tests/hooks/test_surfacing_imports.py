"""The context-surfacing hook's cold process (one per user prompt) never imports
:mod:`dataclasses` or :mod:`inspect` (which it imports, with tokenize, dis and ast): a real
``python -m memtrove hook context-surfacing`` process, traced with ``-X importtime``, injects
its context all the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.hooks.conftest import hook_env, payload, surfacing_vault  # noqa: F401  (fixtures)

NEVER = {"dataclasses", "inspect", "typer", "rich", "click", "httpx", "fastapi", "mcp",
         "uvicorn", "starlette", "pydantic", "numpy", "logging"}  # fmt: skip


def test_the_surfacing_process_never_imports_dataclasses(
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MEMTROVE_", "XDG_"))}
    traced = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "memtrove", "hook", "context-surfacing"],
        input=payload("user_prompt_submit.json"),
        env={**clean, **hook_env},
        capture_output=True,
        timeout=60,
    )
    assert traced.returncode == 0, traced.stderr.decode()[-2000:]
    answer = json.loads(traced.stdout)
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert "<vault-context>" in context and "pyvips" in context  # retrieval ran and surfaced
    modules = {
        line.split("|")[-1].strip()
        for line in traced.stderr.decode().splitlines()
        if line.startswith("import time:")
    }
    imported = {module.split(".")[0] for module in modules}
    assert "memtrove" in imported and "sqlean" in imported
    assert imported & NEVER == set()
    # FTS5's tokens in Python (tables built at import) serve a PostgreSQL vault, not this one
    assert "memtrove.db.text_tokens" not in modules
    assert "Traceback" not in traced.stderr.decode()
