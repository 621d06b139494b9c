"""Watching the collection folders (``memtrove watch``): re-index what changes, embed it on a
timer, checkpoint the WAL now and then, and follow ``config.yaml`` as collections come and go.

One loop, on the caller's thread::

    watcher = Watcher(vault, config_file, WatchSettings(), log=print)
    watcher.run(stop)   # until ``stop`` (a threading.Event) is set

- Changes come from ``watchfiles`` (inotify, FSEvents, ...): nothing is polled. A batch is
  indexed once the folders have been quiet for ``debounce_ms`` (2 s), or at the latest
  ``max_batch_ms`` (10 s) after its first change, so a burst of writes is indexed once per
  window. The loop wakes every ``tick_ms`` (250 ms) to check the clocks; idle, that costs
  next to nothing.
- Each batch re-indexes the collections that own a changed file (``update(names)``), once.
- Documents that got new text are embedded ``embed_interval`` seconds after the last embed
  at the earliest (an embedder busy in another process, or failing, is retried then).
- ``PRAGMA wal_checkpoint(PASSIVE)`` every ``checkpoint_interval`` seconds (5 min): readers
  and writers are never blocked by it, and the WAL stops growing while the watcher runs.
- ``config.yaml`` is looked at (one ``stat``) at every wake: a collection added is
  indexed at once and watched; one removed is no longer watched.
- A change under a ``.beads/`` folder inside a collection (the Beads issue tracker's) runs
  ``beads`` (a Beads sync of the folder holding it) with the batch, debounced alike; the
  files bd's own reads touch (SQLite's ``-wal``/``-shm``/``-journal``, locks, sockets, logs)
  do not count, so a sync never sets off the next one.

Every index run, embed run, checkpoint and problem is reported through ``log`` as one line;
``index_runs`` and friends count them. Errors memtrove can explain are logged and the loop
goes on; the next batch or tick retries.
"""

from __future__ import annotations

import fnmatch
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from memtrove.db.connection import Connection
from memtrove.errors import MemtroveError
from memtrove.text import error_line

if TYPE_CHECKING:
    from memtrove.results import Collection

__all__ = ["WalCheckpoints", "WatchSettings", "WatchTarget", "Watcher", "wal_checkpoint"]


class WatchSettings(NamedTuple):
    """How the watcher batches, embeds and checkpoints (times in ms or seconds as named)."""

    debounce_ms: int = 2000
    max_batch_ms: int = 10_000
    embed: bool = True
    embed_interval: float = 2.0
    checkpoint_interval: float = 300.0
    tick_ms: int = 250


class WalCheckpoints(Protocol):
    """What the watcher needs of a vault's lifecycle area."""

    def checkpoint_wal(self) -> tuple[int, int, int]: ...


class WatchTarget(Protocol):
    """What the watcher needs of a vault."""

    def collections(self) -> list[Collection]: ...
    def update(self, collections: Sequence[str] | None = None) -> Any: ...
    def embed(self) -> Any: ...
    @property
    def lifecycle(self) -> WalCheckpoints: ...


def wal_checkpoint(connection: Connection) -> tuple[int, int, int]:
    """``PRAGMA wal_checkpoint(PASSIVE)``: (busy, WAL frames, frames checkpointed)."""
    return connection.catalog.checkpoint()


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size, stat.st_ino)


class Watcher:
    """Keeps a vault's collections indexed while their folders change."""

    def __init__(
        self,
        target: WatchTarget,
        config_file: Path,
        settings: WatchSettings = WatchSettings(),
        *,
        log: Callable[[str], None] = lambda line: None,
        beads: Callable[[Path], Any] | None = None,
    ) -> None:
        self.target = target
        self.beads = beads
        self.beads_runs = 0
        self.config_file = config_file
        self.settings = settings
        self.log = log
        self.index_runs = 0
        self.embed_runs = 0
        self.checkpoints = 0
        self._folders: dict[str, Collection] = {}
        self._config = _signature(config_file)
        self._embed_pending = False
        self._last_embed = 0.0
        self._last_checkpoint = time.monotonic()

    # -- one step at a time (the loop below, and tests) ------------------------------------

    def watched(self) -> dict[str, Path]:
        """The folders watched now, by collection name."""
        return {name: collection.path for name, collection in self._folders.items()}

    def load_collections(self) -> set[str]:
        """Read the configured collections; the names that are new since the last read."""
        try:
            configured = self.target.collections()
        except MemtroveError as error:
            self.log(f"cannot read the collections: {error}")
            return set()
        folders: dict[str, Collection] = {}
        for collection in configured:
            path = collection.path.expanduser()
            if path.is_dir():
                folders[collection.name] = collection._replace(path=path.resolve())
            else:
                self.log(f"collection {collection.name}: folder {path} is missing; not watched")
        added = set(folders) - set(self._folders)
        self._folders = folders
        return added

    def owners(self, paths: Iterable[tuple[str, str]]) -> set[str]:
        """The collections owning changed files worth indexing: (change, path) pairs as
        ``watchfiles`` reports them (``deleted`` paths count whatever they were: a folder;
        an ``added`` folder counts too: a folder moved in, or files written into a new one
        before its watch was set, bring no event of their own)."""
        found: set[str] = set()
        for change, raw in paths:
            path = Path(raw)
            for name, collection in self._folders.items():
                try:
                    relative = PurePosixPath(path.relative_to(collection.path).as_posix())
                except ValueError:
                    continue
                if (
                    change == "deleted"
                    or _matches(relative, collection.pattern)
                    or (change == "added" and path.is_dir())
                ):
                    found.add(name)
        return found

    def beads_projects(self, paths: Iterable[tuple[str, str]]) -> set[Path]:
        """The project folders whose ``.beads/`` holds a changed file ((change, path) pairs
        as :meth:`owners` takes them), inside a watched collection."""
        if self.beads is None:
            return set()
        found: set[Path] = set()
        for _change, raw in paths:
            path = Path(raw)
            if _BEADS not in path.parts or _BEADS_NOISE.search(path.name):
                continue
            for collection in self._folders.values():
                try:
                    parts = path.relative_to(collection.path).parts
                except ValueError:
                    continue
                if _BEADS in parts:
                    found.add(collection.path.joinpath(*parts[: parts.index(_BEADS)]))
        return found

    def sync_beads(self, projects: set[Path]) -> None:
        """Run the Beads sync of each folder in ``projects`` once."""
        if self.beads is None:
            return
        for project in sorted(projects):
            try:
                report = self.beads(project)
            except MemtroveError as error:
                self.log(f"cannot sync Beads issues of {project}: {error}")
                continue
            self.beads_runs += 1
            summary = getattr(report, "summary", None)
            self.log(f"beads {project}: {summary() if callable(summary) else report}")

    def index(self, names: set[str]) -> None:
        """Re-index ``names`` once, then embed if it is time."""
        if not names:
            return
        ordered = sorted(names)
        started = time.monotonic()
        try:
            report = self.target.update(ordered)
        except MemtroveError as error:
            self.log(f"cannot index {', '.join(ordered)}: {error}")
            return
        self.index_runs += 1
        elapsed = time.monotonic() - started
        self.log(f"indexed {', '.join(ordered)}: {report.summary} in {elapsed:.2f}s")
        for warning in getattr(report, "warnings", []):
            self.log(f"warning: {warning}")
        if report.added or report.updated:
            self._embed_pending = True
        self.periodic()

    def periodic(self) -> None:
        """Embed what is pending when its interval has passed; checkpoint when due; follow
        ``config.yaml``."""
        now = time.monotonic()
        if (
            self.settings.embed
            and self._embed_pending
            and now - self._last_embed >= self.settings.embed_interval
        ):
            self._last_embed = now
            try:
                report = self.target.embed()
            except MemtroveError as error:
                self.log(f"cannot embed now (retried later): {error}")
            else:
                self._embed_pending = False
                self.embed_runs += 1
                self.log(
                    f"embedded {report.documents} documents ({report.fragments} fragments) "
                    f"in {report.elapsed_seconds:.2f}s"
                )
        if now - self._last_checkpoint >= self.settings.checkpoint_interval:
            self._last_checkpoint = now
            try:
                busy, frames, done = self.target.lifecycle.checkpoint_wal()
            except MemtroveError as error:
                self.log(f"wal checkpoint failed: {error}")
            else:
                self.checkpoints += 1
                self.log(f"wal checkpoint: {done} of {frames} frames{' (busy)' if busy else ''}")

    def config_changed(self) -> bool:
        signature = _signature(self.config_file)
        if signature == self._config:
            return False
        self._config = signature
        return True

    # -- the loop -------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Watch until ``stop`` is set; returns within ``tick_ms`` of it, after the batch in
        hand (if any) is indexed. Each time the watch (re)starts, every watched collection
        is indexed once as soon as the watch is live, catching up on changes made while
        nobody watched (changes made meanwhile come in the next batch: none is lost)."""
        import watchfiles

        self.load_collections()
        while not stop.is_set():
            paths = [str(collection.path) for collection in self._folders.values()]
            if not paths:  # nothing to watch yet: wait for config.yaml to name something
                if stop.wait(self.settings.tick_ms / 1000):
                    return
                self._follow_config()
                self.periodic()
                continue
            batch = _Batch(self.settings)
            restart = False
            try:
                for changes in watchfiles.watch(
                    *paths,
                    debounce=self.settings.max_batch_ms,
                    step=_STEP_MS,
                    stop_event=stop,
                    rust_timeout=self.settings.tick_ms,
                    yield_on_timeout=True,
                    raise_interrupt=False,
                ):
                    if not batch.caught_up:  # the watch is live: catch up once, now
                        batch.caught_up = True
                        self.index(set(self._folders))
                    pairs = [(change.name, path) for change, path in changes]
                    batch.add(self.owners(pairs), self.beads_projects(pairs))
                    if batch.due():
                        self._flush(batch)
                    restart = self._follow_config()
                    self.periodic()
                    if restart or stop.is_set():
                        break
            except OSError as error:  # a folder it may not enter, too many watches, ...
                self._flush(batch)
                self.log(
                    f"cannot watch the folders ({error_line(str(error), 200)}); indexing them every "
                    f"{RESCAN_SECONDS:g} s instead"
                )
                self._rescan(stop)
                return
            self._flush(batch)  # the batch in hand, before a restart or a stop
            if not restart and not stop.is_set():  # a watched folder went away
                self.load_collections()

    def _flush(self, batch: _Batch) -> None:
        """Index the batch's collections, then sync its Beads folders."""
        projects = batch.take_projects()
        self.index(batch.take())
        self.sync_beads(projects)

    def _rescan(self, stop: threading.Event) -> None:
        """Without a watch: every collection indexed now and every :data:`RESCAN_SECONDS`
        after, until ``stop``."""
        while True:
            self.index(set(self._folders))
            deadline = time.monotonic() + RESCAN_SECONDS
            while time.monotonic() < deadline:
                if stop.wait(self.settings.tick_ms / 1000):
                    return
                if self._follow_config():
                    break  # a collection added or removed: index the new set now
                self.periodic()

    def _follow_config(self) -> bool:
        """True when the set of watched folders changed (the watch must restart)."""
        if not self.config_changed():
            return False
        before = self.watched()
        added = self.load_collections()
        if added:
            self.log(f"new collections: {', '.join(sorted(added))}")
        return self.watched() != before


RESCAN_SECONDS = 60.0  # how often every collection is indexed when folders cannot be watched
_STEP_MS = 100  # how long watchfiles waits for more after a change before handing it over
_BEADS = ".beads"
# Files bd touches by reading (SQLite side files, locks, its daemon's socket and log).
_BEADS_NOISE = re.compile(r"(-wal|-shm|-journal|\.lock|\.sock|\.log|\.pid)$|^daemon", re.I)


class _Batch:
    """Changed collections waiting for ``debounce_ms`` of quiet (at most ``max_batch_ms``
    after their first change)."""

    def __init__(self, settings: WatchSettings) -> None:
        self.settings = settings
        self.names: set[str] = set()
        self.projects: set[Path] = set()
        self.first = self.last = 0.0
        self.caught_up = False

    def add(self, names: set[str], projects: set[Path] | None = None) -> None:
        if not names and not projects:
            return
        now = time.monotonic()
        if not self.names and not self.projects:
            self.first = now
        self.names |= names
        self.projects |= projects or set()
        self.last = now

    def due(self) -> bool:
        now = time.monotonic()
        return bool(self.names or self.projects) and (
            (now - self.last) * 1000 >= self.settings.debounce_ms
            or (now - self.first) * 1000 >= self.settings.max_batch_ms
        )

    def take(self) -> set[str]:
        names, self.names = self.names, set()
        return names

    def take_projects(self) -> set[Path]:
        projects, self.projects = self.projects, set()
        return projects


def _matches(relative: PurePosixPath, pattern: str) -> bool:
    """Whether a changed file could be one ``pattern`` indexes (its file-name part)."""
    return fnmatch.fnmatch(relative.name, PurePosixPath(pattern).name or "*")
