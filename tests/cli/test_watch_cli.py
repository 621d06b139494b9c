"""``memtrove install-service``: the systemd user unit and the launchd agent it writes for
``memtrove watch``, printed, written under a tmp HOME / XDG_CONFIG_HOME, and removed; and the
usage errors of ``memtrove watch`` (the watcher itself: tests/index, tests/e2e)."""

from __future__ import annotations

import plistlib
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memtrove.cli import app


def test_the_systemd_unit_is_printed_written_and_removed(
    cli: CliRunner, isolated_environment: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MEMTROVE_HEAVY_LANE", "true")
    monkeypatch.setenv("MEMTROVE_LLM_API_KEY", "sk-never-in-a-unit")
    unit = isolated_environment / ".config" / "systemd" / "user" / "memtrove-watch.service"
    printed = cli.invoke(app, ["install-service", "--print", "--kind", "systemd"])
    assert printed.exit_code == 0, printed.output
    assert not unit.exists()
    text = printed.output
    assert f'ExecStart="{sys.executable}" -m memtrove watch' in text
    assert f'Environment="MEMTROVE_VAULT={tmp_path / "cli" / "vault.sqlite"}"' in text
    assert f'Environment="MEMTROVE_CONFIG_DIR={tmp_path / "cli" / "config"}"' in text
    assert 'Environment="MEMTROVE_HEAVY_LANE=true"' in text
    assert "sk-never" not in text and "WantedBy=default.target" in text
    wrote = cli.invoke(app, ["install-service", "--kind", "systemd"])
    assert wrote.exit_code == 0 and unit.read_text() == text
    assert f"wrote {unit}" in wrote.output and "systemctl --user daemon-reload" in wrote.output
    removed = cli.invoke(app, ["install-service", "--remove", "--kind", "systemd"])
    assert removed.exit_code == 0 and f"removed {unit}" in removed.output and not unit.exists()
    again = cli.invoke(app, ["install-service", "--remove", "--kind", "systemd"])
    assert again.exit_code == 0 and "no service installed" in again.output


def test_xdg_config_home_is_honoured(
    cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert cli.invoke(app, ["install-service", "--kind", "systemd"]).exit_code == 0
    assert (tmp_path / "xdg" / "systemd" / "user" / "memtrove-watch.service").is_file()


def test_the_launchd_agent(cli: CliRunner, isolated_environment: Path) -> None:
    printed = cli.invoke(app, ["install-service", "--print", "--kind", "launchd"])
    assert printed.exit_code == 0, printed.output
    agent = plistlib.loads(printed.output.encode())
    assert agent["Label"] == "dev.memtrove.watch" and agent["RunAtLoad"] is True
    assert agent["ProgramArguments"] == [sys.executable, "-m", "memtrove", "watch"]
    assert set(agent["EnvironmentVariables"]) == {"MEMTROVE_VAULT", "MEMTROVE_CONFIG_DIR"}
    wrote = cli.invoke(app, ["install-service", "--kind", "launchd"])
    plist = isolated_environment / "Library" / "LaunchAgents" / "dev.memtrove.watch.plist"
    assert wrote.exit_code == 0 and plistlib.loads(plist.read_bytes()) == agent


@pytest.mark.parametrize(
    "arguments", [["--kind", "upstart"], ["--print", "--remove"]], ids=["kind", "contradiction"]
)
def test_bad_options_are_usage_errors(cli: CliRunner, arguments: list[str]) -> None:
    result = cli.invoke(app, ["install-service", *arguments])
    assert result.exit_code == 2


@pytest.mark.parametrize(
    "arguments",
    [["--debounce-ms", "5"], ["--embed-interval", "-1"], ["--checkpoint-interval", "0"]],
)
def test_bad_watch_options_are_usage_errors(cli: CliRunner, arguments: list[str]) -> None:
    result = cli.invoke(app, ["watch", *arguments])
    assert result.exit_code == 2
    assert result.output.startswith(f"memtrove: error: {arguments[0]}")
