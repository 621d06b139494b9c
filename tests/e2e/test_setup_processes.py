"""``memtrove setup hooks|mcp`` as users run it: real processes write Claude Code's settings,
then the written hook command runs through ``sh -c`` (as Claude Code runs it) and the written
MCP entry is started by the official MCP client. Both must open the vault and config that
setup was run for, not the default ones, whatever the paths hold (spaces, quotes)."""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import TextContent

from tests.conftest import write

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "hooks"
NOTE_PATH = "incidents/thumbnail-oom-quillback.md"
# Only the chosen vault holds this note; the recorded prompt asks about it.
NOTE = """# Thumbnail worker ran out of memory after the pyvips switch (quillback)

The thumbnail worker ran out of memory after the pyvips switch because the pyvips cache
kept every decoded image; the quillback fix caps the cache at 64 MiB per worker.
"""
OTHER_NOTES = 3


def base_env(home: Path) -> dict[str, str]:
    """Claude Code's environment: this test's HOME and XDG folders, no MEMTROVE_*."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MEMTROVE_", "XDG_"))}
    return clean | {
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
    }


def memtrove(
    *args: str, env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "memtrove", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done


def write_notes(tmp_path: Path) -> Path:
    """NOTE and a few unrelated notes (one document alone makes a degenerate corpus)."""
    notes = tmp_path / "notes"
    write(notes, NOTE_PATH, NOTE)
    for number in range(1, OTHER_NOTES + 1):
        write(
            notes, f"ops/deploy-{number}.md", f"# Deploy step {number}\n\nRun migration {number}.\n"
        )
    return notes


def make_vault(tmp_path: Path, env: dict[str, str], *vault: str, cwd: Path | None = None) -> None:
    """Index the notes into the vault ``vault`` names (``--vault X``), else the env's."""
    notes = write_notes(tmp_path)
    memtrove(*vault, "bootstrap", str(notes), "--name", "notes", "--skip-embed", env=env, cwd=cwd)


def default_vault(home: Path) -> Path:
    return home / ".cache" / "memtrove" / "vault.sqlite"


def hook_commands(home: Path) -> dict[str, list[str]]:
    data = json.loads((home / ".claude" / "settings.json").read_text())
    return {
        event: [hook["command"] for group in groups for hook in group["hooks"]]
        for event, groups in data.get("hooks", {}).items()
    }


def mcp_entry(home: Path) -> dict[str, Any]:
    entry: dict[str, Any] = json.loads((home / ".claude.json").read_text())["mcpServers"][
        "memtrove"
    ]
    return entry


def run_prompt_hook(home: Path, env: dict[str, str]) -> str:
    """The installed UserPromptSubmit command, through ``sh -c``, fed a recorded payload."""
    (command,) = hook_commands(home)["UserPromptSubmit"]
    stdin = (FIXTURES / "user_prompt_submit.json").read_bytes()
    done = subprocess.run(
        ["sh", "-c", command], input=stdin, env=env, capture_output=True, timeout=60
    )
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    answer = json.loads(done.stdout)
    context: str = answer["hookSpecificOutput"]["additionalContext"]
    return context


def context_rows(vault: Path) -> int:
    with sqlite3.connect(vault) as connection:
        return int(connection.execute("SELECT COUNT(*) FROM context_usage").fetchone()[0])


def call_mcp(entry: dict[str, Any], env: dict[str, str], errlog: Path) -> dict[str, str]:
    """Start the written entry as Claude Code does (its env over Claude Code's) and call
    ``status`` and ``search``; their texts."""
    assert entry["type"] == "stdio"
    parameters = StdioServerParameters(
        command=entry["command"], args=entry["args"], env=env | entry.get("env", {})
    )
    texts: dict[str, str] = {}

    async def main() -> None:
        with errlog.open("w") as log:
            async with (
                stdio_client(parameters, errlog=log) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                for name, arguments in (("status", {}), ("search", {"query": "quillback"})):
                    result = await session.call_tool(name, arguments)
                    assert not result.is_error, result
                    content = result.content[0]
                    assert isinstance(content, TextContent)
                    texts[name] = content.text

    anyio.run(main)
    return texts


def assert_opens(home: Path, env: dict[str, str], vault: Path, tmp_path: Path) -> None:
    """The installed hook and MCP server work on ``vault`` (whose config names ``notes``)."""
    before = context_rows(vault)
    assert "quillback" in run_prompt_hook(home, env)
    assert context_rows(vault) == before + 1
    texts = call_mcp(mcp_entry(home), env, tmp_path / "mcp-stderr.txt")
    assert f"vault {vault} " in texts["status"]
    # The config was found too: it names the collection.
    assert f"collection notes: {OTHER_NOTES + 1} documents" in texts["status"]
    assert f"notes/{NOTE_PATH}" in texts["search"]
    assert not default_vault(home).exists()


def test_a_chosen_vault_with_a_space_and_a_quote(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = base_env(home)
    vault = tmp_path / "Claude's vault" / "my v.sqlite"
    make_vault(tmp_path, env, "--vault", str(vault))

    out = memtrove("--vault", str(vault), "setup", "hooks", env=env).stdout
    assert out.splitlines()[1] == (
        f"the hooks will open vault {vault} (config {home / '.config' / 'memtrove'})"
    )
    memtrove("--vault", str(vault), "setup", "mcp", "--no-prime", env=env)

    prefix = (
        f"MEMTROVE_VAULT={shlex.quote(str(vault))} "
        f"MEMTROVE_CONFIG_DIR={shlex.quote(str(home / '.config' / 'memtrove'))} "
    )
    commands = hook_commands(home)
    assert sum(len(found) for found in commands.values()) == 10
    assert all(c.startswith(prefix) for found in commands.values() for c in found)
    entry = mcp_entry(home)
    assert list(entry) == ["type", "command", "args", "env"] and entry["args"] == ["mcp"]
    assert entry["env"] == {
        "MEMTROVE_VAULT": str(vault),
        "MEMTROVE_CONFIG_DIR": str(home / ".config" / "memtrove"),
    }
    assert_opens(home, env, vault, tmp_path)


def test_memtrove_vault_and_config_dir_in_the_environment(tmp_path: Path) -> None:
    home = tmp_path / "home"
    work = tmp_path / "work dir"
    work.mkdir()
    # Relative paths, resolved against the folder setup ran in.
    chosen = {"MEMTROVE_VAULT": "vaults/v.sqlite", "MEMTROVE_CONFIG_DIR": "my config"}
    env = base_env(home)
    make_vault(tmp_path, env | chosen, cwd=work)

    memtrove("setup", "hooks", env=env | chosen, cwd=work)
    memtrove("setup", "mcp", "--no-prime", env=env | chosen, cwd=work)

    vault, config = work / "vaults" / "v.sqlite", work / "my config"
    assert mcp_entry(home)["env"] == {
        "MEMTROVE_VAULT": str(vault),
        "MEMTROVE_CONFIG_DIR": str(config),
    }
    assert (config / "config.yaml").is_file()
    assert not (home / ".config" / "memtrove" / "config.yaml").exists()
    assert_opens(home, env, vault, tmp_path)  # run without MEMTROVE_*, from anywhere


def test_rerun_updates_in_place_and_remove_takes_any_vault(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = base_env(home)
    first, second = tmp_path / "first.sqlite", tmp_path / "second vault.sqlite"
    make_vault(tmp_path, env, "--vault", str(second))

    for command in (["setup", "hooks"], ["setup", "mcp", "--no-prime"]):
        memtrove("--vault", str(first), *command, env=env)
        again = memtrove("--vault", str(first), *command, env=env).stdout
        assert "already" in again.splitlines()[0]
        memtrove("--vault", str(second), *command, env=env)

    commands = hook_commands(home)
    assert [len(found) for found in commands.values()] == [1, 3, 1, 1, 3, 1]
    quoted = shlex.quote(str(second))
    assert all(f"MEMTROVE_VAULT={quoted} " in c for found in commands.values() for c in found)
    assert mcp_entry(home)["env"]["MEMTROVE_VAULT"] == str(second)
    assert_opens(home, env, second, tmp_path)

    # Back to the default vault: today's plain entries, nothing extra.
    memtrove("setup", "hooks", env=env)
    memtrove("setup", "mcp", "--no-prime", env=env)
    executable = shlex.quote(mcp_entry(home)["command"])
    assert hook_commands(home)["UserPromptSubmit"] == [f"{executable} hook context-surfacing"]
    assert "env" not in mcp_entry(home)

    memtrove("--vault", str(second), "setup", "hooks", env=env)
    memtrove("--vault", str(second), "setup", "mcp", "--no-prime", env=env)
    out = memtrove("setup", "hooks", "--remove", env=env).stdout
    assert out.startswith("removed 10 memtrove hooks")
    out = memtrove("setup", "mcp", "--remove", env=env).stdout
    assert out.startswith("removed MCP server memtrove")
    assert json.loads((home / ".claude.json").read_text())["mcpServers"] == {}
    assert json.loads((home / ".claude" / "settings.json").read_text()) == {}


def test_bootstrap_setup_claude_primes_for_the_chosen_vault(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = base_env(home)
    vault = tmp_path / "boot strap" / "v.sqlite"
    notes = write_notes(tmp_path)
    out = memtrove(
        "--vault", str(vault), "bootstrap", str(notes), "--name", "notes", "--skip-embed",
        "--setup-claude", env=env,
    ).stdout  # fmt: skip
    assert "the hooks and the MCP server will open vault" in out
    assert (home / ".cache" / "memtrove" / "mcp-answers.json").is_file()
    assert mcp_entry(home)["env"]["MEMTROVE_VAULT"] == str(vault)
    assert_opens(home, env, vault, tmp_path)
