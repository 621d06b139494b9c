"""The storage seam: what every module that runs a statement is given.

A vault's database is one object, the engine's connection (:data:`Connection`). Modules
write portable SQL with ``?`` placeholders and call ``execute``/``executemany`` on it; the
engine behind it owns its dialect, placeholders, driver errors and transactions
(:meth:`Connection.transaction`, :meth:`Connection.savepoint`,
:meth:`Connection.write_unless_locked`) and how a new row's id comes back
(:meth:`Connection.insert`), and it gives the three parts where engines really
differ as interfaces: ``text`` (:class:`memtrove.db.text_index.TextIndex`, BM25 full text),
``vectors`` (:class:`memtrove.db.vector_index.VectorIndex`, embeddings and k-nearest) and
``catalog`` (:class:`memtrove.db.catalog.Catalog`, tables, columns and maintenance).

The SQLite engine lives in :mod:`memtrove.db.sqlite`; no other module writes SQL only
SQLite accepts (``tests/test_architecture.py`` checks it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from memtrove.db.catalog import Catalog
    from memtrove.db.text_index import TextIndex
    from memtrove.db.vector_index import VectorIndex

__all__ = ["Connection", "Cursor"]


class Cursor(Protocol):
    """The rows of one statement (DB-API)."""

    @property
    def rowcount(self) -> int: ...

    @property
    def description(self) -> Any: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def fetchmany(self, size: int = ..., /) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """One open vault database (autocommit outside :meth:`transaction`)."""

    dialect: str

    def execute(self, sql: str, parameters: Any = ..., /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Cursor: ...

    def insert(self, sql: str, parameters: Any = ..., /, *, key: str = "id") -> int | None:
        """Run ``sql``, an INSERT of one row: the new row's ``key`` (an integer id), or None
        when it inserted nothing (``ON CONFLICT DO NOTHING``)."""
        ...

    def insert_rows(
        self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
    ) -> None:
        """New rows of ``table`` (no conflict expected): the fastest way the engine has
        (``COPY`` on a server)."""
        ...

    @property
    def in_transaction(self) -> bool: ...

    def close(self) -> None: ...

    def transaction(
        self, *, retry_seconds: float | None = None
    ) -> AbstractContextManager[Connection]: ...

    def savepoint(self) -> AbstractContextManager[Connection]: ...

    def read_snapshot(self) -> AbstractContextManager[Connection]: ...

    def write_unless_locked(self, action: Callable[[], object]) -> bool: ...

    def bulk_writes(self) -> AbstractContextManager[None]: ...

    def clock(self) -> datetime:
        """The database's time now (UTC, aware): what every host sharing the vault reads
        alike, for expiries written by one host and checked by another."""
        ...

    @property
    def text(self) -> TextIndex: ...

    @property
    def vectors(self) -> VectorIndex: ...

    @property
    def catalog(self) -> Catalog: ...
