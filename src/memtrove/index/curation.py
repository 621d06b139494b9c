"""Curation: a user's hand on what surfaces. Pin, snooze and forget documents.

- **pin** adds +0.3 to a document's composite score (capped at 1.0) wherever composite
  scoring runs;
- **snooze** hides a document from context surfacing until a moment in the future; it stays
  searchable (hooks filter on ``snoozed_until > now``);
- **forget** deactivates a document: it leaves every search, its text stays in the vault, and
  ``documents.forgotten_hash`` remembers the body that was forgotten, so ``update`` leaves it
  inactive until its file's content changes (see :mod:`memtrove.index.indexer`).

Each change is one short write transaction that resolves the reference inside it. A
reference may name an inactive document (forgetting twice is harmless); an active document
wins when both answer to a docid.
"""

from __future__ import annotations

import re
from datetime import datetime

from memtrove.db.connection import Connection, write_transaction
from memtrove.errors import InvalidQueryError
from memtrove.index.documents import get_document
from memtrove.results import Document
from memtrove.text import parse_iso_datetime, to_iso

__all__ = ["forget_document", "parse_snooze_until", "pin_document", "snooze_document"]

_BARE_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


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
    from memtrove.lifecycle.archive import drop_archive_marks, repair_fts_totals

    with write_transaction(connection):
        document = get_document(connection, reference, include_inactive=True)
        connection.execute(
            "UPDATE documents SET forgotten_hash = hash WHERE id = ?", (document.doc_id,)
        )
        from memtrove.index.indexer import deactivate_documents  # the indexer loads on use

        deactivate_documents(connection, [document.doc_id])
        was_archived = drop_archive_marks(connection, document.doc_id)
    if was_archived:
        repair_fts_totals(connection, ("archived_fts",))
    return document._replace(active=False)
