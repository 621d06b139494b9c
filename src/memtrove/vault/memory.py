"""The memory area (``vault.memory``): the agent's labelled entries, recall, duplicates, hygiene.

Contract: given the vault's database, its models (the embedder: entry vectors, recall's
vector leg, duplicate and hygiene identities), the redaction of stored text and the vault's
clock. Its statements are those of :mod:`memtrove.memory.entries`, :mod:`memtrove.memory.dedup`
and :mod:`memtrove.memory.hygiene` (documents of the ``_memtrove`` collection plus
``memory_entries``, ``memory_entry_versions``, ``memory_stores``, ``dedup_pairs``), and
:func:`memtrove.retrieval.fts.search_documents` for recall's keyword leg.

``store=None`` means the project store: named after the git repository holding the working
directory (else the directory itself), unless ``project_store`` was set on this area.
Recall without a store looks in the project store and ``global``.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtrove.errors import InvalidQueryError, MemtroveError
from memtrove.text import scrub, to_iso

if TYPE_CHECKING:
    from memtrove.db.database import Database
    from memtrove.models.registry import Models
    from memtrove.results import MemoryEntry, RecalledEntry, RememberResult, SimilarEntry
    from memtrove.results.memory import DuplicateReport, EntryVersion, HygieneReport
    from memtrove.vault.areas import Clock, Redact

# The memory store's other modules load with its first use: hooks and searches never pay.

__all__ = ["NUDGE_SIMILARITY", "MemoryArea"]

NUDGE_SIMILARITY = 0.55  # a new entry this close to another is worth a look
RECALL_MIN_COSINE = 0.3  # an entry found by vector alone must be at least this close
RECALL_BM25_WEIGHT = 0.6


class MemoryArea:
    """The agent's labelled memories (documents of ``_memtrove`` plus entry fields)."""

    def __init__(self, database: Database, *, models: Models, redact: Redact, clock: Clock) -> None:
        self._connection, self._lock = database.connection, database.lock
        self.models, self.redact, self._clock = models, redact, clock
        self.project_store: str | None = None  # callers may set it: the store for store=None

    def resolve_store(self, store: str | None = None) -> str:
        """``store`` as kept, or the project store's name."""
        from memtrove.memory.git import project_store_for
        from memtrove.memory.slugs import store_name  # hashlib: not on a search's path

        if store is not None and store.strip():
            return store_name(store)
        if self.project_store is None:
            self.project_store = store_name(project_store_for(Path.cwd()))
        return self.project_store

    def embed_text(self, text: str) -> tuple[Any, str | None]:
        """``text``'s vector by the configured embedder and the embedder's identity, or
        (None, None) when the embedder fails: the memory store degrades, never refuses."""
        try:
            embedder = self.models.embedder
            return embedder.embed_documents([text])[0], embedder.identity
        except MemtroveError:
            return None, None

    # -- writing ---------------------------------------------------------------------------

    def remember(
        self,
        label: str,
        content: str,
        store: str | None = None,
        branch: str | None = None,
        confidence: int | None = None,
        overwrite: bool = False,
    ) -> RememberResult:
        """Write an entry; an existing label is refused unless ``overwrite`` (the old text
        is then kept as an earlier version). ``similar`` lists entries of the store with
        cosine >= 0.55 to the new one."""
        label, content = self.redact(scrub(label)), self.redact(scrub(content))
        from memtrove.memory import entries
        from memtrove.memory.vectors import pack
        from memtrove.results import RememberResult

        target = self.resolve_store(store)
        # Without a vector (the embedder failed) the entry is still written, found by keywords.
        vector, model = self.embed_text(f"{label}\n\n{content}")
        now = to_iso(self._clock())
        with self._lock:
            written = entries.write_entry(
                self._connection,
                target,
                label,
                content,
                branch=branch,
                confidence=confidence,
                overwrite=overwrite,
                embedding=None if vector is None else pack(vector),
                model=model,
                now=now,
            )
            similar = self._similar(written.entry, vector, model) if vector is not None else []
        return RememberResult(written.entry, written.created, similar)

    def forget_entry(self, label: str, store: str | None = None) -> MemoryEntry:
        """Remove an entry (its text is kept as an earlier version)."""
        from memtrove.memory import entries

        with self._lock:
            return entries.forget_entry(
                self._connection, self.resolve_store(store), label, to_iso(self._clock())
            )

    def archive_entry(
        self, label: str, store: str | None = None, archived: bool = True
    ) -> MemoryEntry:
        """Archive an entry (kept, but out of recall, duplicates, staleness and search), or
        restore it with ``archived=False``."""
        from memtrove.memory import entries

        with self._lock:
            return entries.set_archived(
                self._connection, self.resolve_store(store), label, archived, to_iso(self._clock())
            )

    # -- reading ---------------------------------------------------------------------------

    def entry(self, label: str, store: str | None = None) -> MemoryEntry:
        from memtrove.memory import entries

        with self._lock:
            return entries.get_entry(self._connection, self.resolve_store(store), label)

    def entries(
        self, store: str | None = None, branch: str | None = None, include_archived: bool = False
    ) -> builtins.list[MemoryEntry]:
        from memtrove.memory import entries

        with self._lock:
            rows = entries.list_entries(
                self._connection,
                [self.resolve_store(store)],
                branch=branch,
                include_archived=include_archived,
            )
        return [entry for _, entry in rows]

    def entry_versions(self, label: str, store: str | None = None) -> builtins.list[EntryVersion]:
        """Earlier texts of an entry (overwritten or forgotten), newest first."""
        from memtrove.memory import entries

        with self._lock:
            return entries.versions(self._connection, self.resolve_store(store), label)

    def recall(
        self, query: str, store: str | None = None, branch: str | None = None, limit: int = 10
    ) -> builtins.list[RecalledEntry]:
        """Entries for ``query`` (keywords and vectors fused), counting each as recalled."""
        import dataclasses

        from memtrove.memory import entries

        found = self._search_entries(query, store, branch, limit)
        if not found:
            return []
        now = to_iso(self._clock())
        with self._lock:
            entries.stamp_recalled(self._connection, [doc_id for doc_id, _ in found], now)
        return [
            dataclasses.replace(
                item,
                entry=dataclasses.replace(
                    item.entry, recall_count=item.entry.recall_count + 1, last_recalled_at=now
                ),
            )
            for _, item in found
        ]

    def search_entries(
        self, query: str, store: str | None = None, branch: str | None = None, limit: int = 10
    ) -> builtins.list[RecalledEntry]:
        """As :meth:`recall`, without counting a recall."""
        return [item for _, item in self._search_entries(query, store, branch, limit)]

    def _search_entries(
        self, query: str, store: str | None, branch: str | None, limit: int
    ) -> builtins.list[tuple[int, RecalledEntry]]:
        from memtrove.index.internal import MEMORY_COLLECTION
        from memtrove.memory import entries
        from memtrove.memory.slugs import GLOBAL_STORE
        from memtrove.memory.vectors import cosine_to_all, unit_matrix
        from memtrove.results import RecalledEntry
        from memtrove.retrieval.filters import Filters
        from memtrove.retrieval.fts import search_documents

        query = scrub(query)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
            raise InvalidQueryError(f"limit must be between 1 and 1000, got {limit!r}")
        stores = [self.resolve_store(store)] if store else [self.resolve_store(), GLOBAL_STORE]
        stores = list(dict.fromkeys(stores))
        with self._lock:
            live = entries.entry_ids(self._connection, stores, branch)
            if not live or not query.strip():
                return []
            scores: dict[int, float] = {}
            for hit in search_documents(
                self._connection,
                query,
                limit=max(50, limit * 5),
                filters=Filters(collections=[MEMORY_COLLECTION]),
            ):
                if hit.doc_id in live:
                    scores[hit.doc_id] = RECALL_BM25_WEIGHT * hit.score
            rows = self._vectors(stores)
        if rows:
            query_vector, _ = self.embed_text(query)
            if query_vector is not None:
                similarities = cosine_to_all(query_vector, unit_matrix([r[4] for r in rows]))
                for row, similarity in zip(rows, similarities, strict=False):
                    cosine = float(similarity)
                    if row[0] in live and (row[0] in scores or cosine >= RECALL_MIN_COSINE):
                        scores[row[0]] = scores.get(row[0], 0.0) + (1 - RECALL_BM25_WEIGHT) * max(
                            0.0, cosine
                        )
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]
        if not ranked:
            return []
        with self._lock:  # the text of the winners only
            found = dict(
                entries.list_entries(
                    self._connection, stores, branch=branch, doc_ids=[d for d, _ in ranked]
                )
            )
        return [
            (doc_id, RecalledEntry(found[doc_id], score))
            for doc_id, score in ranked
            if doc_id in found
        ]

    # -- duplicates and hygiene --------------------------------------------------------------

    def find_duplicates(
        self, store: str | None = None, threshold: float | None = None
    ) -> DuplicateReport:
        """Unjudged pairs of near-duplicate entries, in connected clusters."""
        from memtrove.memory import dedup

        model = self.models.embedder.identity
        with self._lock:
            return dedup.find_duplicates(
                self._connection,
                self.resolve_store(store),
                model,
                dedup.DEFAULT_THRESHOLD if threshold is None else threshold,
            )

    def dedup_mark_checked(
        self, label_a: str, label_b: str, status: str, store: str | None = None
    ) -> tuple[str, str]:
        """Record a verdict on a pair; returns the two slugs, sorted."""
        from memtrove.memory import dedup

        with self._lock:
            return dedup.mark_checked(
                self._connection,
                self.resolve_store(store),
                label_a,
                label_b,
                status,
                to_iso(self._clock()),
            )

    def hygiene(self, store: str | None = None, worktree: Path | None = None) -> HygieneReport:
        """The store's maintenance signals (see :mod:`memtrove.memory.hygiene`)."""
        from memtrove.memory import hygiene

        model = self.models.embedder.identity
        with self._lock:
            return hygiene.hygiene_report(
                self._connection,
                self.resolve_store(store),
                model=model,
                worktree=worktree if worktree is not None else Path.cwd(),
                now=self._clock(),
            )

    # -- helpers -----------------------------------------------------------------------------

    def _vectors(self, stores: Sequence[str]) -> builtins.list[tuple[int, str, str, str, bytes]]:
        from memtrove.memory import entries

        return entries.stored_vectors(self._connection, stores, self.models.embedder.identity)

    def _similar(
        self, entry: MemoryEntry, vector: Any, model: str | None
    ) -> builtins.list[SimilarEntry]:
        from memtrove.memory import entries
        from memtrove.memory.vectors import cosine_to_all, unit_matrix
        from memtrove.results import SimilarEntry

        rows = [
            row
            for row in entries.stored_vectors(self._connection, [entry.store], model or "")
            if row[2] != entry.slug
        ]
        if not rows:
            return []
        similarities = cosine_to_all(vector, unit_matrix([row[4] for row in rows]))
        close = [
            SimilarEntry(row[1], row[2], row[3], float(score))
            for row, score in zip(rows, similarities, strict=False)
            if float(score) >= NUDGE_SIMILARITY
        ]
        return sorted(close, key=lambda item: -item.score)[:5]
