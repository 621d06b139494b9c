"""The passage index: BM25 over the sections of each searchable document.

A long design record is one row of ``documents_fts``, so BM25's length normalisation
buries it under short pages that mention the same words once: asked "can we raise a
running pod's CPU limit without restarting it?", the 140 KB record that answers it ranks
below a page on PID limits. Scored by its best section instead, it leads. ``passages_fts``
holds the sections, lists and code blocks of each long document (``LONG_CHARS`` or more)
that has several (the ``fragments`` of its body, the same pieces the vectors embed). A
short note is its own passage and needs no row: on the composite example set, scoring
short multi-section notes by a section broke near-ties the composite signals should decide
(7 of 35 first places lost), while records of 4,000 characters and more gained. Retrieval scores a long document by its best passage
and knows which passage that was.

Rows are keyed ``doc_id * STRIDE + n`` (the n-th passage), so a document's passages are one
rowid range: written beside its ``documents_fts`` row and deleted with it. A document
with more than ``STRIDE - 1`` passages keeps its first ones. This module owns the table.
"""

from __future__ import annotations

from collections.abc import Sequence

from memtrove.db.connection import Connection
from memtrove.text import segment_cjk

__all__ = [
    "LONG_CHARS",
    "PASSAGE_TYPES",
    "STRIDE",
    "drop_passages",
    "passage_spans",
    "rebuild_passages",
    "search_passages",
    "write_passages",
]

STRIDE = 1 << 16
LONG_CHARS = 4000  # about 700 words: shorter documents are scored whole
PASSAGE_TYPES = ("section", "list", "code")
_SPANS = (
    "SELECT start_offset, end_offset FROM fragments WHERE hash = ? "
    "AND fragment_type IN ('section', 'list', 'code') ORDER BY seq"
)
_INSERT = "INSERT INTO passages_fts (rowid, body) VALUES (?, ?)"


def passage_spans(connection: Connection, body_hash: str, length: int) -> list[tuple[int, int]]:
    """The (start, end) offsets of a stored body's passages: its section, list and code
    fragments, else the whole body."""
    spans = [
        (int(start), int(end))
        for start, end in connection.execute(_SPANS, (body_hash,))
        if int(end) > int(start)
    ]
    return spans[: STRIDE - 1] or [(0, length)]


def write_passages(
    connection: Connection, doc_id: int, body_hash: str, text: str | None = None
) -> None:
    """Index the passages of document ``doc_id``, whose stored body is ``body_hash``
    (``text`` when the caller holds it; its fragments must be stored already), when it
    is long enough to have any."""
    if text is None:
        row = connection.execute("SELECT doc FROM content WHERE hash = ?", (body_hash,)).fetchone()
        if row is None:
            return
        text = str(row[0])
    if len(text) < LONG_CHARS:
        return
    spans = passage_spans(connection, body_hash, len(text))
    if len(spans) < 2:  # one passage is the document itself: its BM25 row says it all
        return
    base = doc_id * STRIDE
    connection.executemany(
        _INSERT,
        [(base + index, segment_cjk(text[start:end])) for index, (start, end) in enumerate(spans)],
    )


def drop_passages(connection: Connection, doc_id: int) -> None:
    """Take document ``doc_id``'s passages out of the index (none stored is fine)."""
    base = doc_id * STRIDE
    connection.execute(
        "DELETE FROM passages_fts WHERE rowid BETWEEN ? AND ?", (base, base + STRIDE - 1)
    )


def rebuild_passages(connection: Connection) -> int:
    """Index the passages of every document in ``documents_fts`` from scratch (rows
    already there are dropped first); returns how many documents were read."""
    connection.execute("INSERT INTO passages_fts (passages_fts) VALUES ('delete-all')")
    # ids first, each body read on its own: a large vault's text is never held at once
    rows = connection.execute(
        "SELECT d.id, d.hash FROM documents_fts f JOIN documents d ON d.id = f.rowid"
    ).fetchall()
    for doc_id, body_hash in rows:
        write_passages(connection, int(doc_id), str(body_hash))
    return len(rows)


def search_passages(
    connection: Connection,
    match: str,
    limit: int,
    conditions: Sequence[str] = (),
    params: Sequence[object] = (),
) -> list[tuple[int, float, int]]:
    """(doc id, ``|bm25|`` of its best passage, that passage's number), best first, for at
    most ``limit`` documents. ``conditions`` (SQL over ``documents d``, with ``params``)
    keep only the documents the caller's filters allow, inside the query. (With one
    ``MIN()``, SQLite reads the bare rowid from the row holding the minimum: the best
    passage.)"""
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
