"""The catalogue of a SQLite vault (:class:`memtrove.db.catalog.Catalog`): ``sqlite_master``,
``PRAGMA table_info`` and ``foreign_key_list``, ``quick_check``, WAL checkpoints and the
PRAGMAs a pass changes for a while."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memtrove.db.catalog import Column, ForeignKey
    from memtrove.db.engine import Connection

__all__ = ["SqliteCatalog"]


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class SqliteCatalog:
    __slots__ = ("_connection",)

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    def has_table(self, name: str) -> bool:
        row = self._connection.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone()
        return row is not None

    def tables(self) -> list[str]:
        rows = self._connection.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ).fetchall()
        virtual = [
            str(name) for name, sql in rows if str(sql or "").upper().startswith("CREATE VIRTUAL")
        ]
        return [
            str(name)
            for name, _ in rows
            if str(name) not in virtual
            and not any(str(name).startswith(f"{table}_") for table in virtual)  # their shadows
        ]

    def columns(self, table: str) -> list[str]:
        rows = self._connection.execute(f"PRAGMA table_info({_quoted(table)})").fetchall()
        return [str(row[1]) for row in rows]

    def column_info(self, table: str) -> list[Column]:
        from memtrove.db.catalog import Column

        rows = self._connection.execute(f"PRAGMA table_info({_quoted(table)})").fetchall()
        return [Column(str(row[1]), str(row[2]), bool(row[3]), int(row[5])) for row in rows]

    def insertion_order(self, table: str) -> str:
        return f"{_quoted(table)}.rowid"

    def primary_key(self, table: str) -> list[str]:
        return [c.name for c in sorted(self.column_info(table), key=lambda c: c.key) if c.key]

    def foreign_keys(self, table: str) -> list[ForeignKey]:
        from memtrove.db.catalog import ForeignKey

        rows = self._connection.execute(f"PRAGMA foreign_key_list({_quoted(table)})").fetchall()
        return [ForeignKey(str(row[3]), str(row[2]), str(row[4])) for row in rows]

    def without_rowid(self, table: str) -> bool:
        """Whether ``table`` is a WITHOUT ROWID table (its rows named only by its key)."""
        row = self._connection.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
        return row is not None and "WITHOUT ROWID" in str(row[0]).upper()

    def integrity_problems(self) -> list[str]:
        rows = self._connection.execute("PRAGMA quick_check").fetchall()
        return [str(row[0]) for row in rows if str(row[0]) != "ok"]

    def checkpoint(self, *, truncate: bool = False) -> tuple[int, int, int]:
        mode = "TRUNCATE" if truncate else "PASSIVE"
        row = self._connection.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
        return (int(row[0]), int(row[1]), int(row[2])) if row else (0, 0, 0)

    def copy_to(self, target: Path | str) -> None:
        self._connection.execute("VACUUM INTO ?", (str(target),))

    def engine_check(self) -> tuple[str, str]:
        row = self._connection.execute("SELECT sqlite_version()").fetchone()
        return "ok", f"SQLite {row[0]} (FTS5, sqlite-vec)"

    def discard(self) -> None:
        """Nothing: a file copy is deleted with its folder."""

    def set_busy_timeout(self, milliseconds: int) -> None:
        self._connection.execute(f"PRAGMA busy_timeout = {int(milliseconds)}")

    def set_schema_version(self, version: int) -> None:
        """The number of migrations applied, kept in the file's header as well."""
        self._connection.execute(f"PRAGMA user_version = {int(version)}")

    @contextlib.contextmanager
    def large_cache(self, kib: int) -> Iterator[None]:
        connection = self._connection
        previous = int(connection.execute("PRAGMA cache_size").fetchone()[0])
        pages = int(connection.execute("PRAGMA page_size").fetchone()[0])
        # cache_size is pages when positive, KiB when negative.
        current_kib = previous * pages // 1024 if previous > 0 else -previous
        if current_kib < kib:
            connection.execute(f"PRAGMA cache_size = {-int(kib)}")
        try:
            yield
        finally:
            connection.execute(f"PRAGMA cache_size = {previous}")

    @contextlib.contextmanager
    def secure_delete(self) -> Iterator[None]:
        self._connection.execute("PRAGMA secure_delete = ON")
        try:
            yield
        finally:
            self._connection.execute("PRAGMA secure_delete = OFF")

    @contextlib.contextmanager
    def scan_memory_map(self, size: int) -> Iterator[None]:
        connection = self._connection
        previous = int(connection.execute("PRAGMA mmap_size").fetchone()[0])
        if previous < size:  # blobs read through a memory map: ~30 % faster
            connection.execute(f"PRAGMA mmap_size = {int(size)}")
        try:
            yield
        finally:
            if previous < size:
                connection.execute(f"PRAGMA mmap_size = {previous}")
