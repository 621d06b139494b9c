"""The curation area (``vault.curation``): pin, snooze, forget, restore, confidence and type of
documents, and finding the document a query names.

Contract: given the vault's database, its retriever (for :meth:`CurationArea.find_target`'s
vector step), the vault's clock (snoozes are measured against it) and the sessions area
(:mod:`.sessions`), through which each pin, snooze and forget is logged. Its statements are
those of :mod:`memtrove.index.curation` (the curation columns of ``documents``, and the
re-indexing a restore needs) and :mod:`memtrove.retrieval.target`, which only reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memtrove.retrieval.fts import MAX_QUERY_CHARS

if TYPE_CHECKING:
    from memtrove.db.database import Database
    from memtrove.results import Document, TargetMatch
    from memtrove.retrieval.pipeline import Retriever
    from memtrove.vault.areas import Clock
    from memtrove.vault.sessions import SessionsArea

# Curation and target finding are imported by the methods that use them: a search (the
# commonest short command) uses neither.

__all__ = ["CurationArea"]


class CurationArea:
    """Curating documents by hand, and naming the one a query means."""

    def __init__(
        self,
        database: Database,
        *,
        retriever: Retriever,
        clock: Clock,
        sessions: SessionsArea,
    ) -> None:
        self._connection, self._lock = database.connection, database.lock
        self._retriever, self._clock, self._sessions = retriever, clock, sessions

    def pin(self, ref: str, *, unpin: bool = False) -> Document:
        """Pin a document (+0.3 composite score), or unpin it. Unknown ref: DocumentNotFoundError."""
        from memtrove.index import curation

        with self._lock:
            document = curation.pin_document(self._connection, ref, pinned=not unpin)
            self._note_curation("memory_pin")
            return document

    def snooze(self, ref: str, until: str | None = None) -> Document:
        """Hide a document from context surfacing until ``until`` (ISO date or datetime; a
        bare date is the end of that day, UTC); None unsnoozes. It stays searchable.

        A moment not in the future is refused with InvalidQueryError.
        """
        from memtrove.index import curation

        moment = curation.parse_snooze_until(until, self._clock())
        with self._lock:
            document = curation.snooze_document(self._connection, ref, moment)
            self._note_curation("memory_snooze")
            return document

    def forget(self, ref: str) -> Document:
        """Deactivate a document: it leaves every search (its text stays in the vault), and
        :meth:`Vault.update` leaves it out until its file's content changes. Idempotent."""
        from memtrove.index import curation

        with self._lock:
            document = curation.forget_document(self._connection, ref)
            self._note_curation("memory_forget")
            return document

    def restore(self, ref: str) -> Document:
        """Undo :meth:`forget` (or an archive): the document is active and searchable again
        with the body it had, and :meth:`Vault.update` keeps it while its file is there. An
        active document is returned as is; one inactive because its file left the
        collection is refused with InvalidQueryError."""
        from memtrove.index import curation

        with self._lock:
            return curation.restore_document(self._connection, ref)

    def set_confidence(self, ref: str, confidence: float) -> Document:
        """Set a document's confidence by hand (0 to 1; anything else: InvalidQueryError).
        The next edit of its file classifies it again."""
        from memtrove.index import curation

        with self._lock:
            return curation.set_confidence(self._connection, ref, confidence)

    def set_type(self, ref: str, content_type: str) -> Document:
        """Set a document's type by hand (one of ``memtrove.index.types.CONTENT_TYPES``;
        anything else: InvalidQueryError), its confidence left as it is. The next edit of
        its file classifies it again."""
        from memtrove.index import curation

        with self._lock:
            return curation.set_content_type(self._connection, ref, content_type)

    def find_target(self, query: str) -> TargetMatch:
        """The document ``query`` most likely names: exact ref or path, else BM25, title
        words, vectors (see :mod:`memtrove.retrieval.target`); check ``confident``."""
        from memtrove.retrieval.target import find_target

        if isinstance(query, str) and len(query) > MAX_QUERY_CHARS:
            query = query[:MAX_QUERY_CHARS]
        with self._lock:
            return find_target(self._connection, self._retriever, query)

    def _note_curation(self, action: str) -> None:
        """Log the curation that just committed through the sessions area (best effort)."""
        self._sessions.note_curation(action)
