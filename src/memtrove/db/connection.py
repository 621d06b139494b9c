"""Opening a vault's database and the write helpers every module uses, whatever the engine.

:data:`Connection` is the seam of :mod:`memtrove.db.engine`; the functions here hand each
write to the connection's engine (SQLite, :mod:`memtrove.db.sqlite.connection`, for a vault
file; PostgreSQL, :mod:`memtrove.db.postgres.connection`, for a ``postgresql://`` URL, see
:func:`is_server_url`):
:func:`write_transaction` takes the write lock up front, :func:`write_step` is a savepoint
inside a caller's transaction (or a transaction of its own), :func:`write_unless_locked`
skips a write the vault is too busy for, :func:`fewer_checkpoints` batches a bulk write.
``DatabaseError`` (and its ``IntegrityError`` and ``OperationalError``) are the errors an
engine raises for a failed statement; :func:`is_locked_error` tells a busy vault from the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from memtrove.db.engine import Connection, Cursor
from memtrove.db.sqlite.connection import (
    BULK_CHECKPOINT_PAGES,
    DEFAULT_BUSY_TIMEOUT_MS,
    DatabaseError,
    IntegrityError,
    OperationalError,
    is_locked_error,
)
from memtrove.db.sqlite.connection import open_connection as _open_sqlite
from memtrove.locations import is_server_url

__all__ = [
    "BULK_CHECKPOINT_PAGES",
    "DEFAULT_BUSY_TIMEOUT_MS",
    "Connection",
    "Cursor",
    "DatabaseError",
    "IntegrityError",
    "OperationalError",
    "fewer_checkpoints",
    "is_locked_error",
    "is_server_url",
    "open_connection",
    "write_step",
    "write_transaction",
    "write_unless_locked",
]


def open_connection(
    location: str | Path, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS, *, create: bool = True
) -> Connection:
    """The vault database at ``location``, opened with its engine's settings: a
    ``postgresql://`` (or ``postgres://``) URL on PostgreSQL (its schema made when missing
    and ``create``, else VaultNotFoundError), anything else the SQLite file it names (made
    when missing: :mod:`memtrove.vault.opening` checks first)."""
    if is_server_url(location):
        from memtrove.db.postgres.connection import open_postgres  # psycopg: only for a URL

        return open_postgres(str(location).strip(), create=create, busy_timeout_ms=busy_timeout_ms)
    return _open_sqlite(Path(location), busy_timeout_ms)


def write_transaction(
    connection: Connection, *, retry_seconds: float | None = None
) -> AbstractContextManager[Connection]:
    """One write transaction, committed on success and rolled back on error; VaultBusyError
    when the lock stays taken past ``retry_seconds`` (30 s by default, 0: one wait)."""
    return connection.transaction(retry_seconds=retry_seconds)


def write_step(connection: Connection) -> AbstractContextManager[Connection]:
    """One step of a larger write: a savepoint inside the caller's transaction, otherwise a
    transaction of its own."""
    return connection.savepoint()


def write_unless_locked(connection: Connection, action: Callable[[], object]) -> bool:
    """Run ``action`` in one transaction without waiting for the lock: False, with nothing
    written, when the vault is busy."""
    return connection.write_unless_locked(action)


def fewer_checkpoints(connection: Connection) -> AbstractContextManager[None]:
    """Around many write transactions in a row (a first index): the engine's bulk setting."""
    return connection.bulk_writes()
