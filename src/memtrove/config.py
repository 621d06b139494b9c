"""Settings: where the vault and config live, and the collections in ``config.yaml``.

Only entry points (the CLI, ``Vault.open`` without a path, later the servers and hooks) read
the environment here; everything below them takes plain arguments.

Environment (resolved in :mod:`memtrove.paths`):
    MEMTROVE_VAULT       vault file (default ``$XDG_CACHE_HOME/memtrove/vault.sqlite``)
    MEMTROVE_CONFIG_DIR  config folder (default ``$XDG_CONFIG_HOME/memtrove``)

``config.yaml`` keeps collections under ``collections:``; other top-level keys are preserved
when memtrove rewrites the file (atomically, under a lock).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memtrove.errors import (
    CollectionError,
    CollectionExistsError,
    CollectionNotFoundError,
    ConfigError,
)
from memtrove.files import exclusive_lock, write_atomic
from memtrove.paths import CONFIG_FILE_NAME, cache_location, config_location, vault_location
from memtrove.results import Collection

__all__ = [
    "CONFIG_FILE_NAME",
    "DEFAULT_PATTERN",
    "CollectionConfig",
    "Settings",
    "cache_dir",
    "collection_name_for",
    "validate_collection_name",
]

DEFAULT_PATTERN = "**/*.md"
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/memtrove`` (``~/.cache/memtrove`` when unset or relative)."""
    return Path(cache_location(env))


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
        return cls(
            vault_path=Path(vault_location(env, vault)),
            config_dir=Path(config_location(env, config_dir)),
        )


def collection_name_for(path: Path) -> str:
    """Default collection name: the folder's name, lowercased, other characters as '-'."""
    name = re.sub(r"[^a-z0-9_-]+", "-", path.name.lower()).strip("-_")
    return name[:64] or "notes"


def validate_collection_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise CollectionError(
            f"invalid collection name {name!r}: use 1-64 of a-z, 0-9, '-', '_' "
            "(starting with a letter or digit)"
        )
    return name


class CollectionConfig:
    """The ``collections:`` section of ``config.yaml``."""

    def __init__(self, config_file: Path) -> None:
        self.config_file = config_file

    def load(self) -> list[Collection]:
        data = self._read()
        raw = data.get("collections") or {}
        if not isinstance(raw, dict):
            raise ConfigError(f"{self.config_file}: 'collections' must be a mapping of names")
        collections: list[Collection] = []
        for name, entry in raw.items():
            if isinstance(entry, str):
                entry = {"path": entry}
            if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
                raise ConfigError(f"{self.config_file}: collection {name!r} needs a 'path'")
            pattern = entry.get("pattern") or DEFAULT_PATTERN
            if not isinstance(pattern, str):
                raise ConfigError(f"{self.config_file}: collection {name!r} has a bad 'pattern'")
            path = Path(os.path.expandvars(entry["path"])).expanduser()
            collections.append(Collection(name=str(name), path=path, pattern=pattern))
        return collections

    def _read(self) -> dict[str, Any]:
        try:
            text = self.config_file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigError(f"cannot read {self.config_file}: {error}") from None
        try:
            import yaml  # loaded only when the config is read: hooks never need it

            data = yaml.safe_load(text)
        except yaml.YAMLError as error:
            detail = " ".join(str(error).split())[:200]
            raise ConfigError(f"{self.config_file} is not valid YAML: {detail}") from None
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise ConfigError(f"{self.config_file} must hold a mapping at the top level")
        return data

    @contextlib.contextmanager
    def editing(self) -> Iterator[dict[str, Any]]:
        """Read-modify-write the whole file under an exclusive lock; written atomically."""
        self.config_file.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.config_file.with_name(self.config_file.name + ".lock")
        with exclusive_lock(lock_path):
            data = self._read()
            yield data
            write_atomic(self.config_file, _dump_yaml(data), prefix=".config-", sync=True)

    def add(self, collection: Collection) -> None:
        with self.editing() as data:
            section = data.get("collections")
            if not isinstance(section, dict):
                section = {}
            if collection.name in section:
                raise CollectionExistsError(f"collection {collection.name!r} already exists")
            section[collection.name] = {"path": str(collection.path), "pattern": collection.pattern}
            data["collections"] = section

    def remove(self, name: str) -> Collection:
        with self.editing() as data:
            section = data.get("collections")
            if not isinstance(section, dict) or name not in section:
                raise CollectionNotFoundError(f"no collection named {name!r}")
            entry = section.pop(name)
            data["collections"] = section
        path = entry.get("path", "") if isinstance(entry, dict) else str(entry)
        pattern = (
            entry.get("pattern", DEFAULT_PATTERN) if isinstance(entry, dict) else DEFAULT_PATTERN
        )
        return Collection(name=name, path=Path(path), pattern=pattern)


def _dump_yaml(data: dict[str, Any]) -> str:
    import yaml

    return str(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
