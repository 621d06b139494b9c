"""The SQLite engine's connection: driver, PRAGMAs, sqlite-vec, and write transactions.

One driver everywhere (``sqlean.py``, a DB-API drop-in bundling a recent SQLite with FTS5
and extension loading), so the same code runs where the system SQLite cannot load
extensions. Connections run in autocommit mode; writes go through :func:`write_transaction`,
which takes the write lock up front (``BEGIN IMMEDIATE``) so a transaction never has to
upgrade a stale read snapshot, the one case SQLite's busy handler cannot wait out.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlean

from memtrove.errors import ExtensionError, VaultBusyError, VaultOpenError

__all__ = [
    "BULK_CHECKPOINT_PAGES",
    "DEFAULT_BUSY_TIMEOUT_MS",
    "Connection",
    "DatabaseError",
    "IntegrityError",
    "OperationalError",
    "fewer_checkpoints",
    "is_locked_error",
    "open_connection",
    "write_step",
    "write_transaction",
    "write_unless_locked",
]

DEFAULT_BUSY_TIMEOUT_MS = 5000
# How long write_transaction keeps retrying BEGIN IMMEDIATE on top of busy_timeout.
_LOCK_RETRY_SECONDS = 30.0
BULK_CHECKPOINT_PAGES = 8000  # WAL pages between checkpoints in fewer_checkpoints (~32 MB)

if TYPE_CHECKING:  # sqlean.py mirrors the standard library's sqlite3 module exactly
    from sqlite3 import Connection as _Driver
    from sqlite3 import DatabaseError, IntegrityError, OperationalError

    from memtrove.db.sqlite.catalog import SqliteCatalog
    from memtrove.db.sqlite.text_index import SqliteTextIndex
    from memtrove.db.sqlite.vector_index import SqliteVectorIndex
else:
    _Driver = sqlean.Connection
    OperationalError = sqlean.OperationalError
    DatabaseError = sqlean.DatabaseError
    IntegrityError = sqlean.IntegrityError


class Connection(_Driver):
    """A vault's SQLite connection: the DB-API connection of ``sqlean.py`` with the seam of
    :mod:`memtrove.db.engine` (transactions, and the text index, vector index and catalog
    built on first use)."""

    dialect = "sqlite"

    def insert(self, sql: str, parameters: Any = (), /, *, key: str = "id") -> int | None:
        """The rowid the insert gave (``key`` names the rowid alias). Not ``RETURNING``: a
        statement with it opens a statement savepoint, at which FTS5 writes out its pending
        rows, one tiny segment per insert in a transaction that also writes the text index
        (a full index three times slower)."""
        cursor = self.execute(sql, parameters)
        return int(cursor.lastrowid) if cursor.rowcount > 0 and cursor.lastrowid else None

    def insert_rows(
        self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
    ) -> None:
        names = ", ".join(f'"{column}"' for column in columns)
        marks = ", ".join("?" * len(columns))
        self.executemany(f'INSERT INTO "{table}" ({names}) VALUES ({marks})', rows)

    def transaction(
        self, *, retry_seconds: float | None = None
    ) -> contextlib.AbstractContextManager[Connection]:
        return write_transaction(self, retry_seconds=retry_seconds)

    def savepoint(self) -> contextlib.AbstractContextManager[Connection]:
        return write_step(self)

    @contextlib.contextmanager
    def read_snapshot(self) -> Iterator[Connection]:
        """Every statement in the block reads one snapshot (a deferred transaction)."""
        self.execute("BEGIN")
        try:
            yield self
        finally:
            if self.in_transaction:
                self.execute("COMMIT")

    def write_unless_locked(self, action: Callable[[], object]) -> bool:
        return write_unless_locked(self, action)

    def bulk_writes(self) -> contextlib.AbstractContextManager[None]:
        return fewer_checkpoints(self)

    def clock(self) -> datetime:
        """This host's time: a vault file has one host at a time."""
        return datetime.now(UTC)

    @functools.cached_property
    def text(self) -> SqliteTextIndex:
        from memtrove.db.sqlite.text_index import SqliteTextIndex

        return SqliteTextIndex(self)

    @functools.cached_property
    def vectors(self) -> SqliteVectorIndex:
        from memtrove.db.sqlite.vector_index import SqliteVectorIndex

        return SqliteVectorIndex(self)

    @functools.cached_property
    def catalog(self) -> SqliteCatalog:
        from memtrove.db.sqlite.catalog import SqliteCatalog

        return SqliteCatalog(self)


def is_locked_error(error: BaseException) -> bool:
    """True for SQLite's 'database is locked' / 'busy' failures."""
    text = str(error).lower()
    return isinstance(error, OperationalError) and ("locked" in text or "busy" in text)


def _retry_locked(action: Any, deadline: float) -> Any:
    """Run ``action()``, retrying lock failures with jittered backoff until ``deadline``."""
    delay = 0.02
    while True:
        try:
            return action()
        except OperationalError as error:
            if not is_locked_error(error) or time.monotonic() >= deadline:
                raise
            import random  # only when a lock is contended

            time.sleep(delay + random.random() * delay)
            delay = min(delay * 2, 0.5)


def open_connection(path: Path, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS) -> Connection:
    """Open ``path`` with the vault PRAGMAs and sqlite-vec loaded.

    busy_timeout is set first, so that every later statement (switching to WAL included)
    waits for other processes instead of failing at once.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise VaultOpenError(f"cannot create the vault folder {path.parent}: {error}") from None
    try:
        connection: Connection = sqlean.connect(
            str(path),
            isolation_level=None,
            check_same_thread=False,
            timeout=busy_timeout_ms / 1000,
            factory=Connection,
        )
    except DatabaseError as error:
        raise VaultOpenError(f"cannot open vault {path}: {error}") from None
    try:
        connection.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        deadline = time.monotonic() + _LOCK_RETRY_SECONDS
        mode = _retry_locked(
            lambda: connection.execute("PRAGMA journal_mode = WAL").fetchone()[0], deadline
        )
        if str(mode).lower() != "wal":
            raise VaultOpenError(f"cannot switch vault {path} to WAL mode (got {mode!r})")
        connection.execute("PRAGMA foreign_keys = ON")
        connection.execute("PRAGMA synchronous = NORMAL")
    except DatabaseError as error:
        connection.close()
        if is_locked_error(error):
            raise VaultBusyError(f"vault {path} stayed locked by another process") from None
        raise VaultOpenError(f"cannot open vault {path}: {error}") from None
    _load_sqlite_vec(connection, path)
    return connection


def _vec0_path() -> str:
    """sqlite-vec's loadable extension, found without importing its package (which imports
    numpy, a tenth of a second every hook would pay)."""
    spec = importlib.util.find_spec("sqlite_vec")
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise ImportError("the sqlite-vec package is not installed")
    return os.path.join(locations[0], "vec0")


def _load_sqlite_vec(connection: Connection, path: Path) -> None:
    try:
        connection.enable_load_extension(True)
        connection.load_extension(_vec0_path())
        connection.enable_load_extension(False)
        connection.execute("SELECT vec_version()").fetchone()
    except Exception as error:
        connection.close()
        raise ExtensionError(f"cannot load sqlite-vec into vault {path}: {error}") from None


def write_unless_locked(connection: Connection, action: Callable[[], object]) -> bool:
    """Run ``action`` in one ``BEGIN IMMEDIATE`` transaction without waiting for the lock:
    False, with nothing written, when the vault is locked. For writes that may be skipped
    (caches: the answer is used all the same)."""
    try:
        connection.execute("BEGIN IMMEDIATE")
    except Exception as error:
        if is_locked_error(error):
            return False
        raise
    try:
        action()
        connection.execute("COMMIT")
    except BaseException as error:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        if isinstance(error, Exception) and is_locked_error(error):
            return False
        raise
    return True


@contextlib.contextmanager
def write_transaction(
    connection: Connection, *, retry_seconds: float | None = None
) -> Iterator[Connection]:
    """A ``BEGIN IMMEDIATE`` transaction, committed on success and rolled back on error.

    Taking the lock can wait past busy_timeout: BEGIN is retried until a 30 s deadline
    (``retry_seconds``; 0 waits busy_timeout once, for callers on a time budget such as
    hooks), which is safe because nothing has been done yet. Past that the caller gets
    VaultBusyError.
    """
    if retry_seconds is None:
        retry_seconds = _LOCK_RETRY_SECONDS
    deadline = time.monotonic() + max(0.0, retry_seconds)
    try:
        _retry_locked(lambda: connection.execute("BEGIN IMMEDIATE"), deadline)
    except OperationalError as error:
        if is_locked_error(error):
            raise VaultBusyError("the vault stayed locked by another process; try again") from None
        raise
    try:
        yield connection
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    else:
        try:
            _retry_locked(lambda: connection.execute("COMMIT"), deadline)
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise


@contextlib.contextmanager
def fewer_checkpoints(connection: Connection, pages: int = BULK_CHECKPOINT_PAGES) -> Iterator[None]:
    """For many write transactions in a row (a first index): checkpoint the WAL every
    ``pages`` pages rather than SQLite's 1,000. Each checkpoint waits for two fsyncs and
    copies pages that the next batches write again; at 10,000 notes this is a tenth of the
    time. At the end the WAL is checkpointed once (passive: it never waits for a reader or
    writer; the WAL file goes when the last connection closes, as ever) and the connection's
    setting is put back. A transaction commits as before (``synchronous`` is unchanged)."""
    before = int(connection.execute("PRAGMA wal_autocheckpoint").fetchone()[0])
    if before <= 0 or before >= pages:  # off, or already as large: nothing to change
        yield
        return
    connection.execute(f"PRAGMA wal_autocheckpoint = {int(pages)}")
    try:
        yield
    finally:
        connection.execute(f"PRAGMA wal_autocheckpoint = {before}")
        with contextlib.suppress(DatabaseError):
            connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()


@contextlib.contextmanager
def write_step(connection: Connection) -> Iterator[Connection]:
    """One step of a larger write: inside the caller's transaction a savepoint (an error
    undoes this step alone and propagates; the caller's transaction decides the rest),
    otherwise a :func:`write_transaction` of its own."""
    if not connection.in_transaction:
        with write_transaction(connection):
            yield connection
        return
    connection.execute("SAVEPOINT write_step")
    try:
        yield connection
    except BaseException:
        connection.execute("ROLLBACK TO write_step")
        connection.execute("RELEASE write_step")
        raise
    connection.execute("RELEASE write_step")
