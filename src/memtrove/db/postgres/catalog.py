"""The catalogue of a PostgreSQL vault (:class:`memtrove.db.catalog.Catalog`), read from
``information_schema`` and ``pg_catalog`` within the vault's schema.

Declared types are reported as the SQLite schema names them (``INTEGER``, ``REAL``,
``TEXT``, ``BLOB``), so that code checking values against a column's type (an import's
checks) reads both engines alike. Housekeeping the server does itself (checkpoints, the page
cache, memory maps) is a no-op here; a copy of the database is ``pg_dump``'s work.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from memtrove.db.catalog import Column, ForeignKey
from memtrove.db.postgres.copying import copy_schema, quoted, schema_tables
from memtrove.errors import VaultOpenError
from memtrove.locations import url_schema

__all__ = ["INDEX_TABLE_PREFIXES", "INSERTION_ORDER", "PostgresCatalog"]

log = logging.getLogger("memtrove.postgres")

INSERTION_ORDER = "row_seq"  # the identity column of the tables whose key does not follow insertion

# Tables the engine keeps for its text and vector indexes (not the vault's own rows).
INDEX_TABLE_PREFIXES = ("text_", "vector_index")
_TYPES = {
    "bigint": "INTEGER",
    "integer": "INTEGER",
    "smallint": "INTEGER",
    "double precision": "REAL",
    "real": "REAL",
    "text": "TEXT",
    "character varying": "TEXT",
    "bytea": "BLOB",
}


class _Schema(Protocol):
    """What the catalogue uses of :class:`memtrove.db.postgres.connection.PostgresConnection`."""

    schema: str

    def execute(self, sql: str, parameters: Any = ..., /) -> Any: ...

    def transaction(self) -> contextlib.AbstractContextManager[Any]: ...


class PostgresCatalog:
    __slots__ = ("_connection",)

    def __init__(self, connection: _Schema) -> None:
        self._connection = connection

    def schema_exists(self) -> bool:
        row = self._connection.execute(
            "SELECT 1 FROM information_schema.schemata WHERE schema_name = ?",
            (self._connection.schema,),
        ).fetchone()
        return row is not None

    def has_table(self, name: str) -> bool:
        row = self._connection.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
            (self._connection.schema, name),
        ).fetchone()
        return row is not None

    def tables(self) -> list[str]:
        every = schema_tables(self._connection, self._connection.schema)
        return [table for table in every if not table.startswith(INDEX_TABLE_PREFIXES)]

    def column_info(self, table: str) -> list[Column]:
        rows = self._connection.execute(
            "SELECT c.column_name, c.data_type, c.is_nullable, "
            "COALESCE(array_position(k.key, c.ordinal_position::smallint), 0) "
            "FROM information_schema.columns c LEFT JOIN ("
            "  SELECT con.conkey AS key FROM pg_constraint con "
            "  JOIN pg_class t ON t.oid = con.conrelid "
            "  JOIN pg_namespace n ON n.oid = t.relnamespace "
            "  WHERE con.contype = 'p' AND n.nspname = ? AND t.relname = ?"
            ") k ON TRUE "
            "WHERE c.table_schema = ? AND c.table_name = ? ORDER BY c.ordinal_position",
            (self._connection.schema, table, self._connection.schema, table),
        ).fetchall()
        return [
            Column(str(name), _TYPES.get(str(kind), str(kind).upper()), nullable == "NO", int(key))
            for name, kind, nullable, key in rows
            if name != INSERTION_ORDER  # the engine's own, not the vault's data
        ]

    def columns(self, table: str) -> list[str]:
        return [column.name for column in self.column_info(table)]

    def primary_key(self, table: str) -> list[str]:
        return [c.name for c in sorted(self.column_info(table), key=lambda c: c.key) if c.key]

    def foreign_keys(self, table: str) -> list[ForeignKey]:
        rows = self._connection.execute(
            "SELECT a.attname, target.relname, b.attname "
            "FROM pg_constraint con "
            "JOIN pg_class source ON source.oid = con.conrelid "
            "JOIN pg_namespace n ON n.oid = source.relnamespace "
            "JOIN pg_class target ON target.oid = con.confrelid "
            "CROSS JOIN LATERAL unnest(con.conkey, con.confkey) AS k(source_key, target_key) "
            "JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.source_key "
            "JOIN pg_attribute b ON b.attrelid = con.confrelid AND b.attnum = k.target_key "
            "WHERE con.contype = 'f' AND n.nspname = ? AND source.relname = ? "
            "ORDER BY con.conname, a.attnum",
            (self._connection.schema, table),
        ).fetchall()
        return [ForeignKey(str(column), str(target), str(to)) for column, target, to in rows]

    def insertion_order(self, table: str) -> str:
        """The table's ``row_seq`` identity column (the baseline gives one to each table
        whose key does not follow insertion)."""
        return f'"{table}".{INSERTION_ORDER}'

    def integrity_problems(self) -> list[str]:
        """The server checks its own pages; what can be checked from here is that every
        table of the vault answers."""
        problems: list[str] = []
        for table in self.tables():
            try:
                self._connection.execute(f'SELECT 1 FROM "{table}" LIMIT 1').fetchone()
            except Exception as error:  # one line per table that does not answer
                problems.append(f"{table}: {error}")
        return problems

    def checkpoint(self, *, truncate: bool = False) -> tuple[int, int, int]:
        return (0, 0, 0)  # the server checkpoints its own log

    def copy_to(self, target: Path | str) -> None:
        """Into another schema of this database, named by a vault URL (its tables made by
        opening it as a vault): :func:`memtrove.db.postgres.copying.copy_schema`."""
        if isinstance(target, Path) or not str(target).startswith(("postgresql:", "postgres:")):
            raise VaultOpenError(
                f"a PostgreSQL vault is copied with pg_dump (schema {self._connection.schema!r}), "
                f"or exported with `memtrove export`; not to the file {target}"
            )
        copy_schema(self._connection, url_schema(str(target)).lower())

    def engine_check(self) -> tuple[str, str]:
        import time

        version = self._connection.execute("SHOW server_version").fetchone()[0]
        extension = self._connection.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
        timings = []
        for _ in range(5):
            started = time.perf_counter()
            self._connection.execute("SELECT 1").fetchone()
            timings.append(time.perf_counter() - started)
        latency = sorted(timings)[2] * 1000
        rights = self._connection.execute(
            "SELECT has_schema_privilege(current_user, ?, 'USAGE'), "
            "has_schema_privilege(current_user, ?, 'CREATE'), current_user",
            (self._connection.schema, self._connection.schema),
        ).fetchone()
        vectors = f"pgvector {extension[0]}" if extension else "no pgvector (vectors in memory)"
        line = (
            f"PostgreSQL {str(version).split()[0]}, {vectors}, round trip "
            f"{latency:.2f} ms, role {rights[2]}"
        )
        if not (rights[0] and rights[1]):
            return "fail", f"{line}: cannot use and create in schema {self._connection.schema!r}"
        if latency > 20:
            return "warn", f"{line}: slow round trips (every search makes a few)"
        return "ok", f"{line}, may create in schema {self._connection.schema!r}"

    def discard(self) -> None:
        """Drop the whole vault (its schema): for a scratch copy."""
        self._connection.execute(f'DROP SCHEMA IF EXISTS "{self._connection.schema}" CASCADE')

    def set_busy_timeout(self, milliseconds: int) -> None:
        self._connection.execute(f"SET lock_timeout = {int(milliseconds)}")

    def set_schema_version(self, version: int) -> None:
        self._connection.execute(
            f"COMMENT ON SCHEMA \"{self._connection.schema}\" IS 'memtrove schema {int(version)}'"
        )

    def large_cache(self, kib: int) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()  # the server's shared buffers serve every client

    @contextlib.contextmanager
    def secure_delete(self) -> Iterator[None]:
        """After the block, ``VACUUM FULL`` rewrites every table of the vault, so that the
        deleted rows' bytes are gone from the table files (the server's write-ahead log and
        its backups are the server's to manage). A transaction another session opened before
        the deletes still sees those rows, and ``VACUUM FULL`` keeps what a session can see: so
        it waits (a bounded time) for such transactions in this database to end first."""
        yield
        _await_older_transactions(self._connection)
        schema = self._connection.schema
        for table in schema_tables(self._connection, schema):
            self._connection.execute(f"VACUUM FULL {quoted(schema)}.{quoted(table)}")

    @contextlib.contextmanager
    def scan_memory_map(self, size: int) -> Iterator[None]:
        yield


# How long secure_delete waits for transactions older than its deletes (they keep the rows).
OLDER_TRANSACTIONS_WAIT = 30.0


def _await_older_transactions(connection: Any) -> None:
    started = connection.execute("SELECT clock_timestamp()").fetchone()[0]
    deadline = time.monotonic() + OLDER_TRANSACTIONS_WAIT
    while True:
        row = connection.execute(
            "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL AND xact_start < ?",
            (started,),
        ).fetchone()
        if not row or not row[0]:
            return
        if time.monotonic() >= deadline:
            log.warning(
                "%d older transaction(s) still open in this database: the deleted rows they "
                "can see stay in the table files until the next VACUUM FULL",
                row[0],
            )
            return
        time.sleep(0.1)
