"""``memtrove setup curator [--remove]`` as users run it (real processes, HOME in tmp), and the
shipped agent definition checked against what memtrove really offers: every MCP tool and
command it tells the agent to use exists."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import anyio
from mcp import Client

from memtrove import Vault
from memtrove.mcp.server import build_server

AGENT = "memtrove-curator.md"


def setup(home: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MEMTROVE_", "XDG_"))}
    return subprocess.run(
        [sys.executable, "-m", "memtrove", "setup", "curator", *arguments],
        env={**clean, "HOME": str(home)}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def shipped() -> str:
    return resources.files("memtrove").joinpath("agents", "curator.md").read_text("utf-8")


def test_install_update_and_remove(isolated_environment: Path) -> None:
    target = isolated_environment / ".claude" / "agents" / AGENT
    done = setup(isolated_environment)
    assert done.returncode == 0 and done.stdout.startswith("added "), done.stderr
    assert target.read_text() == shipped()
    assert setup(isolated_environment).stdout.startswith("unchanged ")
    target.write_text(target.read_text() + "\nmy edit\n")  # still carries the marker: ours
    assert setup(isolated_environment).stdout.startswith("updated ")
    assert target.read_text() == shipped()
    assert setup(isolated_environment, "--remove").stdout.startswith("removed ")
    assert not target.exists() and target.parent.is_dir()
    assert setup(isolated_environment, "--remove").stdout.startswith("absent ")


def test_a_users_own_agent_of_that_name_is_moved_aside_and_put_back(
    isolated_environment: Path,
) -> None:
    target = isolated_environment / ".claude" / "agents" / AGENT
    target.parent.mkdir(parents=True)
    target.write_text("---\nname: memtrove-curator\n---\nmine\n")
    done = setup(isolated_environment)
    assert done.returncode == 0 and "moved to" in done.stdout
    backup = target.with_name(AGENT + ".user-backup")
    assert backup.read_text().endswith("mine\n") and target.read_text() == shipped()
    done = setup(isolated_environment, "--remove")
    assert done.stdout.startswith("restored ") and target.read_text().endswith("mine\n")
    assert not backup.exists()
    kept = setup(isolated_environment, "--remove")  # the user's file now: never removed
    assert kept.stdout.startswith("kept ") and target.exists()


def test_a_folder_in_its_place_is_one_clear_error(isolated_environment: Path) -> None:
    (isolated_environment / ".claude" / "agents" / AGENT).mkdir(parents=True)
    done = setup(isolated_environment)
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memtrove: error: cannot change")


def test_the_agent_names_real_tools_and_commands(tmp_path: Path) -> None:
    text = shipped()
    head = text.split("---")[1]
    assert re.search(r"^name: memtrove-curator$", head, re.MULTILINE)
    assert re.search(r"^description: .+", head, re.MULTILINE)
    assert re.search(r"^tools: Bash, Read", head, re.MULTILINE)
    named = set(re.findall(r"`([a-z_]+)\(", text))
    assert {"memory_pin", "memory_snooze", "memory_forget", "lifecycle_sweep"} <= named

    async def listed() -> set[str]:
        with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as vault:
            async with Client(build_server(lambda: vault)) as client:
                return {tool.name for tool in (await client.list_tools()).tools}

    assert named <= anyio.run(listed)
    commands = set(re.findall(r"`memtrove ([a-z-]+(?: [a-z-]+)*)", text))
    assert {"doctor", "curate --json", "consolidate --duplicates"} <= commands
    for command in commands:
        words = [word for word in command.split() if not word.startswith("-")]
        done = subprocess.run(
            [sys.executable, "-m", "memtrove", *words, "--help"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, (command, done.stderr)
        for option in (word for word in command.split() if word.startswith("--")):
            assert option in done.stdout, (command, option)
