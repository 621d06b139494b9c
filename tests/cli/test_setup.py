"""``memtrove setup hooks|mcp`` and ``bootstrap --setup-claude`` against a temporary HOME."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memtrove.cli import app, claude_settings
from tests.conftest import EXAMPLES

EXECUTABLE = "/opt/memtrove venv/bin/memtrove"  # a space: the command must quote it
QUOTED = "'/opt/memtrove venv/bin/memtrove'"
OURS = {
    "UserPromptSubmit": [("context-surfacing", 8)],
    "SessionStart": [("postcompact-inject", 5), ("curator-nudge", 5), ("session-start", 5)],
    "PreCompact": [("precompact-extract", 5)],
    "PostToolBatch": [("buffer-batch", 5)],
}
UNRELATED: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"]},
    "hooks": {
        "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "notify-send done"}]}],
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "direnv export"}]}
        ],
    },
}


@pytest.fixture
def home(isolated_environment: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(claude_settings, "memtrove_executable", lambda: EXECUTABLE)
    return isolated_environment


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == code, (result.output, result.stderr)
    return result.output


def settings(home: Path) -> dict[str, Any]:
    return dict(json.loads((home / ".claude" / "settings.json").read_text()))


def backups(folder: Path, name: str) -> list[Path]:
    return sorted(folder.glob(f"{name}.bak-*"))


def our_hooks(data: dict[str, Any]) -> dict[str, list[tuple[str, int]]]:
    found: dict[str, list[tuple[str, int]]] = {}
    for event, groups in data.get("hooks", {}).items():
        for group in groups:
            for hook in group["hooks"]:
                command = hook["command"]
                if command.startswith(QUOTED) and (" hook " in command or "buffer-" in command):
                    assert group["matcher"] == "" and hook["type"] == "command"
                    name = command.removeprefix(QUOTED + " ").removeprefix("hook ")
                    found.setdefault(event, []).append((name, hook["timeout"]))
    return found


def test_setup_hooks_keeps_other_settings_and_is_idempotent(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(UNRELATED))

    out = run("setup", "hooks")
    assert out.startswith(f"installed 6 memtrove hooks in {path} (backup: ")
    data = settings(home)
    assert our_hooks(data) == OURS
    assert data["model"] == "opus" and data["permissions"] == UNRELATED["permissions"]
    assert data["hooks"]["Stop"] == UNRELATED["hooks"]["Stop"]
    assert data["hooks"]["SessionStart"][0] == UNRELATED["hooks"]["SessionStart"][0]
    (backup,) = backups(path.parent, "settings.json")
    assert json.loads(backup.read_text()) == UNRELATED

    assert run("setup", "hooks") == f"memtrove hooks already installed in {path}\n"
    assert settings(home) == data and len(backups(path.parent, "settings.json")) == 1

    out = run("setup", "hooks", "--remove")
    assert out.startswith(f"removed 6 memtrove hooks from {path} (backup: ")
    assert settings(home) == UNRELATED
    assert run("setup", "hooks", "--remove") == f"no memtrove hooks in {path}\n"


def test_setup_hooks_replaces_stale_entries_and_creates_the_file(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    assert run("setup", "hooks").startswith(f"installed 6 memtrove hooks in {path}\n")
    assert our_hooks(settings(home)) == OURS and backups(path.parent, "settings.json") == []

    stale = settings(home)
    stale["hooks"]["Stop"] = [
        {
            "matcher": "",
            "hooks": [
                {"type": "command", "command": "/old/bin/memtrove hook feedback-loop"},
                {"type": "command", "command": "keep-me"},
            ],
        }
    ]
    path.write_text(json.dumps(stale))
    run("setup", "hooks")
    data = settings(home)
    assert our_hooks(data) == OURS
    assert data["hooks"]["Stop"] == [
        {"matcher": "", "hooks": [{"type": "command", "command": "keep-me"}]}
    ]
    assert all(len(data["hooks"][event]) == 1 for event in OURS)


def test_setup_mcp_edits_claude_json(home: Path) -> None:
    path = home / ".claude.json"
    original = {
        "numStartups": 12,
        "projects": {"/src/app": {"allowedTools": []}},
        "mcpServers": {
            "other": {"command": "other-server"},
            "memtrove": {"command": "/old/memtrove", "args": [], "env": {"X": "1"}},
        },
    }
    path.write_text(json.dumps(original))
    path.chmod(0o600)

    assert run("setup", "mcp", "--no-prime").startswith(
        f"added MCP server memtrove to {path} (backup: "
    )
    data = json.loads(path.read_text())
    assert data["mcpServers"]["memtrove"] == {
        "command": EXECUTABLE,
        "args": ["mcp"],
        "env": {"X": "1"},
    }
    assert data["mcpServers"]["other"] == original["mcpServers"]["other"]
    assert data["numStartups"] == 12 and data["projects"] == original["projects"]
    assert path.stat().st_mode & 0o777 == 0o600
    assert run("setup", "mcp", "--no-prime") == f"MCP server memtrove already in {path}\n"
    assert len(backups(home, ".claude.json")) == 1

    assert run("setup", "mcp", "--remove").startswith(f"removed MCP server memtrove from {path}")
    assert json.loads(path.read_text())["mcpServers"] == {"other": {"command": "other-server"}}
    assert run("setup", "mcp", "--remove") == f"no MCP server memtrove in {path}\n"


def test_setup_mcp_creates_a_private_claude_json(home: Path) -> None:
    run("setup", "mcp", "--no-prime")
    path = home / ".claude.json"
    assert json.loads(path.read_text()) == {
        "mcpServers": {"memtrove": {"command": EXECUTABLE, "args": ["mcp"]}}
    }
    assert path.stat().st_mode & 0o777 == 0o600
    assert not answers_file().exists()


def answers_file() -> Path:
    return Path(os.environ["XDG_CACHE_HOME"]) / "memtrove" / "mcp-answers.json"


@pytest.mark.parametrize(
    ("relative", "text", "message"),
    [
        (".claude/settings.json", '{"hooks": {', "is not valid JSON (line 1 column 12"),
        (".claude/settings.json", "[1, 2]", "is not a JSON object"),
        (".claude/settings.json", '{"hooks": []}', '"hooks" is not an object'),
        (".claude/settings.json", '{"hooks": {"PreCompact": {}}}', '"hooks.PreCompact" is not'),
        (".claude.json", '{"mcpServers": [1]}', '"mcpServers" is not an object'),
    ],
)
def test_malformed_files_are_refused_untouched(
    home: Path, relative: str, text: str, message: str
) -> None:
    path = home / relative
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    command = "mcp" if relative == ".claude.json" else "hooks"
    result = CliRunner().invoke(app, ["setup", command])
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith(f"memtrove: error: {path}") and message in result.stderr
    assert result.stderr.count("\n") == 1 and "nothing was changed" in result.stderr
    assert path.read_text() == text and backups(path.parent, path.name) == []


def test_a_symlinked_settings_file_stays_a_link(home: Path, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "claude-settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"model": "sonnet"}')
    link = home / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(dotfiles)
    run("setup", "hooks")
    assert link.is_symlink() and os.readlink(link) == str(dotfiles)
    data = json.loads(dotfiles.read_text())
    assert data["model"] == "sonnet" and our_hooks(data) == OURS


def test_bootstrap_setup_claude_does_everything(home: Path, tmp_path: Path) -> None:
    out = run(
        "--vault",
        str(tmp_path / "vault.sqlite"),
        "bootstrap",
        str(EXAMPLES),
        "--name",
        "demo",
        "--skip-embed",
        "--setup-claude",
    )
    assert "+30 ~0 =0 -0" in out
    assert "installed 6 memtrove hooks" in out and "added MCP server memtrove" in out
    assert our_hooks(settings(home)) == OURS
    assert "memtrove" in json.loads((home / ".claude.json").read_text())["mcpServers"]
    # The handshake ran once per protocol version: the first session is answered at once.
    stored = json.loads(answers_file().read_text())["answers"]
    methods = [json.loads(key) for key in stored]
    assert sum(1 for key in methods if key[0] == "initialize") == 4
    assert {key[1] for key in methods if key[0] == "tools/list"} >= {"2025-11-25", "2025-06-18"}


def test_port_needs_http() -> None:
    result = CliRunner().invoke(app, ["mcp", "--port", "9000"])
    assert result.exit_code == 2 and "--port needs --http" in result.stderr


def test_the_executable_is_this_environments_memtrove() -> None:
    executable = claude_settings.memtrove_executable()
    assert Path(executable).name.startswith("memtrove") and Path(executable).is_file()
