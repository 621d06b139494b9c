"""``memtrove install-service [--print] [--remove] [--enable]``: run ``memtrove watch`` as a
user service: a systemd user unit (``$XDG_CONFIG_HOME/systemd/user/memtrove-watch.service``)
or, on macOS, a launchd agent (``~/Library/LaunchAgents/dev.memtrove.watch.plist``).

The service runs this interpreter's ``memtrove watch`` on this vault and config folder, with
the lane flags (``MEMTROVE_ENABLE_CONSOLIDATION``, ``MEMTROVE_HEAVY_LANE``) when they are set
now. Nothing else of the environment is copied (API keys do not belong in a unit file): add
model settings with ``systemctl --user edit memtrove-watch``. Without ``--enable`` nothing is
started; the commands to start it are printed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import typer

from memtrove.cli.common import console, fail, state
from memtrove.locations import has_password, shown_location

__all__ = ["LAUNCHD_LABEL", "SYSTEMD_UNIT", "register", "render_plist", "render_unit"]

SYSTEMD_UNIT = "memtrove-watch.service"
LAUNCHD_LABEL = "dev.memtrove.watch"
_PASSED_ON = ("MEMTROVE_ENABLE_CONSOLIDATION", "MEMTROVE_HEAVY_LANE")


def register(app: typer.Typer) -> None:
    app.command("install-service")(install_service)


def _environment(vault: Path | str, config_dir: Path) -> dict[str, str]:
    """What the unit sets: a server vault's URL without its password (the unit is a file)."""
    if has_password(vault):
        print(
            "memtrove: note: the unit names the vault URL without its password; give it to "
            "PostgreSQL in ~/.pgpass",
            file=sys.stderr,
        )
    values = {"MEMTROVE_VAULT": shown_location(vault), "MEMTROVE_CONFIG_DIR": str(config_dir)}
    for name in _PASSED_ON:
        if os.environ.get(name):
            values[name] = os.environ[name]
    return values


def _systemd_quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    return f'"{escaped}"'


def render_unit(python: str, environment: dict[str, str]) -> str:
    """The systemd user unit running ``python -m memtrove watch``."""
    lines = [
        "[Unit]",
        "Description=memtrove watch: keep the memtrove vault indexed as its folders change",
        "",
        "[Service]",
        "Type=simple",
        f"ExecStart={_systemd_quote(python)} -m memtrove watch",
        *(f"Environment={_systemd_quote(f'{k}={v}')}" for k, v in environment.items()),
        "Restart=on-failure",
        "RestartSec=5",
        "KillSignal=SIGTERM",
        "TimeoutStopSec=70",  # the watcher's drain plus both lanes'
        "",
        "[Install]",
        "WantedBy=default.target",
        "",
    ]
    return "\n".join(lines)


def render_plist(python: str, environment: dict[str, str], log_file: Path) -> str:
    """The launchd agent running ``python -m memtrove watch`` at login, kept alive."""
    import plistlib

    agent = {
        "Label": LAUNCHD_LABEL,
        "ProgramArguments": [python, "-m", "memtrove", "watch"],
        "EnvironmentVariables": environment,
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ExitTimeOut": 70,
        "StandardErrorPath": str(log_file),
        "StandardOutPath": str(log_file),
    }
    return plistlib.dumps(agent).decode("utf-8")


def _home() -> Path:
    return Path(os.environ.get("HOME") or Path.home())


def _unit_path(kind: str) -> Path:
    if kind == "launchd":
        return _home() / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
    configured = os.environ.get("XDG_CONFIG_HOME", "")
    base = Path(configured) if configured and Path(configured).is_absolute() else None
    return (base or _home() / ".config") / "systemd" / "user" / SYSTEMD_UNIT


def _run(command: list[str]) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise fail(f"{' '.join(command)} failed: {error}") from None
    if done.returncode != 0:
        detail = " ".join((done.stderr or done.stdout).split())[:200]
        raise fail(f"{' '.join(command)} failed: {detail}")


def install_service(
    ctx: typer.Context,
    print_only: bool = typer.Option(False, "--print", help="Print the unit; write nothing."),
    remove: bool = typer.Option(False, "--remove", help="Remove the unit (stop it with --enable)."),
    enable: bool = typer.Option(
        False, "--enable", help="Also (re)load and start it now (systemctl --user / launchctl)."
    ),
    kind: str = typer.Option(
        "launchd" if sys.platform == "darwin" else "systemd",
        "--kind",
        help="systemd (Linux) or launchd (macOS); the default follows this system.",
    ),
) -> None:
    """Run `memtrove watch` as a user service: writes a systemd user unit (a launchd agent on
    macOS) for this vault and config folder."""
    if kind not in ("systemd", "launchd"):
        raise fail("--kind must be systemd or launchd", 2)
    if print_only and remove:
        raise fail("--print and --remove contradict each other", 2)
    settings = state(ctx).settings
    path = _unit_path(kind)
    if remove:
        _remove(path, kind, enable)
        return
    environment = _environment(settings.vault_path, settings.config_dir)
    if kind == "systemd":
        text = render_unit(sys.executable, environment)
    else:
        text = render_plist(
            sys.executable, environment, _home() / "Library" / "Logs" / "memtrove-watch.log"
        )
    if print_only:
        sys.stdout.write(text)
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise fail(f"cannot write {path}: {error}") from None
    console.print(f"wrote {path}", markup=False)
    if kind == "systemd":
        commands = [
            ["systemctl", "--user", "daemon-reload"],
            ["systemctl", "--user", "enable", "--now", SYSTEMD_UNIT],
        ]
    else:
        commands = [["launchctl", "load", "-w", str(path)]]
    if enable:
        for command in commands:
            _run(command)
        console.print("started: memtrove watch runs as a user service", markup=False)
    else:
        console.print("start it with: " + " && ".join(" ".join(c) for c in commands), markup=False)


def _remove(path: Path, kind: str, stop: bool) -> None:
    if stop:
        if kind == "systemd":
            _run(["systemctl", "--user", "disable", "--now", SYSTEMD_UNIT])
        else:
            _run(["launchctl", "unload", "-w", str(path)])
    if not path.exists():
        console.print(f"no service installed at {path}", markup=False)
        return
    try:
        path.unlink()
    except OSError as error:
        raise fail(f"cannot remove {path}: {error}") from None
    console.print(f"removed {path}", markup=False)
