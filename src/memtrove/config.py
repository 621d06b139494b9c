"""Settings: where the vault and config live, and the collections in ``config.yaml``.

Only entry points (the CLI, ``Vault.open`` without a path, later the servers and hooks) read
the environment here; everything below them takes plain arguments.

Environment (resolved in :mod:`memtrove.paths`):
    MEMTROVE_VAULT       vault file or ``postgresql://`` URL (default
                         ``$XDG_CACHE_HOME/memtrove/vault.sqlite``)
    MEMTROVE_CONFIG_DIR  config folder (default ``$XDG_CONFIG_HOME/memtrove``)

``config.yaml`` keeps collections under ``collections:``; other top-level keys, and keys of a
collection memtrove does not know, are preserved when memtrove rewrites the file (atomically,
under a lock). A collection's keys::

    collections:
      docs:
        path: ~/src/product/docs        # required
        pattern: "**/*.md"              # which files (the default)
        exclude: ["**/*.ru.md", i18n/]  # never indexed; a glob matching a folder takes it all
        surface: false                  # searchable, never injected by hooks (default true)
        stale_after_days: none          # N days, none (never) or auto (the default rule)
        redact: false                   # store secrets verbatim (default true: redacted)
        update: git pull --ff-only      # run in the folder by `update --pull` (argv, no shell)

Secrets are stored as ``[REDACTED:kind]`` (:mod:`memtrove.security.redaction`); patterns of
one's own are added at the top level::

    redaction:
      patterns:                         # a list of regexes (kind "custom"), or kind: regex
        ticket_key: "TCK-[0-9A-F]{24}"

A bad value is a :class:`ConfigError` naming the file, the collection and the key.
"""

import contextlib
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from memtrove.errors import (
    CollectionError,
    CollectionExistsError,
    CollectionNotFoundError,
    ConfigError,
)
from memtrove.files import exclusive_lock, write_atomic
from memtrove.locations import is_server_url
from memtrove.paths import CONFIG_FILE_NAME, cache_location, config_location, vault_location
from memtrove.patterns import LazyPattern
from memtrove.results import Collection, StaleAfterDays
from memtrove.text import is_written_name, sha256_hex

__all__ = [
    "CONFIG_FILE_NAME",
    "DEFAULT_PATTERN",
    "MAX_STALE_AFTER_DAYS",
    "CollectionConfig",
    "Settings",
    "cache_dir",
    "check_exclude",
    "check_redact",
    "check_stale_after_days",
    "check_surface",
    "check_update_command",
    "collection_name_for",
    "load_config_yaml",
    "new_collection",
    "validate_collection_name",
]

DEFAULT_PATTERN = "**/*.md"
MAX_STALE_AFTER_DAYS = 36500
_NEVER = ("none", "never", "null")
_NAME = LazyPattern(r"[a-z0-9][a-z0-9_-]{0,63}")


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/memtrove`` (``~/.cache/memtrove`` when unset or relative)."""
    return Path(cache_location(env))


class Settings(NamedTuple):
    """Resolved locations for one process. ``vault_path`` is the vault file's ``Path``, or
    the URL (a ``str``, which may hold a password) of a vault on a database server: see
    :mod:`memtrove.locations`."""

    vault_path: Path | str
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
    ) -> "Settings":
        location = vault_location(env, vault)
        return cls(
            vault_path=location if is_server_url(location) else Path(location),
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


def new_collection(
    path: str | Path,
    name: str | None = None,
    pattern: str = DEFAULT_PATTERN,
    *,
    exclude: Sequence[str] = (),
    surface: bool = True,
    stale_after_days: StaleAfterDays = "auto",
    redact: bool = True,
) -> Collection:
    """The collection of folder ``path`` as ``Vault.add_collection`` registers it, every
    argument checked (CollectionError says what is wrong)."""
    folder = Path(path).expanduser()
    if not folder.exists():
        raise CollectionError(f"collection path {folder} does not exist")
    if not folder.is_dir():
        raise CollectionError(f"collection path {folder} is not a folder")
    if not pattern.strip():
        raise CollectionError("collection pattern must not be empty")
    try:
        excluded = check_exclude(list(exclude))
    except ValueError as error:
        raise CollectionError(f"collection exclude {error}") from None
    try:
        stale = check_stale_after_days(stale_after_days)
    except ValueError as error:
        raise CollectionError(f"collection stale_after_days {error}") from None
    return Collection(
        name=validate_collection_name(
            name if name is not None else collection_name_for(folder.resolve())
        ),
        path=folder.resolve(),
        pattern=pattern.strip(),
        exclude=excluded,
        surface=bool(surface),
        stale_after_days=stale,
        redact=bool(redact),
    )


def check_exclude(value: object) -> tuple[str, ...]:
    """``exclude:`` as a tuple of globs (one glob alone is taken as a list of one).

    Globs are relative to the collection's folder, with forward slashes; a leading ``/`` or
    ``./`` and a trailing ``/`` are dropped (``i18n/`` is the folder ``i18n``). ValueError
    says what is wrong.
    """
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)):
        raise ValueError(f"must be a list of globs, not {type(value).__name__}")
    globs: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise ValueError(f"must be a list of globs; {item!r} is not text")
        if "\\" in item:
            raise ValueError(f"glob {item!r}: use forward slashes")
        glob = item.strip().removeprefix("./").strip("/")
        if not glob:
            raise ValueError(f"glob {item!r} is empty")
        globs.append(glob)
    return tuple(dict.fromkeys(globs))


def check_surface(value: object) -> bool:
    """``surface:`` must be true or false (YAML booleans)."""
    if not isinstance(value, bool):
        raise ValueError(f"must be true or false, not {value!r}")
    return value


def check_redact(value: object) -> bool:
    """``redact:`` must be true or false (YAML booleans)."""
    if not isinstance(value, bool):
        raise ValueError(f"must be true or false, not {value!r}")
    return value


def check_stale_after_days(value: object) -> StaleAfterDays:
    """``stale_after_days:``: a whole number of days (1 to 36500), ``none``/``null``/``never``
    (never stale) or ``auto`` (the default rule of :mod:`memtrove.index.staleness`)."""
    if value is None:
        return None
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _NEVER:
            return None
        if word == "auto":
            return "auto"
        if word.isdigit():
            value = int(word)
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and 1 <= value <= MAX_STALE_AFTER_DAYS
    ):
        return value
    raise ValueError(
        f"must be a number of days (1 to {MAX_STALE_AFTER_DAYS}), none or auto, not {value!r}"
    )


MAX_UPDATE_COMMAND = 4096


def check_update_command(value: object) -> tuple[str, ...]:
    """``update:``: the command ``update --pull`` runs in the collection's folder, as the
    argument list it is run as (never through a shell). A string is split as a shell would
    split its words (``shlex.split``: quotes group, nothing is expanded); a list is taken as
    the arguments themselves. ValueError says what is wrong."""
    import shlex

    if isinstance(value, str):
        if len(value) > MAX_UPDATE_COMMAND:
            raise ValueError(f"is longer than {MAX_UPDATE_COMMAND} characters")
        try:
            words = shlex.split(value)
        except ValueError as error:
            raise ValueError(f"cannot be split into arguments ({error})") from None
    elif isinstance(value, (list, tuple)) and all(isinstance(word, str) for word in value):
        words = list(value)
    else:
        raise ValueError(f"must be a command (text or a list of arguments), not {value!r:.80}")
    if not words or not words[0].strip():
        raise ValueError("is empty")
    if any(
        (ord(char) < 32 and char != "\t") or ord(char) == 127 for word in words for char in word
    ):
        raise ValueError("holds a control character")
    if sum(len(word) for word in words) > MAX_UPDATE_COMMAND:
        raise ValueError(f"is longer than {MAX_UPDATE_COMMAND} characters")
    return tuple(words)


def _signature(path: Path) -> tuple[int, int, int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size, stat.st_ino)


class CollectionConfig:
    """The ``collections:`` section of ``config.yaml``.

    :meth:`load` parses the file once and again only when it changes (one ``stat`` per call
    otherwise), so callers on the hook path can ask for it freely.
    """

    def __init__(self, config_file: Path) -> None:
        self.config_file = config_file
        self._loaded: tuple[tuple[int, int, int, int], list[Collection]] | None = None
        self._patterns: tuple[tuple[int, int, int, int], list[tuple[str, str]]] | None = None

    def load(self) -> list[Collection]:
        signature = _signature(self.config_file)
        if signature is not None and self._loaded is not None and self._loaded[0] == signature:
            return list(self._loaded[1])
        collections = self._parse(self._read())
        if signature is not None:
            self._loaded = (signature, collections)
        return list(collections)

    def unsurfaced(self) -> frozenset[str]:
        """Names of the collections set ``surface: false``. The hook path asks this at every
        prompt: a file that never says ``surface`` is not parsed (that needs YAML, ~15 ms
        to import), only read."""
        if self._loaded is None:
            try:
                text = self.config_file.read_bytes()
            except OSError:
                return frozenset()
            if b"surface" not in text:
                return frozenset()
        return frozenset(c.name for c in self.load() if not c.surface)

    def redaction_patterns(self) -> list[tuple[str, str]]:
        """The ``redaction: patterns:`` of the file as checked ``(kind, regex)`` pairs (empty
        when the file never says ``redaction``: no YAML is parsed then). Every write asks,
        so an unchanged file costs one ``stat``. ConfigError names a bad pattern."""
        signature = _signature(self.config_file)
        if signature is None:
            return []
        if self._patterns is not None and self._patterns[0] == signature:
            return list(self._patterns[1])
        try:
            text = self.config_file.read_bytes()
        except OSError:
            return []
        patterns = self._parse_patterns() if b"redaction" in text else []
        self._patterns = (signature, patterns)
        return list(patterns)

    def _parse_patterns(self) -> list[tuple[str, str]]:
        from memtrove.security.redaction import compile_extra

        section = self._read().get("redaction") or {}
        if not isinstance(section, dict):
            raise ConfigError(f"{self.config_file}: 'redaction' must be a mapping")
        raw = section.get("patterns") or []
        if not isinstance(raw, (list, dict)):
            raise ConfigError(
                f"{self.config_file}: 'redaction: patterns' must be a list or mapping"
            )
        try:
            return compile_extra(raw)
        except ValueError as error:
            raise ConfigError(f"{self.config_file}: redaction: {error}") from None

    def update_commands(self) -> dict[str, tuple[str, ...]]:
        """Each collection's ``update:`` command (see :func:`check_update_command`) by
        collection name; collections without one are left out. ConfigError names a bad one."""
        self.load()  # every name and entry checked first
        raw = self._read().get("collections") or {}
        return {
            str(name): self._checked_update(str(name), entry)
            for name, entry in raw.items()
            if isinstance(entry, dict) and entry.get("update") is not None
        }

    def _checked_update(self, name: str, entry: dict[str, Any]) -> tuple[str, ...]:
        try:
            return check_update_command(entry["update"])
        except ValueError as error:
            raise ConfigError(
                f"{self.config_file}: collection {name!r}: 'update' {error}"
            ) from None

    def section(self, key: str) -> object:
        """The raw top-level ``key`` of the file (None when absent), for the parts that
        validate their own section (``lifecycle:``, see :mod:`memtrove.lifecycle.policy`)."""
        return self._read().get(key)

    def _parse(self, data: dict[str, Any]) -> list[Collection]:
        raw = data.get("collections") or {}
        if not isinstance(raw, dict):
            raise ConfigError(f"{self.config_file}: 'collections' must be a mapping of names")
        for name in raw:
            if isinstance(name, int) and not isinstance(name, bool):
                continue  # `2024:` is the name "2024"
            if not isinstance(name, str) or not is_written_name(name):
                raise ConfigError(
                    f"{self.config_file}: {str(name)[:80]!r} is not a collection name (one "
                    "to 200 characters, no '/', '\\' or control characters, not starting "
                    "with '.')"
                )
        return [self._collection(str(name), entry) for name, entry in raw.items()]

    def _collection(self, name: str, entry: object) -> Collection:
        if isinstance(entry, str):
            entry = {"path": entry}
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            raise ConfigError(f"{self.config_file}: collection {name!r} needs a 'path'")
        pattern = entry.get("pattern") or DEFAULT_PATTERN
        if not isinstance(pattern, str):
            raise ConfigError(f"{self.config_file}: collection {name!r} has a bad 'pattern'")
        checked: dict[str, Any] = {}
        for key, check in (
            ("exclude", check_exclude),
            ("surface", check_surface),
            ("stale_after_days", check_stale_after_days),
            ("redact", check_redact),
        ):
            if key not in entry:
                continue
            try:
                checked[key] = check(entry[key])
            except ValueError as error:
                raise ConfigError(
                    f"{self.config_file}: collection {name!r}: {key!r} {error}"
                ) from None
        if entry.get("update") is not None:
            self._checked_update(name, entry)  # a bad command is found on any read
        path = Path(os.path.expandvars(entry["path"])).expanduser()
        return Collection(name=name, path=path, pattern=pattern, **checked)

    def _read(self) -> dict[str, Any]:
        try:
            text = self.config_file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigError(f"cannot read {self.config_file}: {error}") from None
        cached = _parsed_before(self.config_file, text)
        if cached is not None:
            return cached
        try:
            import yaml  # loaded only when the config is read: hooks never need it

            data = load_config_yaml(text)
        except yaml.YAMLError as error:
            detail = " ".join(str(error).split())[:200]
            raise ConfigError(f"{self.config_file} is not valid YAML: {detail}") from None
        except ValueError as error:
            raise ConfigError(f"{self.config_file}: {error}") from None
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise ConfigError(f"{self.config_file} must hold a mapping at the top level")
        _remember_parsed(self.config_file, text, data)
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
            entry: dict[str, Any] = {"path": str(collection.path), "pattern": collection.pattern}
            if collection.exclude:
                entry["exclude"] = list(collection.exclude)
            if not collection.surface:
                entry["surface"] = False
            if collection.stale_after_days != "auto":
                entry["stale_after_days"] = collection.stale_after_days
            if not collection.redact:
                entry["redact"] = False
            section[collection.name] = entry
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


# -- reading config.yaml ---------------------------------------------------------------------

# Importing PyYAML costs a short command (``update``, ``status``) ~12 ms, more than reading
# the file: what a config.yaml parsed to is kept as JSON in the cache folder, keyed by the
# SHA-256 of its text, and used while the text is the same. Anything odd about the cache
# (missing, unreadable, another text, data JSON cannot hold exactly) means parsing again.


def _parse_cache(config_file: Path) -> Path:
    key = sha256_hex(str(config_file.resolve()).encode("utf-8", "surrogatepass"))
    return cache_dir() / "parsed-config" / f"{key[:24]}.json"


def _text_digest(text: str) -> str:
    return sha256_hex(text.encode("utf-8", "surrogatepass"))


def _parsed_before(config_file: Path, text: str) -> dict[str, Any] | None:
    import json

    try:
        cached = json.loads(_parse_cache(config_file).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(cached, dict) or cached.get("sha256") != _text_digest(text):
        return None
    data = cached.get("data")
    return data if isinstance(data, dict) else None


def _remember_parsed(config_file: Path, text: str, data: dict[str, Any]) -> None:
    import json

    try:
        encoded = json.dumps({"sha256": _text_digest(text), "data": data})
        if json.loads(encoded)["data"] != data:  # int keys, say: JSON would change them
            return
        target = _parse_cache(config_file)
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, encoded, prefix=".parsed-")
    except (OSError, TypeError, ValueError):
        return  # a cache that cannot be written only costs the next command the parse


MAX_YAML_VALUES = 100_000
_MERGE_TAG = "tag:yaml.org,2002:merge"


def load_config_yaml(text: str) -> Any:
    """The value ``text`` holds (None for an empty document): YAML's safe subset, with what
    a hand-written file must never do refused. Raises yaml.YAMLError for text that is not
    YAML, holds a key twice in one mapping, or has aliases whose values, every alias
    followed, would number more than :data:`MAX_YAML_VALUES`; ValueError for nesting deeper
    than Python recurses.

    Plain YAML keeps the last of two equal keys without a word (a second ``demo:`` replaced
    the first folder), and nested aliases ("billion laughs") cost gigabytes to walk or to
    quote in an error. Shared anchors (one ``exclude`` list for several collections) and
    merge keys (``<<: *defaults``, where a mapping's own keys win and only they count as
    duplicates) keep their meaning. PyYAML is imported only here."""
    import yaml
    from yaml.constructor import ConstructorError

    class ConfigLoader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    repeated = key in seen
                except TypeError:  # an unhashable key: the base constructor says so
                    continue
                if repeated:
                    raise ConstructorError(
                        "while reading a mapping",
                        node.start_mark,
                        f"found the key {str(key)[:80]!r} twice",
                        key_node.start_mark,
                    )
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    loader = ConfigLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded_values(node, {}) > MAX_YAML_VALUES:
            raise ConstructorError(
                None,
                None,
                f"its aliases expand to more than {MAX_YAML_VALUES:,} values",
                node.start_mark,
            )
        return loader.construct_document(node)
    except RecursionError:
        raise ValueError("it is nested too deeply") from None
    finally:
        loader.dispose()


def _expanded_values(node: Any, sizes: dict[int, int]) -> int:
    """How many values a YAML node stands for with every alias followed (a shared node is
    counted once per use, and measured once)."""
    known = sizes.get(id(node))
    if known is not None:
        return known
    sizes[id(node)] = 1  # a node that contains itself counts once
    total = 1
    if isinstance(node.value, list):
        for child in node.value:
            if isinstance(child, tuple):  # a mapping's (key, value)
                total += sum(_expanded_values(part, sizes) for part in child)
            else:
                total += _expanded_values(child, sizes)
    sizes[id(node)] = total
    return total
