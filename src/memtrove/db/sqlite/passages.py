"""The passage index of a SQLite vault (:mod:`memtrove.db.passages`): the FTS5 table
``passages_fts`` (body only, Porter stems, contentless).

Rows are keyed ``doc_id * STRIDE + n`` (the n-th passage), so a document's passages are one
rowid range: written beside its ``documents_fts`` row and deleted with it. A document keeps
at most :data:`memtrove.db.text_index.MAX_PASSAGES` (``STRIDE - 1``) passages.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from memtrove.db.text_index import MAX_PASSAGES
from memtrove.text import segment_cjk

if TYPE_CHECKING:
    from memtrove.db.engine import Connection

__all__ = ["STRIDE", "add_passages", "clear_passages", "remove_passages", "search_passages"]

STRIDE = MAX_PASSAGES + 1  # 1 << 16
_INSERT = "INSERT INTO passages_fts (rowid, body) VALUES (?, ?)"


def add_passages(connection: Connection, doc_id: int, texts: Sequence[str]) -> None:
    base = doc_id * STRIDE
    connection.executemany(
        _INSERT, [(base + index, segment_cjk(text)) for index, text in enumerate(texts)]
    )


def remove_passages(connection: Connection, doc_ids: Iterable[int]) -> None:
    for doc_id in doc_ids:
        base = doc_id * STRIDE
        connection.execute(
            "DELETE FROM passages_fts WHERE rowid BETWEEN ? AND ?", (base, base + STRIDE - 1)
        )


def clear_passages(connection: Connection) -> None:
    connection.execute("INSERT INTO passages_fts (passages_fts) VALUES ('delete-all')")


def search_passages(
    connection: Connection,
    match: str,
    limit: int,
    conditions: Sequence[str] = (),
    params: Sequence[object] = (),
) -> list[tuple[int, float, int]]:
    """(doc id, ``|bm25|`` of its best passage, that passage's number), best first, for at
    most ``limit`` documents matching the FTS5 expression ``match``. ``conditions`` (SQL
    over ``documents d``, with ``params``) keep only the documents the caller's filters
    allow, inside the query. (With one ``MIN()``, SQLite reads the bare rowid from the row
    holding the minimum: the best passage.)"""
    if limit <= 0:
        return []
    join = where = ""
    if conditions:
        join = f" JOIN documents d ON d.id = passages_fts.rowid / {STRIDE}"
        where = " AND " + " AND ".join(conditions)
    rows = connection.execute(
        f"SELECT passages_fts.rowid / {STRIDE} AS doc, MIN(rank), "
        f"passages_fts.rowid % {STRIDE} FROM passages_fts{join} "
        f"WHERE passages_fts MATCH ?{where} GROUP BY doc ORDER BY 2, 1 LIMIT ?",
        (match, *params, int(limit)),
    ).fetchall()
    return [(int(doc), abs(float(rank)), int(index)) for doc, rank, index in rows]
