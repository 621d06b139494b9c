"""``memtrove setup hooks|mcp`` and ``bootstrap --setup-claude`` against a temporary HOME."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memtrove.cli import app, claude_settings
from memtrove.cli.agents import SERVE_HINT
from tests.conftest import EXAMPLES

EXECUTABLE = "/opt/memtrove venv/bin/memtrove"  # a space: the command must quote it
QUOTED = "'/opt/memtrove venv/bin/memtrove'"
OURS = {
    "UserPromptSubmit": [("context-surfacing", 8)],
    "SessionStart": [("postcompact-inject", 5), ("curator-nudge", 5), ("session-start", 5)],
    "PreCompact": [("precompact-extract", 5)],
    "PostToolBatch": [("buffer-batch", 5)],
    "Stop": [("decision-extractor", 30), ("handoff-generator", 30), ("feedback-loop", 30)],
    "SessionEnd": [("handoff-generator", 30)],
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


def our_hooks(
    data: dict[str, Any], env: dict[str, str] | None = None
) -> dict[str, list[tuple[str, int]]]:
    """memtrove's hooks per event, as (name, timeout); each command must run EXECUTABLE with
    exactly ``env`` as its shell prefix (none for the default vault)."""
    found: dict[str, list[tuple[str, int]]] = {}
    for event, groups in data.get("hooks", {}).items():
        for group in groups:
            for hook in group["hooks"]:
                words = shlex.split(hook["command"])
                assignments = [w for w in words if "=" in w and w.split("=")[0].isupper()]
                rest = words[len(assignments) :]
                if not rest or rest[0] != EXECUTABLE:
                    continue
                assert group["matcher"] == "" and hook["type"] == "command"
                assert dict(a.split("=", 1) for a in assignments) == (env or {})
                name = rest[-1] if rest[1] == "hook" else rest[1]
                found.setdefault(event, []).append((name, hook["timeout"]))
    return found


def test_setup_hooks_keeps_other_settings_and_is_idempotent(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(UNRELATED))

    out = run("setup", "hooks")
    assert out.startswith(f"installed 10 memtrove hooks in {path} (backup: ")
    data = settings(home)
    assert our_hooks(data) == OURS
    assert data["model"] == "opus" and data["permissions"] == UNRELATED["permissions"]
    assert data["hooks"]["Stop"][0] == UNRELATED["hooks"]["Stop"][0]
    assert data["hooks"]["SessionStart"][0] == UNRELATED["hooks"]["SessionStart"][0]
    (backup,) = backups(path.parent, "settings.json")
    assert json.loads(backup.read_text()) == UNRELATED

    assert run("setup", "hooks") == f"memtrove hooks already installed in {path}\n{SERVE_HINT}\n"
    assert settings(home) == data and len(backups(path.parent, "settings.json")) == 1

    out = run("setup", "hooks", "--remove")
    assert out.startswith(f"removed 10 memtrove hooks from {path} (backup: ")
    assert settings(home) == UNRELATED
    assert run("setup", "hooks", "--remove") == f"no memtrove hooks in {path}\n"


def test_setup_hooks_replaces_stale_entries_and_creates_the_file(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    assert run("setup", "hooks").startswith(f"installed 10 memtrove hooks in {path}\n")
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
    assert data["hooks"]["Stop"][0] == {
        "matcher": "",
        "hooks": [{"type": "command", "command": "keep-me"}],
    }
    assert all(len(data["hooks"][event]) == 1 for event in OURS if event != "Stop")


def test_setup_mcp_edits_claude_json(home: Path) -> None:
    path = home / ".claude.json"
    original: dict[str, Any] = {
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
        "type": "stdio",
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
        "mcpServers": {"memtrove": {"type": "stdio", "command": EXECUTABLE, "args": ["mcp"]}}
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
    vault = tmp_path / "vault.sqlite"
    out = run(
        "--vault",
        str(vault),
        "bootstrap",
        str(EXAMPLES),
        "--name",
        "demo",
        "--skip-embed",
        "--setup-claude",
    )
    assert "+30 ~0 =0 -0" in out
    assert "installed 10 memtrove hooks" in out and "added MCP server memtrove" in out
    placement = claude_settings.placement_env(vault, home / ".config" / "memtrove")
    assert f"the hooks and the MCP server will open vault {vault} (config " in out
    assert our_hooks(settings(home), placement) == OURS
    entry = json.loads((home / ".claude.json").read_text())["mcpServers"]["memtrove"]
    assert entry["env"] == placement
    assert not (home / ".cache" / "memtrove" / "vault.sqlite").exists()
    # The handshake ran once per protocol version: the first session is answered at once.
    stored = json.loads(answers_file().read_text())["answers"]
    methods = [json.loads(key) for key in stored]
    assert sum(1 for key in methods if key[0] == "initialize") == 4
    assert {key[1] for key in methods if key[0] == "tools/list"} >= {"2025-11-25", "2025-06-18"}


def test_a_chosen_vault_travels_with_the_hooks(home: Path, tmp_path: Path) -> None:
    vault = tmp_path / "it's a vault" / "v.sqlite"  # a space and a quote
    config = home / ".config" / "memtrove"
    path = home / ".claude" / "settings.json"
    out = run("--vault", str(vault), "setup", "hooks")
    assert out == (
        f"installed 10 memtrove hooks in {path}\n"
        f"the hooks will open vault {vault} (config {config})\n{SERVE_HINT}\n"
    )
    placement = {"MEMTROVE_VAULT": str(vault), "MEMTROVE_CONFIG_DIR": str(config)}
    assert our_hooks(settings(home), placement) == OURS
    (command,) = [h["command"] for g in settings(home)["hooks"]["PreCompact"] for h in g["hooks"]]
    assert command == (
        f"MEMTROVE_VAULT={shlex.quote(str(vault))} MEMTROVE_CONFIG_DIR={config} "
        f"{QUOTED} hook precompact-extract"
    )

    # Another vault replaces the entries in place; the default one writes today's commands.
    other = tmp_path / "other.sqlite"
    run("--vault", str(other), "setup", "hooks")
    assert our_hooks(settings(home), placement | {"MEMTROVE_VAULT": str(other)}) == OURS
    assert run("--vault", str(other), "setup", "hooks").startswith("memtrove hooks already")
    run("setup", "hooks")
    assert our_hooks(settings(home)) == OURS

    run("--vault", str(vault), "setup", "hooks")
    assert run("setup", "hooks", "--remove").startswith(f"removed 10 memtrove hooks from {path}")
    assert settings(home) == {}


def test_the_environment_at_setup_time_is_kept(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMTROVE_CONFIG_DIR", "conf")  # relative: resolved now
    run("setup", "mcp", "--no-prime")
    default = home / ".cache" / "memtrove" / "vault.sqlite"
    placement = {"MEMTROVE_VAULT": str(default), "MEMTROVE_CONFIG_DIR": str(tmp_path / "conf")}
    assert json.loads((home / ".claude.json").read_text())["mcpServers"]["memtrove"] == {
        "type": "stdio",
        "command": EXECUTABLE,
        "args": ["mcp"],
        "env": placement,
    }
    run("setup", "hooks")
    assert our_hooks(settings(home), placement) == OURS

    monkeypatch.setenv("MEMTROVE_VAULT", str(tmp_path / "env.sqlite"))
    run("setup", "hooks")
    chosen = placement | {"MEMTROVE_VAULT": str(tmp_path / "env.sqlite")}
    assert our_hooks(settings(home), chosen) == OURS


def test_default_paths_given_explicitly_add_nothing(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMTROVE_CONFIG_DIR", str(home / ".config" / "memtrove"))
    out = run("--vault", str(home / ".cache" / "memtrove" / "vault.sqlite"), "setup", "hooks")
    assert "will open" not in out and our_hooks(settings(home)) == OURS


def test_the_mcp_entry_follows_the_vault_and_keeps_other_variables(
    home: Path, tmp_path: Path
) -> None:
    path = home / ".claude.json"
    server = {"command": "/old/memtrove", "args": [], "env": {"X": "1"}, "timeout": 9}
    path.write_text(json.dumps({"mcpServers": {"memtrove": server}}))
    vault = tmp_path / "a b" / "v.sqlite"
    out = run("--vault", str(vault), "setup", "mcp", "--no-prime")
    config = str(home / ".config" / "memtrove")
    assert out.splitlines()[1] == f"the MCP server will open vault {vault} (config {config})"
    entry = json.loads(path.read_text())["mcpServers"]["memtrove"]
    assert list(entry) == ["type", "command", "args", "env", "timeout"]
    assert entry["env"] == {"X": "1", "MEMTROVE_VAULT": str(vault), "MEMTROVE_CONFIG_DIR": config}

    other = tmp_path / "other.sqlite"
    run("--vault", str(other), "setup", "mcp", "--no-prime")
    entry = json.loads(path.read_text())["mcpServers"]["memtrove"]
    assert entry["env"]["MEMTROVE_VAULT"] == str(other) and entry["timeout"] == 9
    run("setup", "mcp", "--no-prime")  # the default vault: memtrove's variables go
    entry = json.loads(path.read_text())["mcpServers"]["memtrove"]
    assert entry["env"] == {"X": "1"}

    run("--vault", str(other), "setup", "mcp", "--no-prime")
    assert run("setup", "mcp", "--remove").startswith(f"removed MCP server memtrove from {path}")
    assert json.loads(path.read_text()) == {"mcpServers": {}}


def test_an_env_left_empty_is_dropped(home: Path, tmp_path: Path) -> None:
    run("--vault", str(tmp_path / "v.sqlite"), "setup", "mcp", "--no-prime")
    run("setup", "mcp", "--no-prime")
    assert json.loads((home / ".claude.json").read_text())["mcpServers"]["memtrove"] == {
        "type": "stdio",
        "command": EXECUTABLE,
        "args": ["mcp"],
    }


def test_the_handshake_is_prepared_for_the_chosen_vault(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memtrove.mcp import prime

    seen: list[dict[str, str]] = []

    def fake_prime(versions: Any, env: Any) -> int:
        seen.append(dict(env))
        return len(versions)

    monkeypatch.setattr(prime, "prime_answers", fake_prime)
    monkeypatch.setenv("MEMTROVE_CONFIG_DIR", str(tmp_path / "conf"))
    run("--vault", str(tmp_path / "v.sqlite"), "setup", "mcp")
    (env,) = seen
    assert env["MEMTROVE_VAULT"] == str(tmp_path / "v.sqlite")
    assert env["MEMTROVE_CONFIG_DIR"] == str(tmp_path / "conf")
    assert env["HOME"] == str(home)


@pytest.mark.parametrize(
    "command",
    [
        "/usr/bin/memtrove hook context-surfacing",
        "MEMTROVE_VAULT='/a b/v.sqlite' MEMTROVE_CONFIG_DIR=/c '/x y/memtrove' hook session-start",
        "MEMTROVE_VAULT='/it'\"'\"'s/v' /venv/bin/memtrove buffer-batch",
        '"C:\\Program Files\\memtrove\\memtrove.exe" hook context-surfacing',
    ],
)
def test_our_commands_are_recognised_whatever_they_name(home: Path, command: str) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    hook = {"type": "command", "command": command}
    path.write_text(json.dumps({"hooks": {"Stop": [{"matcher": "", "hooks": [hook]}]}}))
    assert run("setup", "hooks", "--remove").startswith("removed 1 memtrove hooks")
    assert settings(home) == {}


def test_port_needs_http() -> None:
    result = CliRunner().invoke(app, ["mcp", "--port", "9000"])
    assert result.exit_code == 2 and "--port needs --http" in result.stderr


def test_the_executable_is_this_environments_memtrove() -> None:
    executable = claude_settings.memtrove_executable()
    assert Path(executable).name.startswith("memtrove") and Path(executable).is_file()
