"""Where things live: the vault, its config folder and the cache folder, from the environment.

Standard library only, so that the lightest entry points (a hook talking to a running
server, the MCP front) can find their files without loading anything else.

Environment:
    MEMTROVE_VAULT       vault file (default ``$XDG_CACHE_HOME/memtrove/vault.sqlite``)
    MEMTROVE_CONFIG_DIR  config folder (default ``$XDG_CONFIG_HOME/memtrove``)
    XDG_CACHE_HOME       the cache folder is ``$XDG_CACHE_HOME/memtrove``
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CONFIG_FILE_NAME", "Settings", "cache_dir"]

CONFIG_FILE_NAME = "config.yaml"


def _xdg(variable: str, fallback: str, env: Mapping[str, str]) -> Path:
    value = env.get(variable, "").strip()
    if value and os.path.isabs(value):
        return Path(value)
    return Path(env.get("HOME") or Path.home()) / fallback


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/memtrove`` (``~/.cache/memtrove`` when unset or relative): hook
    logs, the curator report, the MCP front's answers and the running server's address."""
    return _xdg("XDG_CACHE_HOME", ".cache", os.environ if env is None else env) / "memtrove"


@dataclass(frozen=True)
class Settings:
    """Resolved paths for one process."""

    vault_path: Path
    config_dir: Path

    @property
    def config_file(self) -> Path:
        return self.config_dir / CONFIG_FILE_NAME

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str] | None = None,
        *,
        vault: str | Path | None = None,
        config_dir: str | Path | None = None,
    ) -> Settings:
        env = os.environ if env is None else env
        vault_value = vault or env.get("MEMTROVE_VAULT", "").strip()
        if vault_value:
            vault_path = Path(vault_value).expanduser()
        else:
            vault_path = _xdg("XDG_CACHE_HOME", ".cache", env) / "memtrove" / "vault.sqlite"
        config_value = config_dir or env.get("MEMTROVE_CONFIG_DIR", "").strip()
        if config_value:
            config_path = Path(config_value).expanduser()
        else:
            config_path = _xdg("XDG_CONFIG_HOME", ".config", env) / "memtrove"
        return cls(vault_path=vault_path.absolute(), config_dir=config_path.absolute())
