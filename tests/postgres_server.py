"""The PostgreSQL server the tests use: a schema of its own per test (dropped after it), on
the server ``MEMTROVE_TEST_POSTGRES_URL`` names (default: the machine's, database ``test``).

A test asking for PostgreSQL fails, naming the server and how to start it, when it cannot be
reached; ``MEMTROVE_TEST_POSTGRES=off`` skips those tests instead (and leaves the ``vault``
fixture on SQLite alone).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

# Read at import: the suite's fixtures clear MEMTROVE_* variables around each test.
SERVER = os.environ.get("MEMTROVE_TEST_POSTGRES_URL", "postgresql://root@127.0.0.1:5432/test")
OFF = os.environ.get("MEMTROVE_TEST_POSTGRES", "").strip().lower() in ("off", "0", "no")


def reachable() -> None:
    """Skip when PostgreSQL is switched off for the tests; fail when it cannot be reached."""
    import psycopg

    if OFF:
        pytest.skip("MEMTROVE_TEST_POSTGRES=off")
    try:
        psycopg.connect(SERVER, connect_timeout=5).close()
    except psycopg.Error as error:
        pytest.fail(
            f"the PostgreSQL server at {SERVER} is not reachable ({error}); start it with "
            "`pg_ctlcluster --skip-systemctl-redirect 15 main start`"
        )


@contextmanager
def fresh_schema() -> Iterator[str]:
    """The URL of a vault in a new schema, dropped on exit."""
    reachable()
    schema = f"memtrove_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    separator = "&" if "?" in SERVER else "?"
    try:
        yield f"{SERVER}{separator}schema={schema}"
    finally:
        import psycopg

        with psycopg.connect(SERVER, autocommit=True) as raw:
            raw.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


# -- vaults reused within a test process --------------------------------------------------
#
# Migrating a new schema costs ~0.5 s of DDL; the vault fixture runs hundreds of tests on
# PostgreSQL. So a test process keeps the schemas its tests used, emptied: every row taken
# out (children first), the rows the migrations seed put back (a new vector stamp drawn),
# the ids and sequences restarted, the vector index's tables dropped (a first vector makes
# them). A schema whose tables a test changed is dropped instead.

_POOL: list[str] = []
_SHAPE: dict[str, object] = {}  # the migrated schema's tables and columns, and seeded rows


def _admin() -> Any:
    import psycopg

    return psycopg.connect(SERVER, autocommit=True)


def _shape(raw: Any, schema: str) -> list[tuple[str, int]]:
    rows = raw.execute(
        "SELECT table_name, COUNT(*) FROM information_schema.columns WHERE table_schema = %s "
        "AND table_name NOT LIKE 'vector_index%%' GROUP BY table_name ORDER BY table_name",
        (schema,),
    ).fetchall()
    return [(str(name), int(count)) for name, count in rows]


def _children_first(raw: Any, schema: str, tables: list[str]) -> list[str]:
    rows = raw.execute(
        "SELECT cl.relname, pl.relname FROM pg_constraint c JOIN pg_class cl ON cl.oid = "
        "c.conrelid JOIN pg_class pl ON pl.oid = c.confrelid JOIN pg_namespace n ON n.oid = "
        "c.connamespace WHERE c.contype = 'f' AND n.nspname = %s",
        (schema,),
    ).fetchall()
    parents = {table: set() for table in tables}
    for child, parent in rows:
        if child in parents and parent in parents and child != parent:
            parents[child].add(parent)
    ordered: list[str] = []
    while len(ordered) < len(tables):
        ready = [t for t in tables if t not in ordered and parents[t] <= set(ordered)]
        ordered.extend(ready or [t for t in tables if t not in ordered])
    return list(reversed(ordered))


def _learn(raw: Any, schema: str) -> None:
    """Remember the migrated schema's shape and seeded rows (the first vault's)."""
    shape = _shape(raw, schema)
    tables = [name for name, _ in shape if name != "schema_migrations"]
    seeded = {}
    for table in tables:
        rows = raw.execute(f'SELECT * FROM "{schema}"."{table}"').fetchall()
        if rows:
            seeded[table] = rows
    _SHAPE.update(shape=shape, order=_children_first(raw, schema, tables), seeded=seeded)


def _emptied(raw: Any, schema: str) -> bool:
    """Empty a used vault schema back to a new vault; False when it cannot be reused."""
    if not _SHAPE:
        return False
    if _shape(raw, schema) != _SHAPE["shape"]:
        return False
    with raw.transaction():
        raw.execute(f'DROP TABLE IF EXISTS "{schema}".vector_index, "{schema}".vector_index_space')
        for table in _SHAPE["order"]:  # type: ignore[union-attr]
            raw.execute(f'DELETE FROM "{schema}"."{table}"')
        for table, rows in reversed(list(_SHAPE["seeded"].items())):  # type: ignore[union-attr]
            marks = ", ".join(["%s"] * len(rows[0]))
            raw.cursor().executemany(
                f'INSERT INTO "{schema}"."{table}" OVERRIDING SYSTEM VALUE VALUES ({marks})', rows
            )
        raw.execute(
            f'UPDATE "{schema}".vector_version SET version = ((floor(random() * 2147483648)'
            "::bigint << 32) | floor(random() * 4294967296)::bigint)"
        )
        for (sequence,) in raw.execute(
            "SELECT sequence_name FROM information_schema.sequences WHERE sequence_schema = %s",
            (schema,),
        ).fetchall():
            raw.execute(f'ALTER SEQUENCE "{schema}"."{sequence}" RESTART')
    return True


def _url(schema: str) -> str:
    return f"{SERVER}{'&' if '?' in SERVER else '?'}schema={schema}"


def _new_name() -> str:
    return f"memtrove_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"


def _first_vault() -> None:
    """Migrate this process's first vault schema and learn from it what a new one holds."""
    from memtrove.db.migrations import migrate
    from memtrove.db.postgres.connection import open_postgres

    schema = _new_name()
    connection = open_postgres(_url(schema))
    try:
        migrate(connection, label="test vault")  # type: ignore[arg-type]
    finally:
        connection.close()
    with _admin() as raw:
        _learn(raw, schema)
    _POOL.append(schema)
    atexit.register(_drop_pool)


def _drop_pool() -> None:
    with contextlib.suppress(Exception), _admin() as raw:
        for schema in _POOL:
            raw.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@contextmanager
def vault_schema() -> Iterator[str]:
    """The URL of a new, empty vault's schema (migrated, or emptied for reuse); kept for
    the next test of this process after it, when it can be."""
    reachable()
    if not _SHAPE:
        _first_vault()
    schema = _POOL.pop() if _POOL else _new_name()
    try:
        yield _url(schema)
    finally:
        with _admin() as raw:
            exists = raw.execute(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = %s "
                "AND table_name = 'schema_migrations'",
                (schema,),
            ).fetchone()
            keep = False
            if exists is not None:
                try:
                    keep = _emptied(raw, schema)
                except Exception:
                    keep = False
            if keep:
                _POOL.append(schema)
            else:
                raw.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
