"""BM25 totals of a contentless FTS5 table, rewritten from its per-row sizes.

FTS5 keeps, for ``bm25()``, one record of totals (rows, tokens per column: id 1 of
``<table>_data``). A ``contentless_delete`` table cannot subtract a deleted row's tokens, so
every delete (an edited file is a delete and an insert) leaves the totals inflated and the
ranking drifts as a vault is used. The per-row sizes (``<table>_docsize``) stay exact, so
the totals can be recomputed from them: :func:`repair_fts_totals`. Since a delete never
lowers the recorded row count either, comparing it with the number of size rows tells in
microseconds whether a recount is due (:func:`fts_totals_drifted`, :func:`settle_fts_totals`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memtrove.db.varints import read_varints, write_varint

if TYPE_CHECKING:
    from memtrove.db.engine import Connection

__all__ = [
    "fts_totals_drifted",
    "read_totals_record",
    "repair_fts_totals",
    "settle_fts_totals",
    "write_totals_record",
]


def repair_fts_totals(connection: Connection, tables: Sequence[str], columns: int = 3) -> None:
    """Rewrite each FTS5 table's BM25 totals (id 1 of ``<table>_data``: row count, tokens
    per column) from its ``<table>_docsize`` rows, in one transaction of its own."""
    with connection.transaction():
        for table in tables:
            rows = 0
            totals = [0] * columns
            for (size,) in connection.execute(f"SELECT sz FROM {table}_docsize"):
                rows += 1
                for column, tokens in enumerate(read_varints(bytes(size))[:columns]):
                    totals[column] += tokens
            record = write_varint(rows) + b"".join(write_varint(total) for total in totals)
            connection.execute(f"UPDATE {table}_data SET block = ? WHERE id = 1", (record,))


def fts_totals_drifted(connection: Connection, table: str) -> bool:
    """True when ``table``'s recorded row count differs from its rows (a delete happened)."""
    record = connection.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    counted = connection.execute(f"SELECT COUNT(*) FROM {table}_docsize").fetchone()
    recorded = read_varints(bytes(record[0]))[:1] if record and record[0] else [0]
    return int(counted[0]) != (recorded[0] if recorded else 0)


def settle_fts_totals(connection: Connection, tables: Sequence[str], columns: int = 3) -> bool:
    """Recount the totals of the tables that drifted; True when any was recounted."""
    drifted = [table for table in tables if fts_totals_drifted(connection, table)]
    if drifted:
        repair_fts_totals(connection, drifted, columns)
    return bool(drifted)


def read_totals_record(connection: Connection, table: str = "documents_fts") -> bytes | None:
    """``table``'s totals record as stored (None when it has none yet)."""
    row = connection.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    return None if row is None or row[0] is None else bytes(row[0])


def write_totals_record(
    connection: Connection, record: bytes, table: str = "documents_fts"
) -> None:
    """Put back a totals record read by :func:`read_totals_record` (the caller's transaction).

    FTS5 holds the totals of the rows written in a transaction in memory and writes them at
    its next sync (a savepoint, or the commit): a savepoint first makes it write them now, so
    that the record written here is the one that stays."""
    connection.execute("SAVEPOINT fts_totals")
    connection.execute("RELEASE fts_totals")
    connection.execute(f"UPDATE {table}_data SET block = ? WHERE id = 1", (record,))
