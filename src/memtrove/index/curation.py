"""Curation: a user's hand on what surfaces. Pin, snooze, forget and restore documents, and
set their confidence and type.

- **pin** adds +0.3 to a document's composite score (capped at 1.0) wherever composite
  scoring runs;
- **snooze** hides a document from context surfacing until a moment in the future; it stays
  searchable (hooks filter on ``snoozed_until > now``);
- **forget** deactivates a document: it leaves every search, its text stays in the vault, and
  ``documents.forgotten_hash`` remembers the body that was forgotten, so ``update`` leaves it
  inactive until its file's content changes (see :mod:`memtrove.index.indexer`);
- **restore** undoes a forget: the document is active again, its full-text row, passages
  and links written back as the indexer writes them for a reactivated document (an
  archived document goes back through :func:`memtrove.lifecycle.archive.restore_documents`);
- **confidence** and **type** are set by hand; the next edit of the file classifies it
  again (the indexer then resets the confidence when the type changes).

Each change is one short write transaction that resolves the reference inside it (a
restore resolves it first, then writes only if the document is still forgotten). A
reference may name an inactive document (forgetting twice is harmless); an active document
wins when both answer to a docid.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memtrove.db.connection import Connection, write_transaction
from memtrove.db.passages import drop_passages
from memtrove.errors import InvalidQueryError
from memtrove.index.documents import get_document
from memtrove.index.types import CONTENT_TYPES
from memtrove.patterns import LazyPattern
from memtrove.results import Document
from memtrove.text import parse_iso_datetime, to_iso

__all__ = [
    "forget_document",
    "parse_snooze_until",
    "pin_document",
    "restore_document",
    "set_confidence",
    "set_content_type",
    "snooze_document",
]

_BARE_DATE = LazyPattern(r"\d{4}-\d{2}-\d{2}")


def parse_snooze_until(value: str | None, now: datetime) -> str | None:
    """A snooze end as UTC ISO, or None (unsnooze) for None or blank text.

    A bare date means the end of that day (UTC); a datetime without a zone is read as UTC.
    Raises :class:`InvalidQueryError` for text that is not an ISO date or datetime, and for
    a moment that is not in the future.
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidQueryError(f"until must be an ISO date such as 2026-01-31, got {value!r}")
    text = value.strip()
    if not text:
        return None
    if _BARE_DATE.fullmatch(text):
        text += "T23:59:59Z"
    parsed = parse_iso_datetime(text)
    if parsed is None:
        raise InvalidQueryError(
            f"until must be an ISO date or datetime such as 2026-01-31 or "
            f"2026-01-31T09:00:00Z, got {value!r}"
        )
    if parsed <= to_iso(now):
        raise InvalidQueryError(
            f"until {value!r} is not in the future; give a later date, or none to unsnooze"
        )
    return parsed


def pin_document(connection: Connection, reference: str, *, pinned: bool = True) -> Document:
    """Pin (or unpin) the document named by ``reference``; idempotent."""
    with write_transaction(connection):
        document = get_document(connection, reference, include_inactive=True)
        connection.execute(
            "UPDATE documents SET pinned = ? WHERE id = ?", (int(pinned), document.doc_id)
        )
    return document._replace(pinned=pinned)


def snooze_document(connection: Connection, reference: str, until: str | None) -> Document:
    """Set (or, with None, clear) ``snoozed_until``; ``until`` as :func:`parse_snooze_until`."""
    with write_transaction(connection):
        document = get_document(connection, reference, include_inactive=True)
        connection.execute(
            "UPDATE documents SET snoozed_until = ? WHERE id = ?", (until, document.doc_id)
        )
    return document._replace(snoozed_until=until)


def forget_document(connection: Connection, reference: str) -> Document:
    """Deactivate a document and remember its body as forgotten; idempotent.

    Forgetting an archived document drops its archive marks, so ``lifecycle restore``
    cannot bring it back."""
    from memtrove.lifecycle.archive import drop_archive_marks

    with write_transaction(connection):
        document = get_document(connection, reference, include_inactive=True)
        connection.execute(
            "UPDATE documents SET forgotten_hash = hash WHERE id = ?", (document.doc_id,)
        )
        from memtrove.index.indexer import deactivate_documents  # the indexer loads on use

        deactivate_documents(connection, [document.doc_id])
        was_archived = drop_archive_marks(connection, document.doc_id)
    if was_archived:
        connection.text.recount_totals(("archived",))
    return document._replace(active=False)


def restore_document(connection: Connection, reference: str) -> Document:
    """Make a forgotten (or archived) document active again; an active one is returned as
    is. Its body is the one it had: its full-text row and passages are written back and,
    for a folder's document, its links stored and resolved, as :mod:`memtrove.index.indexer`
    does when a file brings a document back. ``update`` then keeps it active while its file
    is there.

    A document that is inactive for another reason (its file left the collection, or an
    agent memory was replaced) is refused with :class:`InvalidQueryError`: its file, not a
    restore, brings it back."""
    from memtrove.lifecycle.archive import restore_documents

    document = get_document(connection, reference, include_inactive=True)
    if document.active:
        return document
    archived, forgotten = connection.execute(
        "SELECT archived_at IS NOT NULL, forgotten_hash IS NOT NULL FROM documents WHERE id = ?",
        (document.doc_id,),
    ).fetchone()
    if archived:
        restore_documents(connection, [document.doc_id])
    elif not forgotten:
        raise InvalidQueryError(
            f"{document.collection}/{document.path} was not forgotten: it is inactive because "
            "its file left the collection (or it was replaced); put the file back and update"
        )
    else:
        with write_transaction(connection):
            restored = connection.execute(
                "UPDATE documents SET active = 1, forgotten_hash = NULL "
                "WHERE id = ? AND active = 0 AND forgotten_hash IS NOT NULL",
                (document.doc_id,),
            ).rowcount
            if restored:
                _index_again(connection, document.doc_id)
        connection.text.settle_totals(("documents", "passages"))
    return get_document(connection, f"#{document.docid}", include_inactive=True)


def _index_again(connection: Connection, doc_id: int) -> None:
    """Write a reactivated document's full-text row, passages and links (inside the
    caller's transaction), as the indexer does for a file that brings a document back."""
    from memtrove.graph.links import (
        WrittenDocument,
        extract_links,
        links_stored,
        resolve_links,
        write_links,
    )
    from memtrove.index.markdown import parse_markdown
    from memtrove.index.writing import write_text_rows

    collection, path, title, body_hash, text = connection.execute(
        "SELECT d.collection, d.path, d.title, d.hash, c.doc FROM documents d "
        "JOIN content c ON c.hash = d.hash WHERE d.id = ?",
        (doc_id,),
    ).fetchone()
    body = parse_markdown(str(text)).body
    connection.text.remove_documents((doc_id,))
    drop_passages(connection, doc_id)
    write_text_rows(
        connection, doc_id, f"{collection}/{path}", str(title), body, str(body_hash), str(text)
    )
    # Only folder documents have links: the indexer stores them, internal writes do not.
    if not str(collection).startswith("_") and links_stored(connection):
        links = tuple(extract_links(body, str(path)))
        write_links(connection, [WrittenDocument(doc_id, str(path), links)])
        resolve_links(connection, str(collection), {doc_id})


def set_confidence(connection: Connection, reference: str, confidence: Any) -> Document:
    """Set a document's confidence (a number from 0 to 1); InvalidQueryError otherwise."""
    # The range test refuses NaN and infinities too (every comparison with NaN is false).
    if (
        not isinstance(confidence, int | float)
        or isinstance(confidence, bool)
        or not 0.0 <= confidence <= 1.0
    ):
        raise InvalidQueryError(f"confidence must be a number from 0 to 1, got {confidence!r:.40}")
    with write_transaction(connection):
        document = get_document(connection, reference, include_inactive=True)
        connection.execute(
            "UPDATE documents SET confidence = ? WHERE id = ?", (float(confidence), document.doc_id)
        )
    return document._replace(confidence=float(confidence))


def set_content_type(connection: Connection, reference: str, content_type: Any) -> Document:
    """Set a document's type (one of :data:`~memtrove.index.types.CONTENT_TYPES`); its
    confidence is left as it is. InvalidQueryError for any other type."""
    if not isinstance(content_type, str) or content_type not in CONTENT_TYPES:
        raise InvalidQueryError(
            f"type must be one of {', '.join(CONTENT_TYPES)}, got {content_type!r:.40}"
        )
    with write_transaction(connection):
        document = get_document(connection, reference, include_inactive=True)
        connection.execute(
            "UPDATE documents SET content_type = ? WHERE id = ?", (content_type, document.doc_id)
        )
    return document._replace(content_type=content_type)
