"""``memtrove lifecycle`` as users run it: real processes on the example vault, whose notes
are made a year unused; archived notes leave search and the context-surfacing hook, and come
back with ``restore``."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.e2e.test_hooks_processes import context, hook, process_env
from tests.hooks.conftest import (  # noqa: F401  (fixtures)
    hook_env,
    payload,
    surfacing_vault,
    template_vault,
)

PROBLEM = "problems/2026-08-05-thumbnail-worker-memory-leak.md"
INJECTED = f"\ndemo/{PROBLEM}"  # the path line of an injected document (others link to it)
OLD = "2024-01-01T00:00:00Z"


def memtrove(*args: str, env: dict[str, str], code: int = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "memtrove", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    return done


def search(query: str, env: dict[str, str]) -> set[str]:
    done = memtrove("search", query, "-n", "50", "--json", env=env)
    return {result["path"] for result in json.loads(done.stdout)["results"]}


def surface(vault_file: Path, prompt: bytes, env: dict[str, str]) -> str:
    """The context-surfacing hook's context for ``prompt``, asked as if for the first time."""
    with sqlite3.connect(vault_file) as connection:
        connection.execute("DELETE FROM hook_dedupe")
    return context(hook("context-surfacing", prompt, env)[0])


def archived(vault_file: Path) -> int:
    with sqlite3.connect(vault_file) as connection:
        row = connection.execute("SELECT COUNT(*) FROM documents WHERE archived_at IS NOT NULL")
        return int(row.fetchone()[0])


def age(vault_file: Path) -> None:
    """Every document known, modified, last used and last recalled long ago."""
    with sqlite3.connect(vault_file) as connection:
        connection.execute(
            "UPDATE documents SET created_at = ?, modified_at = ?, authored_at = NULL, "
            "last_accessed_at = NULL",
            (OLD, OLD),
        )
        connection.execute("DELETE FROM recall_events")


def test_sweep_search_restore_and_purge(
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
) -> None:
    env = process_env(hook_env)
    prompt = payload("user_prompt_submit.json")
    assert INJECTED in surface(surfacing_vault, prompt, env)
    age(surfacing_vault)  # that recall included

    dry = json.loads(memtrove("lifecycle", "sweep", "--json", env=env).stdout)
    assert dry["dry_run"] is True and PROBLEM in {d["path"] for d in dry["documents"]}
    assert archived(surfacing_vault) == 0

    applied = memtrove("lifecycle", "sweep", "--apply", env=env).stdout
    assert f"archived {dry['candidates']} documents" in applied
    assert PROBLEM not in search("thumbnail worker memory", env)
    surfaced = surface(surfacing_vault, prompt, env)
    assert surfaced and INJECTED not in surfaced  # durable notes still surface
    found = memtrove("lifecycle", "search", "thumbnail worker memory leak", env=env).stdout
    assert PROBLEM in found
    assert archived(surfacing_vault) == dry["candidates"]

    restored = memtrove("lifecycle", "restore", "--query", "thumbnail worker memory leak", env=env)
    assert restored.stdout.startswith("restored ")
    assert INJECTED in surface(surfacing_vault, prompt, env)

    purged = json.loads(memtrove("lifecycle", "purge", "--yes", "--json", env=env).stdout)
    assert purged["purged"] == dry["candidates"] - int(restored.stdout.split()[1]) > 0
    assert archived(surfacing_vault) == 0
    assert PROBLEM in search("thumbnail worker memory leak", env)


def test_a_bad_policy_is_one_line(
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
) -> None:
    config = Path(hook_env["MEMTROVE_CONFIG_DIR"]) / "config.yaml"
    config.write_text(config.read_text() + "lifecycle:\n  purge_after_days: later\n")
    done = memtrove("lifecycle", "sweep", env=process_env(hook_env), code=1)
    assert done.stderr.startswith("memtrove: error: ") and done.stderr.count("\n") == 1
    assert "purge_after_days" in done.stderr
