"""Reading documents back: by reference, most recent first, and vault-wide counts.

Docids. Every document has its own docid (a unique index since ``m010_unique_docids``): the
first 6 hex of its content hash when no other row holds them, else those 6 followed by the
first free two-digit hex place (``a1b2c3`` -> ``a1b2c301``), so identical copies of one body
share the short prefix but never the docid. A docid is given once, when the row is created,
and kept for the row's life: an edit, a rename, a forget and a return all keep it, so an agent
holding ``#a1b2c3`` still reaches the same document. (After an edit the docid no longer
matches the new hash; nothing relies on it doing so.)

A hex reference resolves, in order: to the document whose docid it is exactly; else to the
one document whose docid or content hash it is a prefix of. A prefix of several is refused
with :class:`AmbiguousReferenceError`, naming the candidates.
"""

from collections.abc import Sequence
from typing import Any, NamedTuple

from memtrove.db.connection import Connection
from memtrove.errors import AmbiguousReferenceError, DocumentNotFoundError
from memtrove.patterns import LazyPattern
from memtrove.results import Document, DocumentSummary
from memtrove.text import scrub

__all__ = [
    "collection_counts",
    "content_type_counts",
    "document_rows",
    "fragment_texts",
    "free_docid",
    "get_document",
    "identical_copies",
    "list_documents",
    "parse_reference",
    "reference_candidates",
]

_DOCID = LazyPattern(r"#?([0-9a-fA-F]{6,64})")
DOCID_LENGTH = 6
SHOWN_CANDIDATES = 5  # in an ambiguity message
_DOCUMENT_COLUMNS = (
    "d.id, d.docid, d.collection, d.path, d.title, d.hash, d.content_type, d.quality_score, "
    "d.confidence, d.pinned, d.snoozed_until, d.created_at, d.modified_at, d.authored_at, "
    "d.active, c.doc, d.review_by, d.domain, d.workstream"
)


class _Match(NamedTuple):
    doc_id: int
    docid: str
    collection: str
    path: str
    active: bool


def _prefix_range(prefix: str) -> tuple[str, str]:
    """Bounds of the lowercase hex strings starting with ``prefix``: ``>= low AND < high``.

    ``g`` sorts after every hex digit, so the range is exactly the prefix's strings, and,
    unlike ``LIKE``, it can use the docid and hash indexes.
    """
    return prefix, prefix + "g"


def free_docid(connection: Connection, body_hash: str) -> str:
    """The docid for a new document with this body (module docstring); call it inside the
    write transaction that inserts the row, so no other writer takes it meanwhile."""
    base = body_hash[:DOCID_LENGTH].lower()
    taken = {
        str(row[0])
        for row in connection.execute(
            "SELECT docid FROM documents WHERE docid >= ? AND docid < ?", _prefix_range(base)
        )
    }
    if base not in taken:
        return base
    place = 1
    while f"{base}{place:02x}" in taken:
        place += 1
    return f"{base}{place:02x}"


def parse_reference(reference: str) -> tuple[str, str] | str:
    """``#abc123`` or a bare hex docid -> docid; ``collection/path`` -> (collection, path).
    Text that cannot be stored (lone surrogates) is replaced first: it names nothing."""
    text = scrub(reference).strip()
    if text.startswith("memtrove://"):
        text = text[len("memtrove://") :]
    match = _DOCID.fullmatch(text)
    if match and (text.startswith("#") or "/" not in text):
        return match.group(1).lower()
    if "/" in text:
        collection, _, path = text.partition("/")
        return collection, path
    return text


def _hex_matches(connection: Connection, prefix: str, *, active_only: bool) -> list[_Match]:
    """Documents whose docid or content hash starts with ``prefix``, by collection and path."""
    active = " AND active = 1" if active_only else ""
    rows = connection.execute(
        "SELECT id, docid, collection, path, active FROM documents "
        f"WHERE ((docid >= ? AND docid < ?) OR (hash >= ? AND hash < ?)){active} "
        "ORDER BY collection, path, id",
        (*_prefix_range(prefix), *_prefix_range(prefix)),
    ).fetchall()
    return [_Match(int(r[0]), str(r[1]), str(r[2]), str(r[3]), bool(r[4])) for r in rows]


def _resolve_hex(
    reference: str, prefix: str, matches: list[_Match], *, include_inactive: bool
) -> int:
    """The one document ``prefix`` names (module docstring), or the error saying why not."""
    for match in matches:
        if match.docid == prefix:
            return match.doc_id
    if include_inactive:
        matches = [match for match in matches if match.active] or matches
    if not matches:
        raise DocumentNotFoundError(f"no document {reference!r} in the vault")
    if len(matches) > 1:
        shown = ", ".join(f"#{m.docid} {m.collection}/{m.path}" for m in matches[:SHOWN_CANDIDATES])
        more = len(matches) - SHOWN_CANDIDATES
        if more > 0:
            shown += f" and {more} more"
        message = (
            f"{reference.strip()!r} names {len(matches)} documents ({shown}); "
            "use a longer docid or collection/path"
        )
        raise AmbiguousReferenceError(" ".join(message.split()))
    return matches[0].doc_id


def get_document(
    connection: Connection, reference: str, *, include_inactive: bool = False
) -> Document:
    """The active document named by ``reference`` (see :func:`parse_reference` and the
    module docstring).

    ``include_inactive`` also finds deactivated (removed or forgotten) documents; of several
    matching a docid prefix, active ones win. Raises :class:`DocumentNotFoundError` or, for a
    prefix naming several documents, :class:`AmbiguousReferenceError`.
    """
    parsed = parse_reference(reference)
    active = "" if include_inactive else " AND d.active = 1"
    if isinstance(parsed, tuple):
        collection, path = parsed
        row = connection.execute(
            f"SELECT {_DOCUMENT_COLUMNS} FROM documents d JOIN content c ON c.hash = d.hash "
            f"WHERE d.collection = ? AND d.path = ?{active}",
            (collection, path),
        ).fetchone()
    elif _DOCID.fullmatch(parsed):
        matches = _hex_matches(connection, parsed, active_only=not include_inactive)
        doc_id = _resolve_hex(reference, parsed, matches, include_inactive=include_inactive)
        row = connection.execute(
            f"SELECT {_DOCUMENT_COLUMNS} FROM documents d JOIN content c ON c.hash = d.hash "
            "WHERE d.id = ?",
            (doc_id,),
        ).fetchone()
    else:
        row = None
    if row is None:
        raise DocumentNotFoundError(f"no document {reference!r} in the vault")
    return _document(row)


def reference_candidates(connection: Connection, reference: str) -> list[int]:
    """Ids of the active documents a hex reference could mean (all of them when it is
    ambiguous), by collection and path; empty for a ``collection/path`` or other text."""
    parsed = parse_reference(reference)
    if isinstance(parsed, tuple) or not _DOCID.fullmatch(parsed):
        return []
    matches = _hex_matches(connection, parsed, active_only=True)
    exact = [match.doc_id for match in matches if match.docid == parsed]
    return exact or [match.doc_id for match in matches]


def identical_copies(
    connection: Connection, ids: Sequence[int]
) -> dict[int, tuple[str, list[str]]]:
    """For each document id: its content hash, and the other active, valid documents with
    exactly that body as ``collection/path``, sorted (one query)."""
    if not ids:
        return {}
    placeholders = ",".join("?" * len(ids))
    rows = connection.execute(
        "SELECT d.id, d.hash, o.collection || '/' || o.path FROM documents d "
        "LEFT JOIN documents o ON o.hash = d.hash AND o.id != d.id AND o.active = 1 "
        f"AND o.invalidated_at IS NULL WHERE d.id IN ({placeholders}) "
        "ORDER BY d.id, o.collection, o.path",
        list(ids),
    )
    copies: dict[int, tuple[str, list[str]]] = {}
    for doc_id, body_hash, other in rows:
        _, others = copies.setdefault(int(doc_id), (str(body_hash), []))
        if other is not None:
            others.append(str(other))
    return copies


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
        review_by=row[16],
        domain=row[17],
        workstream=row[18],
    )


def list_documents(
    connection: Connection, limit: int = 10, collection: str | None = None
) -> list[DocumentSummary]:
    """Active documents, most recently modified first."""
    sql = f"SELECT {SUMMARY_COLUMNS} FROM documents WHERE active = 1 AND invalidated_at IS NULL"
    params: list[Any] = []
    if collection:
        sql += " AND collection = ?"
        params.append(collection)
    sql += " ORDER BY modified_at DESC, id DESC LIMIT ?"
    params.append(max(0, limit))
    return [summary_of(row) for row in connection.execute(sql, params)]


SUMMARY_COLUMNS = (
    "docid, collection, path, title, content_type, modified_at, confidence, access_count"
)


def summary_of(row: Sequence[Any]) -> DocumentSummary:
    """A :class:`DocumentSummary` from a row of SUMMARY_COLUMNS."""
    return DocumentSummary(
        docid=str(row[0]),
        collection=str(row[1]),
        path=str(row[2]),
        title=str(row[3]),
        content_type=str(row[4]),
        modified_at=str(row[5]),
        confidence=float(row[6]),
        access_count=int(row[7]),
    )


def summaries_by_id(connection: Connection, ids: Sequence[int]) -> dict[int, DocumentSummary]:
    """Summaries of the given document ids, active or not (one query)."""
    if not ids:
        return {}
    placeholders = ",".join("?" * len(ids))
    rows = connection.execute(
        f"SELECT id, {SUMMARY_COLUMNS} FROM documents WHERE id IN ({placeholders})", list(ids)
    )
    return {int(row[0]): summary_of(row[1:]) for row in rows}


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
