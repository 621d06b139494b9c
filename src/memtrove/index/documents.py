"""Reading documents back: by reference, most recent first, and vault-wide counts."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from memtrove.db.connection import Connection
from memtrove.errors import AmbiguousReferenceError, DocumentNotFoundError
from memtrove.results import Document, DocumentSummary

__all__ = [
    "collection_counts",
    "content_type_counts",
    "document_rows",
    "fragment_texts",
    "get_document",
    "list_documents",
    "parse_reference",
]

_DOCID = re.compile(r"#?([0-9a-fA-F]{6,64})")
_DOCUMENT_COLUMNS = (
    "d.id, d.docid, d.collection, d.path, d.title, d.hash, d.content_type, d.quality_score, "
    "d.confidence, d.pinned, d.snoozed_until, d.created_at, d.modified_at, d.authored_at, "
    "d.active, c.doc"
)


def parse_reference(reference: str) -> tuple[str, str] | str:
    """``#abc123`` or a bare hex docid -> docid; ``collection/path`` -> (collection, path)."""
    text = reference.strip()
    if text.startswith("memtrove://"):
        text = text[len("memtrove://") :]
    match = _DOCID.fullmatch(text)
    if match and (text.startswith("#") or "/" not in text):
        return match.group(1).lower()
    if "/" in text:
        collection, _, path = text.partition("/")
        return collection, path
    return text


def get_document(
    connection: Connection, reference: str, *, include_inactive: bool = False
) -> Document:
    """The active document named by ``reference`` (see :func:`parse_reference`).

    ``include_inactive`` also finds deactivated (removed or forgotten) documents, when no
    active one answers to the reference.
    """
    parsed = parse_reference(reference)
    active = "" if include_inactive else " AND d.active = 1"
    if isinstance(parsed, tuple):
        collection, path = parsed
        rows = connection.execute(
            f"SELECT {_DOCUMENT_COLUMNS} FROM documents d JOIN content c ON c.hash = d.hash "
            f"WHERE d.collection = ? AND d.path = ?{active}",
            (collection, path),
        ).fetchall()
    else:
        rows = connection.execute(
            f"SELECT {_DOCUMENT_COLUMNS} FROM documents d JOIN content c ON c.hash = d.hash "
            f"WHERE d.docid = ? AND (length(?) = 6 OR d.hash LIKE ?){active} "
            "ORDER BY d.modified_at DESC",
            (parsed[:6], parsed, parsed + "%"),
        ).fetchall()
    if include_inactive:
        rows = [row for row in rows if row[14]] or rows
    if not rows:
        raise DocumentNotFoundError(f"no document {reference!r} in the vault")
    if len(rows) > 1 and len({row[5] for row in rows}) > 1:
        names = ", ".join(f"{row[2]}/{row[3]}" for row in rows[:5])
        raise AmbiguousReferenceError(
            f"{reference!r} names {len(rows)} documents ({names}); use collection/path"
        )
    return _document(rows[0])


def documents_after(
    connection: Connection, after_id: int, limit: int, collections: Sequence[str] | None = None
) -> list[Document]:
    """Active documents with an id above ``after_id``, by id (keyset pages for export)."""
    where = ""
    parameters: list[Any] = [after_id]
    if collections:
        where = f" AND d.collection IN ({','.join('?' * len(collections))})"
        parameters.extend(collections)
    rows = connection.execute(
        f"SELECT {_DOCUMENT_COLUMNS} FROM documents d JOIN content c ON c.hash = d.hash "
        f"WHERE d.id > ? AND d.active = 1{where} ORDER BY d.id LIMIT ?",
        (*parameters, limit),
    ).fetchall()
    return [_document(row) for row in rows]


def _document(row: Sequence[Any]) -> Document:
    return Document(
        doc_id=int(row[0]),
        docid=str(row[1]),
        collection=str(row[2]),
        path=str(row[3]),
        title=str(row[4]),
        hash=str(row[5]),
        content_type=str(row[6]),
        quality_score=float(row[7]),
        confidence=float(row[8]),
        pinned=bool(row[9]),
        snoozed_until=row[10],
        created_at=str(row[11]),
        modified_at=str(row[12]),
        authored_at=row[13],
        active=bool(row[14]),
        body=str(row[15]),
    )


def list_documents(
    connection: Connection, limit: int = 10, collection: str | None = None
) -> list[DocumentSummary]:
    """Active documents, most recently modified first."""
    sql = (
        "SELECT docid, collection, path, title, content_type, modified_at, confidence, "
        "access_count FROM documents WHERE active = 1 AND invalidated_at IS NULL"
    )
    params: list[Any] = []
    if collection:
        sql += " AND collection = ?"
        params.append(collection)
    sql += " ORDER BY modified_at DESC, id DESC LIMIT ?"
    params.append(max(0, limit))
    return [
        DocumentSummary(
            docid=str(r[0]),
            collection=str(r[1]),
            path=str(r[2]),
            title=str(r[3]),
            content_type=str(r[4]),
            modified_at=str(r[5]),
            confidence=float(r[6]),
            access_count=int(r[7]),
        )
        for r in connection.execute(sql, params)
    ]


def document_rows(connection: Connection, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """Display fields and stored text of the given document ids (one query)."""
    if not ids:
        return {}
    placeholders = ",".join("?" * len(ids))
    rows = connection.execute(
        "SELECT d.id, d.docid, d.collection, d.path, d.title, d.content_type, d.modified_at, "
        f"c.doc FROM documents d JOIN content c ON c.hash = d.hash WHERE d.id IN ({placeholders})",
        list(ids),
    )
    return {
        int(r[0]): {
            "docid": r[1],
            "collection": r[2],
            "path": r[3],
            "title": r[4],
            "content_type": r[5],
            "modified_at": r[6],
            "text": r[7],
        }
        for r in rows
    }


def collection_counts(connection: Connection) -> dict[str, int]:
    rows = connection.execute(
        "SELECT collection, COUNT(*) FROM documents WHERE active = 1 GROUP BY collection"
    )
    return {str(r[0]): int(r[1]) for r in rows}


def content_type_counts(connection: Connection) -> dict[str, int]:
    rows = connection.execute(
        "SELECT content_type, COUNT(*) FROM documents WHERE active = 1 "
        "GROUP BY content_type ORDER BY COUNT(*) DESC"
    )
    return {str(r[0]): int(r[1]) for r in rows}


def fragment_texts(
    connection: Connection, rows: dict[int, dict[str, Any]], best_seq: dict[int, int]
) -> dict[int, str]:
    """The text of each document's best-matching fragment (vector hits know which one)."""
    wanted = [(doc, seq) for doc, seq in best_seq.items() if doc in rows]
    if not wanted:
        return {}
    texts: dict[int, str] = {}
    for doc, seq in wanted:
        row = connection.execute(
            "SELECT f.start_offset, f.end_offset FROM fragments f JOIN documents d "
            "ON d.hash = f.hash WHERE d.id = ? AND f.seq = ?",
            (doc, seq),
        ).fetchone()
        if row is not None:
            texts[doc] = str(rows[doc]["text"])[int(row[0]) : int(row[1])]
    return texts
