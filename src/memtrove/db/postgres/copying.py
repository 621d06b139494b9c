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

__all__ = ["copy_schema"]


class PostgresConnection(Protocol):
    """What the copy uses of :class:`memtrove.db.postgres.connection.PostgresConnection`."""

    schema: str

    def execute(self, sql: str, parameters: Any = ..., /) -> Any: ...

    def transaction(self) -> AbstractContextManager[Any]: ...


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _tables(connection: PostgresConnection, schema: str) -> list[str]:
    rows = connection.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = ? "
        "AND table_type = 'BASE TABLE' ORDER BY table_name",
        (schema,),
    ).fetchall()
    return [str(row[0]) for row in rows]


def _parents_first(connection: PostgresConnection, schema: str, tables: list[str]) -> list[str]:
    """``tables`` ordered so that a table comes after every table it refers to."""
    rows = connection.execute(
        "SELECT c.conrelid::regclass::text, c.confrelid::regclass::text FROM pg_constraint c "
        "JOIN pg_namespace n ON n.oid = c.connamespace WHERE c.contype = 'f' AND n.nspname = ?",
        (schema,),
    ).fetchall()
    parents: dict[str, set[str]] = {table: set() for table in tables}
    for child, parent in rows:
        child_name, parent_name = str(child).split(".")[-1].strip('"'), str(parent)
        parent_name = parent_name.split(".")[-1].strip('"')
        if child_name in parents and parent_name != child_name and parent_name in parents:
            parents[child_name].add(parent_name)
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


def copy_schema(connection: PostgresConnection, target: str) -> None:
    """Every row of the vault's schema into schema ``target`` (a migrated vault)."""
    source = connection.schema
    src, dst = _quoted(source), _quoted(target)
    tables = _tables(connection, source)
    present = set(_tables(connection, target))
    with connection.transaction():
        for table in tables:
            if table not in present:
                connection.execute(
                    f"CREATE TABLE {dst}.{_quoted(table)} "
                    f"(LIKE {src}.{_quoted(table)} INCLUDING ALL)"
                )
        ordered = _parents_first(connection, source, tables)
        for table in ordered:
            connection.execute(f"ALTER TABLE {dst}.{_quoted(table)} DISABLE TRIGGER USER")
        for table in reversed(ordered):
            connection.execute(f"DELETE FROM {dst}.{_quoted(table)}")
        for table in ordered:
            connection.execute(
                f"INSERT INTO {dst}.{_quoted(table)} OVERRIDING SYSTEM VALUE "
                f"SELECT * FROM {src}.{_quoted(table)}"
            )
        for table in ordered:
            connection.execute(f"ALTER TABLE {dst}.{_quoted(table)} ENABLE TRIGGER USER")
        sequences = connection.execute(
            "SELECT sequence_name FROM information_schema.sequences WHERE sequence_schema = ?",
            (source,),
        ).fetchall()
        for (sequence,) in sequences:
            name = _quoted(str(sequence))
            row = connection.execute(f"SELECT last_value, is_called FROM {src}.{name}").fetchone()
            connection.execute(
                "SELECT setval(?::regclass, ?, ?)",
                (f"{dst}.{name}", int(row[0]), bool(row[1])),
            )
