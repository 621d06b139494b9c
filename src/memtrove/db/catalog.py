"""The catalogue and housekeeping of a vault database, as every engine answers them.

Contract: :class:`Catalog` (``connection.catalog``) names the tables and their columns and
keys, checks the database's integrity, checkpoints its log, and changes settings for a
while (a larger cache for a bulk pass, secure deletion while secrets are purged). The
SQLite answers are :class:`memtrove.db.sqlite.catalog.SqliteCatalog`.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import NamedTuple, Protocol

__all__ = ["Catalog", "Column", "ForeignKey"]


class Column(NamedTuple):
    """A column as its table declares it: ``key`` is its place in the primary key (0: not
    part of it)."""

    name: str
    declared: str
    not_null: bool
    key: int


class ForeignKey(NamedTuple):
    """``column`` of a table refers to ``target_column`` of ``target``."""

    column: str
    target: str
    target_column: str


class Catalog(Protocol):
    def has_table(self, name: str) -> bool:
        """Whether a table (or full-text or vector index table) called ``name`` exists."""
        ...

    def tables(self) -> list[str]:
        """The vault's own tables by name (not the tables an engine keeps for its text and
        vector indexes)."""
        ...

    def columns(self, table: str) -> list[str]:
        """``table``'s columns in order (empty for a table that does not exist)."""
        ...

    def column_info(self, table: str) -> list[Column]:
        """``table``'s columns in order with their declared types (empty for no table)."""
        ...

    def insertion_order(self, table: str) -> str:
        """A SQL expression over ``table``'s rows (unaliased) that orders them as they were
        inserted, for tables whose key does not (SQLite: the rowid; another engine: a
        sequence column of its schema)."""
        ...

    def primary_key(self, table: str) -> list[str]:
        """``table``'s primary-key columns in key order (empty when it has none)."""
        ...

    def foreign_keys(self, table: str) -> list[ForeignKey]:
        """The references ``table`` makes to other tables."""
        ...

    def integrity_problems(self) -> list[str]:
        """The engine's quick integrity check: empty when the database is sound."""
        ...

    def checkpoint(self, *, truncate: bool = False) -> tuple[int, int, int]:
        """Move the write-ahead log into the database without waiting for anyone: (busy,
        log frames, frames moved); ``truncate`` also empties the log file."""
        ...

    def copy_to(self, target: Path | str) -> None:
        """A consistent copy of the whole database at ``target``: a new file (SQLite), or a
        new vault's schema named by its URL (PostgreSQL)."""
        ...

    def engine_check(self) -> tuple[str, str]:
        """("ok", "warn" or "fail", one line) on the engine itself, for ``doctor``: its
        version and, for a server, the vector extension, a round trip's latency and the
        role's rights on the vault's schema."""
        ...

    def discard(self) -> None:
        """Remove what a scratch copy made on a server (a file copy is its folder's)."""
        ...

    def set_busy_timeout(self, milliseconds: int) -> None:
        """How long a statement waits for another writer before failing."""
        ...

    def set_schema_version(self, version: int) -> None:
        """Record that ``version`` migrations are applied where the engine keeps it."""
        ...

    def large_cache(self, kib: int) -> AbstractContextManager[None]:
        """At least ``kib`` KiB of page cache while the block runs (then as before)."""
        ...

    def secure_delete(self) -> AbstractContextManager[None]:
        """Deleted content overwritten on disk while the block runs."""
        ...

    def scan_memory_map(self, size: int) -> AbstractContextManager[None]:
        """Read the file through a memory map of ``size`` bytes while the block runs."""
        ...
