"""Where things live: the vault, its config folder and the cache folder, from the environment.

Plain functions over ``os`` only, so that the lightest entry points (a hook handing its
work to a running server, the MCP front) find their files without importing anything else;
:class:`memtrove.config.Settings` wraps them for everyone else.

A vault on a database server is named by its URL (:mod:`memtrove.locations`): it is kept as
given, never made a path, and what would sit beside a vault file sits in its folder under
the cache folder (:func:`sidecar_folder`).

Environment:
    MEMTROVE_VAULT       vault file or ``postgresql://`` URL (default
                         ``$XDG_CACHE_HOME/memtrove/vault.sqlite``)
    MEMTROVE_CONFIG_DIR  config folder (default ``$XDG_CONFIG_HOME/memtrove``)
    XDG_CACHE_HOME       the cache folder is ``$XDG_CACHE_HOME/memtrove``
    XDG_CONFIG_HOME      the default config folder is ``$XDG_CONFIG_HOME/memtrove``
"""

from __future__ import annotations

import os

from memtrove.locations import is_server_url, location_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "CONFIG_FILE_NAME",
    "QUEUE_FOLDER",
    "SIDECAR_FOLDER",
    "cache_location",
    "config_location",
    "queue_location",
    "sidecar_folder",
    "vault_location",
]

CONFIG_FILE_NAME = "config.yaml"
QUEUE_FOLDER = "queue"  # in the cache folder: the extraction queues
SIDECAR_FOLDER = "vaults"  # in the cache folder: one folder per server vault


def _xdg(variable: str, fallback: str, env: Mapping[str, str]) -> str:
    value = env.get(variable, "").strip()
    if value and os.path.isabs(value):
        return value
    return os.path.join(env.get("HOME") or os.path.expanduser("~"), fallback)


def _absolute(path: str) -> str:
    return os.path.abspath(os.path.expanduser(path))


def cache_location(env: Mapping[str, str] | None = None) -> str:
    """``$XDG_CACHE_HOME/memtrove`` (``~/.cache/memtrove`` when unset or relative): hook
    logs, the curator report, the MCP front's answers and the running server's address."""
    env = os.environ if env is None else env
    return _absolute(os.path.join(_xdg("XDG_CACHE_HOME", ".cache", env), "memtrove"))


def queue_location(env: Mapping[str, str] | None = None) -> str:
    """The extraction queues' folder: ``<cache>/queue``."""
    return os.path.join(cache_location(env), QUEUE_FOLDER)


def vault_location(env: Mapping[str, str] | None = None, vault: object = None) -> str:
    """The vault: ``vault`` if given, else ``MEMTROVE_VAULT``, else the file in the cache
    folder. A file's path comes back absolute, a server's URL as it is."""
    env = os.environ if env is None else env
    value = str(vault or "") or env.get("MEMTROVE_VAULT", "").strip()
    if is_server_url(value):
        return value.strip()
    if value:
        return _absolute(value)
    return os.path.join(cache_location(env), "vault.sqlite")


def sidecar_folder(location: object, env: Mapping[str, str] | None = None) -> str:
    """Where the files that belong beside the vault go: a vault file's own folder; for a
    server vault ``<cache>/vaults/<key>``, its key a short hash of the URL without its
    password (:func:`memtrove.locations.location_key`). Not created here."""
    if is_server_url(location):
        return os.path.join(cache_location(env), SIDECAR_FOLDER, location_key(location))
    return os.path.dirname(_absolute(str(location)))


def config_location(env: Mapping[str, str] | None = None, config_dir: object = None) -> str:
    """The config folder: ``config_dir`` if given, else ``MEMTROVE_CONFIG_DIR``, else
    ``$XDG_CONFIG_HOME/memtrove``."""
    env = os.environ if env is None else env
    value = str(config_dir or "") or env.get("MEMTROVE_CONFIG_DIR", "").strip()
    if value:
        return _absolute(value)
    return _absolute(os.path.join(_xdg("XDG_CONFIG_HOME", ".config", env), "memtrove"))
