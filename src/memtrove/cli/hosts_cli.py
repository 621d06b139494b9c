"""Hosts other than Claude Code's hooks: ``memtrove surface`` (see
:mod:`memtrove.cli.surface_cli`), ``memtrove setup curator`` and ``memtrove setup openclaw``.

``setup curator`` copies the curator agent definition the package ships
(``memtrove/agents/curator.md``) to ``~/.claude/agents/memtrove-curator.md``.

``setup openclaw`` installs memtrove's OpenClaw memory plugin (``memtrove/agents/openclaw``:
manifest, package.json, index.js) into ``<OPENCLAW_STATE_DIR or ~/.openclaw>/extensions/
memtrove`` and enables it in ``openclaw.json``: ``plugins.entries.memtrove`` (enabled, with
the memtrove command to run), ``plugins.slots.memory = "memtrove"``, ``memtrove`` added to a
``plugins.allow`` list when there is one, and a stale ``plugins.slots.contextEngine =
"memtrove"`` moved back to ``"legacy"``. The config is backed up before it changes; a config
that is not plain JSON (OpenClaw also reads JSON5) is never rewritten: the command says what
to add by hand. ``--remove`` undoes both.

Files memtrove installs carry :data:`MARKER` (the plugin folder a marker file), so memtrove
updates and removes only its own; a file of the same name it did not write is left alone
(curator: moved aside to ``*.user-backup``, as ``setup skills`` does).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

import typer

from memtrove.cli import surface_cli
from memtrove.cli.claude_settings import memtrove_executable, placement_env
from memtrove.cli.common import console, fail, state
from memtrove.cli.skills_cli import free_name
from memtrove.config import Settings
from memtrove.files import write_atomic

__all__ = [
    "CURATOR_FILE",
    "MARKER",
    "PLUGIN_FILES",
    "install_curator",
    "openclaw_state_dir",
    "register",
    "remove_curator",
]

MARKER = "<!-- memtrove: installed by `memtrove setup curator`"
CURATOR_FILE = "memtrove-curator.md"
BACKUP_SUFFIX = ".user-backup"
PLUGIN_ID = "memtrove"
PLUGIN_FILES = ("openclaw.plugin.json", "package.json", "index.js")
PLUGIN_MARKER = ".installed-by-memtrove"
CONFIG_BACKUP_SUFFIX = ".memtrove-backup"


def register(app: typer.Typer) -> None:
    from memtrove.cli.agents import setup_app

    surface_cli.register(app)
    setup_app.command("curator")(setup_curator)
    setup_app.command("openclaw")(setup_openclaw)


def _shipped(*parts: str) -> str:
    return resources.files("memtrove").joinpath("agents", *parts).read_text("utf-8")


# ---- setup curator --------------------------------------------------------------------


def install_curator(home: Path) -> str:
    """Write the curator agent to ``home/.claude/agents``; one line saying what happened."""
    text = _shipped("curator.md")
    target = home / ".claude" / "agents" / CURATOR_FILE
    if target.is_dir() and not target.is_symlink():
        raise OSError(f"{target} is a folder, not a file")
    note = ""
    if target.is_symlink() or target.exists():
        if MARKER.encode() not in target.read_bytes():
            backup = free_name(target.with_name(CURATOR_FILE + BACKUP_SUFFIX))
            target.rename(backup)
            note = f"; your own file of that name was moved to {backup}"
        elif target.read_bytes() == text.encode("utf-8"):
            return f"unchanged {target}"
    action = "replaced" if note else ("updated" if target.exists() else "added")
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, text, prefix=".agent-", mode=0o644)
    return f"{action} {target}{note}"


def remove_curator(home: Path) -> str:
    """Remove the curator agent memtrove installed (only a file carrying the marker), and
    put back a user's file that the install moved aside."""
    target = home / ".claude" / "agents" / CURATOR_FILE
    if not (target.is_symlink() or target.exists()):
        return f"absent {target}"
    if target.is_dir() or MARKER.encode() not in target.read_bytes():
        return f"kept {target}: not installed by memtrove, left as it is"
    target.unlink()
    backup = target.with_name(CURATOR_FILE + BACKUP_SUFFIX)
    if backup.is_file() and not backup.is_symlink():
        backup.rename(target)
        return f"restored {target}: your earlier file of that name is back"
    return f"removed {target}"


def setup_curator(
    remove: bool = typer.Option(False, "--remove", help="Remove the curator agent instead."),
) -> None:
    """Install the memtrove-curator agent (lifecycle triage, retrieval probes, graph and
    duplicate upkeep) into ~/.claude/agents. Ask Claude Code to "run the curator"."""
    try:
        line = remove_curator(Path.home()) if remove else install_curator(Path.home())
    except OSError as error:
        where = f": {error.filename}" if error.filename else ""
        raise fail(f"cannot change the agents folder{where}: {error.strerror or error}") from None
    console.print(line, markup=False)


# ---- setup openclaw -------------------------------------------------------------------


def openclaw_state_dir(env: dict[str, str] | None = None) -> Path:
    """``$OPENCLAW_STATE_DIR``, else ``~/.openclaw``."""
    given = (os.environ if env is None else env).get("OPENCLAW_STATE_DIR", "").strip()
    return Path(given).expanduser() if given else Path.home() / ".openclaw"


def _read_config(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (ValueError, UnicodeDecodeError):
        raise fail(
            f"{path} is not plain JSON (comments or JSON5?): it was left as it is; add "
            f'"plugins": {{"entries": {{"memtrove": {{"enabled": true}}}}, '
            f'"slots": {{"memory": "memtrove"}}}} by hand'
        ) from None
    if not isinstance(data, dict):
        raise fail(f"{path} does not hold a JSON object: it was left as it is")
    return data


def _section(data: dict[str, Any], name: str, path: Path) -> dict[str, Any]:
    value = data.setdefault(name, {})
    if not isinstance(value, dict):
        raise fail(f"{path}: {name} is not an object: the file was left as it is")
    return value


def _configured(data: dict[str, Any], path: Path, entry: dict[str, Any] | None) -> None:
    """Enable (``entry``) or disable (None) the plugin in OpenClaw's config, in place."""
    if entry is None and not isinstance(data.get("plugins"), dict):
        return  # nothing of memtrove's to take out; add nothing either
    plugins = _section(data, "plugins", path)
    entries = _section(plugins, "entries", path)
    slots = _section(plugins, "slots", path)
    allow = plugins.get("allow")
    if entry is not None:
        entries[PLUGIN_ID] = entry
        slots["memory"] = PLUGIN_ID
        if isinstance(allow, list) and PLUGIN_ID not in allow:
            allow.append(PLUGIN_ID)
    else:
        entries.pop(PLUGIN_ID, None)
        if slots.get("memory") == PLUGIN_ID:
            del slots["memory"]
        if isinstance(allow, list) and PLUGIN_ID in allow:
            allow.remove(PLUGIN_ID)
    if slots.get("contextEngine") == PLUGIN_ID:  # a plugin slot memtrove never fills
        slots["contextEngine"] = "legacy"


def _write_config(path: Path, data: dict[str, Any]) -> str:
    """Write ``data`` over ``path`` (after a backup) when it changed; what happened."""
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if path.exists():
        old = path.read_text(encoding="utf-8")
        if json.loads(old or "{}") == data:
            return f"unchanged {path}"
        backup = free_name(path.with_name(path.name + CONFIG_BACKUP_SUFFIX))
        shutil.copy2(path, backup)
        mode = path.stat().st_mode & 0o777
        write_atomic(path, text, prefix=".openclaw-", mode=mode)
        return f"updated {path} (backup: {backup})"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text, prefix=".openclaw-", mode=0o600)
    return f"added {path}"


def _install_plugin(folder: Path) -> str:
    if folder.exists() and not (folder / PLUGIN_MARKER).is_file():
        raise fail(f"{folder} exists and was not installed by memtrove: it was left as it is")
    folder.mkdir(parents=True, exist_ok=True)
    changed = False
    for name in PLUGIN_FILES:
        text = _shipped("openclaw", name)
        target = folder / name
        if target.is_file() and target.read_text(encoding="utf-8") == text:
            continue
        write_atomic(target, text, prefix=".plugin-", mode=0o644)
        changed = True
    (folder / PLUGIN_MARKER).write_text("memtrove setup openclaw\n", encoding="utf-8")
    return f"{'installed' if changed else 'unchanged'} the plugin in {folder}"


def _remove_plugin(folder: Path) -> str:
    if not folder.exists():
        return f"absent {folder}"
    if not (folder / PLUGIN_MARKER).is_file():
        return f"kept {folder}: not installed by memtrove, left as it is"
    for name in (*PLUGIN_FILES, PLUGIN_MARKER):
        with contextlib.suppress(FileNotFoundError):
            (folder / name).unlink()
    with contextlib.suppress(OSError):  # something else lives there: leave the folder
        folder.rmdir()
    return f"removed the plugin from {folder}"


def _plugin_entry(ctx: typer.Context) -> dict[str, Any]:
    """The ``plugins.entries.memtrove`` value: the command to run, and the vault and config
    to open when they are not the defaults."""
    settings = state(ctx).settings
    config: dict[str, Any] = {"memtroveBin": memtrove_executable(), "enableTools": True}
    defaults = Settings.from_env(
        {k: v for k, v in os.environ.items() if k not in ("MEMTROVE_VAULT", "MEMTROVE_CONFIG_DIR")}
    )
    chosen = placement_env(settings.vault_path, settings.config_dir)
    if chosen != placement_env(defaults.vault_path, defaults.config_dir):
        config["env"] = chosen
    return {"enabled": True, "config": config}


def setup_openclaw(
    ctx: typer.Context,
    remove: bool = typer.Option(False, "--remove", help="Remove the plugin instead."),
) -> None:
    """Install memtrove as OpenClaw's memory plugin: the plugin in
    <OPENCLAW_STATE_DIR or ~/.openclaw>/extensions/memtrove and its entry in openclaw.json
    (backed up first). Its tools call `memtrove serve` (port 7438)."""
    state_dir = openclaw_state_dir()
    config_path = state_dir / "openclaw.json"
    folder = state_dir / "extensions" / PLUGIN_ID
    data = _read_config(config_path)  # an unreadable config stops everything, before writing
    _configured(data, config_path, None if remove else _plugin_entry(ctx))
    try:
        if remove:
            lines = [_remove_plugin(folder)]
            if config_path.exists():
                lines.append(_write_config(config_path, data))
        else:
            lines = [_install_plugin(folder), _write_config(config_path, data)]
    except OSError as error:
        where = f": {error.filename}" if error.filename else ""
        raise fail(f"cannot change OpenClaw's files{where}: {error.strerror or error}") from None
    for line in lines:
        console.print(line, markup=False)
    if not remove:
        console.print(
            "Run `memtrove serve` (or set manageServe in the plugin's config) for the "
            "memtrove_* tools; restart the OpenClaw gateway to load the plugin.",
            markup=False,
        )
