"""Editing Claude Code's settings files for ``memtrove setup hooks|mcp``.

``~/.claude/settings.json`` gets memtrove's hooks (identified by a command containing
``memtrove hook`` or ``memtrove buffer-batch``), ``~/.claude.json`` the MCP server
``mcpServers.memtrove`` (``"type": "stdio"``, as ``claude mcp add`` writes it). Every other
entry is kept as it is.

A vault or config folder other than the default travels with the entries, so hooks and the
MCP server open what setup was run for: the MCP entry gets an ``env`` mapping
(``MEMTROVE_VAULT``, ``MEMTROVE_CONFIG_DIR``: absolute, resolved paths), and each hook command
the same two variables as a shell prefix (``MEMTROVE_VAULT='/a b/v.sqlite' ... memtrove hook
NAME``). Hook entries have no ``env`` field, and their command string is run by a shell; a
prefix rather than ``--vault`` keeps ``memtrove hook NAME`` on its fast path (no CLI import)
and also carries the config folder, which has no option. Re-running setup replaces the
entries in place, whatever vault they named.

A file is only rewritten when something changes: first copied to ``<name>.bak-<UTC
timestamp>``, then replaced atomically (a temporary file in the same folder, renamed over it;
a symbolic link is followed, so dotfile links survive). A file that is not a JSON object is
refused with a one-line :class:`~memtrove.ConfigError` and left untouched.

Hook timeouts use Claude Code's native ``timeout`` field (seconds), never a shell ``timeout``.
"""

from __future__ import annotations

import copy
import json
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memtrove.errors import ConfigError
from memtrove.files import write_atomic
from memtrove.locations import is_server_url, shown_location

__all__ = [
    "HOOKS",
    "PLACEMENT_VARIABLES",
    "SettingsChange",
    "claude_json_path",
    "hook_settings",
    "hooks_installed",
    "install_hooks",
    "install_mcp",
    "memtrove_executable",
    "placement_env",
    "remove_hooks",
    "remove_mcp",
    "settings_path",
]

# (event, ((hook name, timeout seconds), ...)) for the hooks memtrove has; "buffer-batch"
# is its own command (``memtrove buffer-batch``), every other name runs ``memtrove hook NAME``.
HOOKS: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = (
    ("UserPromptSubmit", (("context-surfacing", 8),)),
    (
        "SessionStart",
        (("postcompact-inject", 5), ("curator-nudge", 5), ("session-start", 5)),
    ),
    ("PreCompact", (("precompact-extract", 5),)),
    ("PostToolBatch", (("buffer-batch", 5),)),
    (
        "Stop",
        (("decision-extractor", 30), ("handoff-generator", 30), ("feedback-loop", 30)),
    ),
    ("SessionEnd", (("handoff-generator", 30),)),  # the last word, should a Stop be missed
)
COMMANDS = frozenset({"buffer-batch"})
SERVER_NAME = "memtrove"
# The program name ends ``memtrove`` (or ``memtrove.exe``), maybe closed by a quote, then the
# subcommand; whatever comes before it (an env prefix naming any vault) does not matter.
_OURS = re.compile(r"memtrove(?:\.exe)?['\"]?\s+(?:hook|buffer-batch)\b")
# The environment that says which vault and config a memtrove process opens.
PLACEMENT_VARIABLES = ("MEMTROVE_VAULT", "MEMTROVE_CONFIG_DIR")


@dataclass(frozen=True)
class SettingsChange:
    """What a setup step did to one file; ``backup`` is None when nothing was rewritten."""

    path: Path
    changed: bool
    backup: Path | None
    summary: str


def settings_path(home: Path) -> Path:
    return home / ".claude" / "settings.json"


def claude_json_path(home: Path) -> Path:
    return home / ".claude.json"


def memtrove_executable() -> str:
    """The ``memtrove`` command beside this Python (a venv's bin), else on PATH, else bare."""
    folder = Path(sys.executable).parent
    for name in ("memtrove", "memtrove.exe"):
        if (folder / name).is_file():
            return str(folder / name)
    return shutil.which("memtrove") or "memtrove"


def placement_env(vault_path: Path | str, config_dir: Path) -> dict[str, str]:
    """``MEMTROVE_VAULT`` and ``MEMTROVE_CONFIG_DIR`` for this vault and config folder, as
    absolute, resolved paths (a hook or MCP server starts in any working directory); a
    server vault's URL without its password (these values are written into files)."""
    config = str(Path(config_dir).expanduser().resolve())
    if is_server_url(vault_path):
        vault = shown_location(vault_path)
    else:
        vault = str(Path(vault_path).expanduser().resolve())
    return dict(zip(PLACEMENT_VARIABLES, (vault, config), strict=True))


def hook_settings(
    executable: str, env: dict[str, str] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """The ``hooks`` entries memtrove installs, per event; ``env`` (see :func:`placement_env`)
    becomes a shell prefix of every command, each value quoted."""
    prefix = "".join(f"{name}={shlex.quote(value)} " for name, value in (env or {}).items())
    command = prefix + shlex.quote(executable)
    return {
        event: [
            {
                "matcher": "",
                "hooks": [
                    {
                        "type": "command",
                        "command": f"{command} {name}"
                        if name in COMMANDS
                        else f"{command} hook {name}",
                        "timeout": timeout,
                    }
                    for name, timeout in hooks
                ],
            }
        ]
        for event, hooks in HOOKS
    }


def install_hooks(home: Path, executable: str, env: dict[str, str] | None = None) -> SettingsChange:
    """Replace memtrove's hooks in ``~/.claude/settings.json`` with the current set, whose
    commands carry ``env`` (nothing extra when it is empty: the default vault)."""
    path = settings_path(home)
    data = _load(path)
    updated = copy.deepcopy(data)
    hooks = _hooks_of(updated, path)
    _strip_ours(hooks)
    for event, groups in hook_settings(executable, env).items():
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise ConfigError(f'{path}: "hooks.{event}" is not a list; nothing was changed')
        entries.extend(groups)
    count = sum(len(names) for _, names in HOOKS)
    return _save(
        path,
        data,
        updated,
        changed=f"installed {count} memtrove hooks in {path}",
        unchanged=f"memtrove hooks already installed in {path}",
    )


def remove_hooks(home: Path) -> SettingsChange:
    """Delete every hook whose command runs ``memtrove hook`` or ``memtrove buffer-batch``
    (whatever vault its prefix names); nothing else."""
    path = settings_path(home)
    if not path.exists():
        return SettingsChange(path, False, None, f"no memtrove hooks: {path} does not exist")
    data = _load(path)
    updated = copy.deepcopy(data)
    removed = _strip_ours(_hooks_of(updated, path)) if "hooks" in updated else 0
    if removed and updated["hooks"] == {}:
        del updated["hooks"]  # only memtrove's hooks were there
    return _save(
        path,
        data,
        updated,
        changed=f"removed {removed} memtrove hooks from {path}",
        unchanged=f"no memtrove hooks in {path}",
    )


def install_mcp(home: Path, executable: str, env: dict[str, str] | None = None) -> SettingsChange:
    """Set ``mcpServers.memtrove`` in ``~/.claude.json`` to a stdio server whose ``env``
    holds ``env`` (see :func:`placement_env`). Other keys of that entry, and other variables
    of its ``env``, are kept; memtrove's own variables are replaced (removed for the default
    vault), and an ``env`` left empty is dropped."""
    path = claude_json_path(home)
    data = _load(path)
    updated = copy.deepcopy(data)
    servers = updated.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f'{path}: "mcpServers" is not an object; nothing was changed')
    entry = servers.get(SERVER_NAME)
    previous = entry if isinstance(entry, dict) else {}
    old_env = previous.get("env")
    merged_env = {
        name: value
        for name, value in (old_env.items() if isinstance(old_env, dict) else ())
        if name not in PLACEMENT_VARIABLES
    } | dict(env or {})
    server: dict[str, Any] = {"type": "stdio", "command": executable, "args": ["mcp"]}
    if merged_env:
        server["env"] = merged_env
    servers[SERVER_NAME] = server | {
        key: value for key, value in previous.items() if key not in server and key != "env"
    }
    return _save(
        path,
        data,
        updated,
        changed=f"added MCP server memtrove to {path}",
        unchanged=f"MCP server memtrove already in {path}",
        new_mode=0o600,
    )


def remove_mcp(home: Path) -> SettingsChange:
    """Delete ``mcpServers.memtrove`` from ``~/.claude.json``."""
    path = claude_json_path(home)
    if not path.exists():
        return SettingsChange(path, False, None, f"no MCP server memtrove: {path} does not exist")
    data = _load(path)
    updated = copy.deepcopy(data)
    servers = updated.get("mcpServers")
    if isinstance(servers, dict):
        servers.pop(SERVER_NAME, None)
    return _save(
        path,
        data,
        updated,
        changed=f"removed MCP server memtrove from {path}",
        unchanged=f"no MCP server memtrove in {path}",
    )


# -- helpers --------------------------------------------------------------------------------------


def _load(path: Path) -> dict[str, Any]:
    """The file's JSON object; ``{}`` when it is missing or blank."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read {path}: {error}; nothing was changed") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(
            f"{path} is not valid JSON (line {error.lineno} column {error.colno}: {error.msg}); "
            "fix it and run again, nothing was changed"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} is not a JSON object; nothing was changed")
    return data


def _hooks_of(data: dict[str, Any], path: Path) -> dict[str, Any]:
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError(f'{path}: "hooks" is not an object; nothing was changed')
    return hooks


def _strip_ours(hooks: dict[str, Any]) -> int:
    """Remove memtrove's hook commands; drop the groups and events only memtrove filled."""
    removed = 0
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            commands = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(commands, list):
                kept_groups.append(group)
                continue
            kept = [c for c in commands if not _is_ours(c)]
            removed += len(commands) - len(kept)
            if kept or not commands:
                kept_groups.append({**group, "hooks": kept})
        if groups and not kept_groups:
            del hooks[event]
        else:
            hooks[event] = kept_groups
    return removed


def hooks_installed(home: Path) -> bool:
    """Whether ``~/.claude/settings.json`` runs any memtrove hook (False when it cannot be
    read: nothing to advise about)."""
    try:
        hooks = _load(settings_path(home)).get("hooks")
    except ConfigError:
        return False
    groups = [group for entries in (hooks or {}).values() if isinstance(entries, list)
              for group in entries] if isinstance(hooks, dict) else []  # fmt: skip
    return any(
        _is_ours(hook)
        for group in groups
        if isinstance(group, dict) and isinstance(group.get("hooks"), list)
        for hook in group["hooks"]
    )


def _is_ours(hook: Any) -> bool:
    command = hook.get("command") if isinstance(hook, dict) else None
    return isinstance(command, str) and _OURS.search(command) is not None


def _save(
    path: Path,
    original: dict[str, Any],
    updated: dict[str, Any],
    *,
    changed: str,
    unchanged: str,
    new_mode: int = 0o644,
) -> SettingsChange:
    if updated == original and (path.exists() or not updated):
        return SettingsChange(path, False, None, unchanged)
    target = path.resolve() if path.is_symlink() else path
    target.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    mode = new_mode
    if target.exists():
        mode = target.stat().st_mode & 0o7777
        backup = _backup_name(target)
        shutil.copy2(target, backup)
    text = json.dumps(updated, indent=2, ensure_ascii=False) + "\n"
    write_atomic(target, text, prefix=f".{target.name}.", sync=True, mode=mode)
    summary = changed + (f" (backup: {backup})" if backup else "")
    return SettingsChange(path, True, backup, summary)


def _backup_name(path: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    candidate = path.with_name(f"{path.name}.bak-{stamp}")
    number = 2
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.bak-{stamp}-{number}")
        number += 1
    return candidate
