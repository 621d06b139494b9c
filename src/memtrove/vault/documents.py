"""The documents area (``vault.documents``): reading documents whole, their neighbours in
time, the vault's status and statistics, embedding and export.

Contract: given the vault's database (its ``path`` is the file :meth:`DocumentsArea.status`
reports), its models (the embedders :meth:`DocumentsArea.embed` runs), the vault's clock
(staleness is measured against it) and the configured collections (a callable: ``config.yaml``
is read when asked). Its statements are those of :mod:`memtrove.index.documents`,
:mod:`memtrove.index.timeline`, :mod:`memtrove.index.stats` and :mod:`memtrove.mine.runs`
(which only read), and :mod:`memtrove.index.embedding` and
:mod:`memtrove.index.embedding_second`, which write the ``vectors`` tables.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from memtrove.errors import InvalidQueryError, MemtroveError
from memtrove.index.documents import documents_after, get_document, list_documents
from memtrove.results import Document, DocumentSummary
from memtrove.retrieval.arguments import MAX_LIMIT, check_count, check_limit

# Embedding, statistics and timelines load when their method runs, so that opening a vault
# for a search (the CLI's commonest run) does not import them.
if TYPE_CHECKING:
    from memtrove.db.database import Database
    from memtrove.index.embedding import EmbedProgress, EmbedReport
    from memtrove.models.registry import Models
    from memtrove.results import Collection, IndexStats, MultiGet, Timeline, VaultStatus
    from memtrove.vault.areas import Clock

__all__ = ["EXPORT_BATCH", "DocumentsArea"]

EXPORT_BATCH = 200  # documents read per page by DocumentsArea.export


class DocumentsArea:
    """Reading documents and reporting on the vault's contents."""

    def __init__(
        self,
        database: Database,
        *,
        models: Models,
        clock: Clock,
        collections: Callable[[], list[Collection]],
    ) -> None:
        self._connection, self._lock = database.connection, database.lock
        self._location = database.location  # a file's path or a server's URL
        self.models, self._clock, self.collections = models, clock, collections

    def get(self, ref: str, *, include_inactive: bool = False) -> Document:
        """A document by ``#docid``, bare docid, or ``collection/path`` (a forgotten or
        archived one too with ``include_inactive``).

        A docid reference may be a prefix of one document's docid or content hash; one that
        names several raises :class:`AmbiguousReferenceError`, listing them.
        """
        with self._lock:
            return get_document(self._connection, ref, include_inactive=include_inactive)

    def list(self, limit: int = 10, collection: str | None = None) -> list[DocumentSummary]:
        """The most recently modified active documents."""
        with self._lock:
            return list_documents(self._connection, check_limit(limit), collection)

    def multi_get(
        self, pattern: str, *, max_bytes: int = 10240, max_documents: int = 50
    ) -> MultiGet:
        """Documents named by a glob over ``collection/path`` (``notes/**/*.md``) or a
        comma-separated list of refs (each may be a glob); bodies cut at ``max_bytes`` of
        UTF-8 are listed in ``truncated``, refs not found in ``errors``."""
        from memtrove.index.timeline import multi_get

        if not isinstance(pattern, str):
            raise InvalidQueryError("the pattern must be text")
        max_bytes = check_limit(max_bytes, None, "max_bytes")
        max_documents = check_limit(max_documents, MAX_LIMIT, "max_documents")
        with self._lock:
            return multi_get(
                self._connection, pattern, max_bytes=max_bytes, max_documents=max_documents
            )

    def timeline(
        self, ref: str, before: int = 5, after: int = 5, same_collection: bool = False
    ) -> Timeline:
        """The documents just before and after ``ref`` in effective-time order (authored_at,
        else modified_at; ties by collection, path), nearest first."""
        from memtrove.index.timeline import document_timeline

        before = min(check_count("before", before), MAX_LIMIT)
        after = min(check_count("after", after), MAX_LIMIT)
        with self._lock:
            return document_timeline(
                self._connection, ref, before, after, same_collection=same_collection
            )

    def export(
        self, collections: Sequence[str] | None = None, batch: int = EXPORT_BATCH
    ) -> Iterator[Document]:
        """Every active document (of ``collections``, default all), whole, in id order.

        Read in pages of ``batch`` under the vault's lock, released between pages, so an
        export of any size streams in constant memory without holding up other callers.
        """
        after = 0
        while True:
            with self._lock:
                page = documents_after(self._connection, after, batch, collections)
            yield from page
            if len(page) < batch:
                return
            after = page[-1].doc_id

    def status(self) -> VaultStatus:
        from pathlib import Path

        from memtrove.index.stats import vault_status
        from memtrove.mine.runs import mined_collections
        from memtrove.results import Collection

        with self._lock:
            listed = self.collections()
            names = {c.name for c in listed}
            # Mined collections (memtrove owns their documents): listed with the folder
            # last mined and the pattern "(mined)".
            for name, source in mined_collections(self._connection):
                if name not in names:
                    listed.append(Collection(name, Path(source), "(mined)"))
            second = self.models.settings.embed_second
            return vault_status(self._connection, self._location, listed, second)

    def index_stats(self) -> IndexStats:
        """Content types, embedding coverage and staleness (each collection's
        ``stale_after_days``; see :mod:`memtrove.index.staleness`)."""
        from memtrove.index.stats import index_stats

        collections = self.collections()
        with self._lock:
            return index_stats(self._connection, self._clock(), collections)

    def embed(
        self,
        *,
        force: bool = False,
        progress: EmbedProgress | None = None,
        force_geometry: bool = False,
        recalibrate_canary: bool = False,
    ) -> EmbedReport:
        """Give every fragment of every active document a vector (only what is pending).

        Refuses, with the fix in the message, when the stored vectors come from another model
        or dimension, or when the embedder fails the geometry canary; ``force`` re-embeds
        everything with the configured embedder, ``force_geometry`` writes despite a failed
        canary (tainting the vault), ``recalibrate_canary`` (with ``force``) stores a new
        canary baseline (see :mod:`memtrove.index.geometry`).
        """
        from memtrove.index.embedding import embed_pending

        with self._lock:
            report = embed_pending(
                self._connection,
                self.models.embedder,
                force=force,
                force_geometry=force_geometry,
                recalibrate_canary=recalibrate_canary,
                progress=progress,
            )
        if self.models.settings.embed_second:
            self._embed_second(report, force, progress)
        return report

    def _embed_second(
        self, report: EmbedReport, force: bool, progress: EmbedProgress | None
    ) -> None:
        """The second space after the first (``MEMTROVE_EMBED_SECOND``); a failure is the
        report's error, the first space's vectors are kept. The vault's lock is taken per
        batch, not for the run: the model's minutes leave the vault answering."""
        from memtrove.index.embedding_second import embed_second

        try:
            done = embed_second(
                self._connection,
                self.models.second_embedder,
                force=force,
                progress=progress,
                lock=self._lock,
            )
        except MemtroveError as error:
            report.errors.append(f"second space: {error}")
            report.second = {"error": str(error)}
        else:
            report.second = done.to_dict()
