"""``doctor``'s view of Claude Code: are memtrove's hooks and MCP server registered, and do
they open this vault?

Reads what ``memtrove setup hooks|mcp`` writes (:mod:`memtrove.cli.claude_settings`):
``~/.claude/settings.json`` (hooks) and ``~/.claude.json`` (``mcpServers.memtrove``), under
the home folder the caller names (``Path.home()``: ``HOME``). Nothing is changed. Each
finding is a :class:`~memtrove.results.Check`: ``ok`` when registered for this vault (or when
Claude Code is not set up in that home at all), ``warn`` when missing, partial, pointing at
another vault or at a program that is not there (memtrove works without Claude Code, so none
of this fails the doctor).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

from memtrove.cli.claude_settings import (
    HOOKS,
    PLACEMENT_VARIABLES,
    SERVER_NAME,
    claude_json_path,
    settings_path,
)
from memtrove.results import Check

__all__ = ["claude_code_checks"]

_HOOK_NAME = re.compile(r"memtrove(?:\.exe)?['\"]?\s+(?:hook\s+([A-Za-z0-9_-]+)|(buffer-batch))\b")
_VAULT = PLACEMENT_VARIABLES[0]


def _read(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(the file's JSON object or None when it is missing, why it cannot be used)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as error:
        return None, f"cannot read {path}: {error}"
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as error:
        return None, f"{path} is not valid JSON (line {error.lineno}: {error.msg})"
    if not isinstance(data, dict):
        return None, f"{path} is not a JSON object"
    return data, None


def _commands(settings: dict[str, Any]) -> list[tuple[str, str]]:
    """(event, command) of every hook command in a settings object."""
    hooks = settings.get("hooks")
    found: list[tuple[str, str]] = []
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            entries = group.get("hooks") if isinstance(group, dict) else None
            for entry in entries if isinstance(entries, list) else ():
                command = entry.get("command") if isinstance(entry, dict) else None
                if isinstance(command, str):
                    found.append((str(event), command))
    return found


def _prefixed_vault(command: str) -> str | None:
    """The ``MEMTROVE_VAULT=...`` prefix of a hook command, if it has one."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    for word in words:
        if word.startswith(f"{_VAULT}="):
            return word.split("=", 1)[1]
        if "=" not in word:
            return None
    return None


def _hooks_check(home: Path, vault: str, default: str) -> Check:
    path = settings_path(home)
    settings, problem = _read(path)
    if problem:
        return Check("claude hooks", "warn", problem, "fix the file, then `memtrove setup hooks`")
    expected = {(event, name) for event, hooks in HOOKS for name, _ in hooks}
    installed: dict[tuple[str, str], str] = {}
    for event, command in _commands(settings or {}):
        match = _HOOK_NAME.search(command)
        if match:
            installed[(event, match.group(1) or match.group(2))] = command
    if not installed:
        where = "does not exist" if settings is None else "has no memtrove hooks"
        return Check(
            "claude hooks",
            "warn",
            f"{path} {where}: Claude Code gets no context from this vault",
            "`memtrove setup hooks`",
        )
    missing = sorted(expected - set(installed))
    if missing:
        names = ", ".join(f"{name} ({event})" for event, name in missing)
        return Check(
            "claude hooks",
            "warn",
            f"{len(installed)} memtrove hooks in {path}; missing {names}",
            "`memtrove setup hooks` installs the current set",
        )
    opened = {_prefixed_vault(command) or default for command in installed.values()}
    if opened != {vault}:
        other = sorted(opened - {vault})[0]
        return Check(
            "claude hooks",
            "warn",
            f"the hooks in {path} open {other}, not this vault",
            "run `memtrove setup hooks` with this vault's --vault to point them here",
        )
    return Check("claude hooks", "ok", f"{len(installed)} memtrove hooks registered in {path}")


def _program_exists(command: str) -> bool:
    return (
        Path(command).is_file()
        if ("/" in command or "\\" in command)
        else bool(shutil.which(command))
    )


def _mcp_check(home: Path, vault: str, default: str) -> Check:
    path = claude_json_path(home)
    data, problem = _read(path)
    if problem:
        return Check("claude mcp", "warn", problem, "fix the file, then `memtrove setup mcp`")
    servers = (data or {}).get("mcpServers")
    entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    if not isinstance(entry, dict):
        return Check(
            "claude mcp",
            "warn",
            f"no mcpServers.{SERVER_NAME} in {path}: Claude Code cannot search this vault",
            "`memtrove setup mcp`",
        )
    command, args = entry.get("command"), entry.get("args")
    if not isinstance(command, str) or not _program_exists(command):
        return Check(
            "claude mcp",
            "warn",
            f"mcpServers.{SERVER_NAME} in {path} runs {command!r}, which is not there",
            "`memtrove setup mcp` writes this installation's command",
        )
    if args != ["mcp"]:
        return Check(
            "claude mcp",
            "warn",
            f"mcpServers.{SERVER_NAME} in {path} runs {command} with {args!r}, not ['mcp']",
            "`memtrove setup mcp`",
        )
    env = entry.get("env")
    registered = env.get(_VAULT) if isinstance(env, dict) else None
    if (registered or default) != vault:
        return Check(
            "claude mcp",
            "warn",
            f"mcpServers.{SERVER_NAME} in {path} opens {registered or default}, not this vault",
            "run `memtrove setup mcp` with this vault's --vault to point it here",
        )
    return Check("claude mcp", "ok", f"mcpServers.{SERVER_NAME} in {path} runs `{command} mcp`")


def claude_code_checks(home: Path, vault: str, default: str) -> list[Check]:
    """The hooks and MCP checks. ``vault`` is this vault and ``default`` the default one, as
    ``MEMTROVE_VAULT`` values (:func:`~memtrove.cli.claude_settings.placement_env`): an entry
    without the variable opens the default vault."""
    if not (home / ".claude").exists() and not claude_json_path(home).exists():
        absent = (
            f"Claude Code is not set up for {home} (no .claude, .claude.json): nothing to check"
        )
        return [Check("claude hooks", "ok", absent), Check("claude mcp", "ok", absent)]
    return [_hooks_check(home, vault, default), _mcp_check(home, vault, default)]
