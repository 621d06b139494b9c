"""A copy of a PostgreSQL vault in another schema of the same database (a scratch copy, for
work that must leave no trace in the vault: an evaluation's session rows).

The target schema holds the vault's migrated tables (opening it as a vault made them); every
table's rows are replaced by the source's, parents before children (foreign keys), with the
target's own triggers off meanwhile (the rows come as they are, stamps and all) and its
sequences moved past the copied values. Tables only the source has (the vector index, made
when the first vector fixed its size) are made alike first. One transaction: the copy is
whole or absent.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol

__all__ = ["copy_schema", "quoted", "schema_tables"]


class _Connection(Protocol):
    """What the copy uses of :class:`memtrove.db.postgres.connection.PostgresConnection`."""

    schema: str

    def execute(self, sql: str, parameters: Any = ..., /) -> Any: ...

    def transaction(self) -> AbstractContextManager[Any]: ...


def quoted(name: str) -> str:
    """``name`` as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def schema_tables(connection: Any, schema: str) -> list[str]:
    """The tables of ``schema``, by name."""
    rows = connection.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = ? "
        "AND table_type = 'BASE TABLE' ORDER BY table_name",
        (schema,),
    ).fetchall()
    return [str(row[0]) for row in rows]


def _parents_first(connection: _Connection, schema: str, tables: list[str]) -> list[str]:
    """``tables`` ordered so that a table comes after every table it refers to."""
    rows = connection.execute(
        "SELECT child.relname, parent.relname FROM pg_constraint c "
        "JOIN pg_class child ON child.oid = c.conrelid "
        "JOIN pg_class parent ON parent.oid = c.confrelid "
        "JOIN pg_namespace n ON n.oid = c.connamespace WHERE c.contype = 'f' AND n.nspname = ?",
        (schema,),
    ).fetchall()
    parents: dict[str, set[str]] = {table: set() for table in tables}
    for child, parent in rows:
        if child in parents and parent in parents and parent != child:
            parents[child].add(parent)
    ordered: list[str] = []
    placed: set[str] = set()
    while len(ordered) < len(tables):
        ready = [t for t in tables if t not in placed and parents[t] <= placed]
        if not ready:  # a cycle: the rest in name order (none in the vault's schema)
            ready = [t for t in tables if t not in placed]
        for table in ready:
            ordered.append(table)
            placed.add(table)
    return ordered


def copy_schema(connection: _Connection, target: str) -> None:
    """Every row of the vault's schema into schema ``target`` (a migrated vault)."""
    source = connection.schema
    src, dst = quoted(source), quoted(target)
    tables = schema_tables(connection, source)
    present = set(schema_tables(connection, target))
    with connection.transaction():
        for table in tables:
            if table not in present:
                connection.execute(
                    f"CREATE TABLE {dst}.{quoted(table)} (LIKE {src}.{quoted(table)} INCLUDING ALL)"
                )
        ordered = _parents_first(connection, source, tables)
        for table in ordered:
            connection.execute(f"ALTER TABLE {dst}.{quoted(table)} DISABLE TRIGGER USER")
        for table in reversed(ordered):
            connection.execute(f"DELETE FROM {dst}.{quoted(table)}")
        for table in ordered:
            connection.execute(
                f"INSERT INTO {dst}.{quoted(table)} OVERRIDING SYSTEM VALUE "
                f"SELECT * FROM {src}.{quoted(table)}"
            )
        for table in ordered:
            connection.execute(f"ALTER TABLE {dst}.{quoted(table)} ENABLE TRIGGER USER")
        sequences = connection.execute(
            "SELECT sequence_name FROM information_schema.sequences WHERE sequence_schema = ?",
            (source,),
        ).fetchall()
        for (sequence,) in sequences:
            name = quoted(str(sequence))
            row = connection.execute(f"SELECT last_value, is_called FROM {src}.{name}").fetchone()
            connection.execute(
                "SELECT setval(?::regclass, ?, ?)",
                (f"{dst}.{name}", int(row[0]), bool(row[1])),
            )
