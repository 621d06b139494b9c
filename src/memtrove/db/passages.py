"""The passage index: BM25 over the sections of each searchable document.

A long design record is one row of the ``documents`` text index, so BM25's length
normalisation buries it under short pages that mention the same words once: asked "can we
raise a running pod's CPU limit without restarting it?", the 140 KB record that answers it
ranks below a page on PID limits. Scored by its best section instead, it leads. The
``passages`` text index (``connection.text``, :class:`memtrove.db.text_index.TextIndex`)
holds the sections, lists and code blocks of each long document (``LONG_CHARS`` or more)
that has several (the ``fragments`` of its body, the same pieces the vectors embed). A
short note is its own passage and needs no row: on the composite example set, scoring
short multi-section notes by a section broke near-ties the composite signals should decide
(7 of 35 first places lost), while records of 4,000 characters and more gained. Retrieval scores a long document by its best passage
and knows which passage that was.

A document's passages are written beside its ``documents`` row and taken out with it. A
document with more than ``MAX_PASSAGES`` passages keeps its first ones. This module cuts
the passages; the engine stores them (SQLite: :mod:`memtrove.db.sqlite.passages`).
"""

from __future__ import annotations

from memtrove.db.connection import Connection
from memtrove.db.text_index import MAX_PASSAGES

__all__ = [
    "LONG_CHARS",
    "MAX_PASSAGES",
    "PASSAGE_TYPES",
    "drop_passages",
    "passage_spans",
    "rebuild_passages",
    "write_passages",
]

LONG_CHARS = 4000  # about 700 words: shorter documents are scored whole
PASSAGE_TYPES = ("section", "list", "code")
_SPANS = (
    "SELECT start_offset, end_offset FROM fragments WHERE hash = ? "
    "AND fragment_type IN ('section', 'list', 'code') ORDER BY seq"
)


def passage_spans(connection: Connection, body_hash: str, length: int) -> list[tuple[int, int]]:
    """The (start, end) offsets of a stored body's passages: its section, list and code
    fragments, else the whole body."""
    spans = [
        (int(start), int(end))
        for start, end in connection.execute(_SPANS, (body_hash,))
        if int(end) > int(start)
    ]
    return spans[:MAX_PASSAGES] or [(0, length)]


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
    connection.text.add_passages(doc_id, [text[start:end] for start, end in spans])


def drop_passages(connection: Connection, doc_id: int) -> None:
    """Take document ``doc_id``'s passages out of the index (none stored is fine)."""
    connection.text.remove_documents((doc_id,), index="passages")


def rebuild_passages(connection: Connection) -> int:
    """Index the passages of every document in the ``documents`` text index from scratch
    (rows already there are dropped first); returns how many documents were read."""
    connection.text.clear("passages")
    # ids first, each body read on its own: a large vault's text is never held at once
    rows = connection.execute(
        "SELECT d.id, d.hash FROM documents d WHERE "
        + connection.text.indexed_condition("d")
        + " ORDER BY d.id"
    ).fetchall()
    for doc_id, body_hash in rows:
        write_passages(connection, int(doc_id), str(body_hash))
    return len(rows)
