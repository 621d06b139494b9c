"""The entity pass of A-MEM enrichment: each enriched document's entities, extracted,
resolved and recorded, then every document linked once all mentions are in.

Without an LLM a batch's documents are written in one transaction through one
:class:`~memtrove.graph.entity_resolution.Resolver` for the whole run (a surface form is
resolved once per run; co-occurrences are counted in memory and written once, in key order,
before linking: a batch's upserts into that large table were most of each commit), and linking
shares one :class:`~memtrove.graph.entity_links.LinkCache`. A large run also lets SQLite
keep more of the vault's pages in memory while it lasts (:data:`BULK_CACHE_KIB`, then the
connection's own setting again): the co-occurrence and edge tables it writes are far larger
than the default page cache, and re-reading their pages was a good part of its time.

With an LLM each document is extracted and written on its own: no lock is held across a
model call.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from memtrove.db.connection import Connection, write_step, write_transaction
from memtrove.graph.entities import extract_entities
from memtrove.graph.entity_links import LinkCache, active_documents, link_shared_entities
from memtrove.graph.entity_resolution import Resolver, repair_cooccurrences

__all__ = ["BULK_CACHE_KIB", "BULK_DOCUMENTS", "EntityPass", "bulk_page_cache"]

BULK_CACHE_KIB = 65_536  # the page cache of a large run: 64 MiB
BULK_DOCUMENTS = 100  # a run of more documents than this is a large one
_LINK_BATCH = 256  # documents linked per write transaction


@contextmanager
def bulk_page_cache(
    connection: Connection, guard: AbstractContextManager[Any], documents: int
) -> Iterator[None]:
    """A page cache of :data:`BULK_CACHE_KIB` while a run of more than
    :data:`BULK_DOCUMENTS` documents lasts (never a smaller one than the connection has)."""
    if documents <= BULK_DOCUMENTS:
        yield
        return
    with guard:
        previous = int(connection.execute("PRAGMA cache_size").fetchone()[0])
        pages = int(connection.execute("PRAGMA page_size").fetchone()[0])
        # cache_size is pages when positive, KiB when negative.
        current_kib = previous * pages // 1024 if previous > 0 else -previous
        if current_kib < BULK_CACHE_KIB:
            connection.execute(f"PRAGMA cache_size = {-BULK_CACHE_KIB}")
    try:
        yield
    finally:
        with guard:
            connection.execute(f"PRAGMA cache_size = {previous}")


class EntityPass:
    """Collects the entities of a run's documents, then links them (see the module doc)."""

    def __init__(self, connection: Connection, guard: AbstractContextManager[Any]) -> None:
        self._connection = connection
        self._guard = guard
        self._resolver = Resolver(connection, deferred=True)
        self._extracted: list[tuple[int, list[str]]] = []
        self.mentions = 0
        with guard:
            repair_cooccurrences(connection)  # an earlier run that was interrupted

    def page_cache(self, documents: int) -> AbstractContextManager[None]:
        """:func:`bulk_page_cache` for a run of ``documents`` documents."""
        return bulk_page_cache(self._connection, self._guard, documents)

    def _add(self, doc_id: int, entities: Sequence[tuple[str, str, str]]) -> None:
        identifiers = [entity[0] for entity in entities]
        self._extracted.append((doc_id, identifiers))
        self.mentions += len(identifiers)

    def extract_one(self, doc_id: int, title: str, text: str, llm: Any) -> None:
        """One document's entities, by ``llm`` (the heuristic when it fails), written in a
        transaction of their own."""
        with self._guard:
            found = extract_entities(self._connection, doc_id, title, text, llm, link=False)
        self._add(doc_id, found.entities)

    def extract_batch(
        self, doc_ids: Sequence[int], texts: Mapping[int, tuple[str, str, Any, Any]]
    ) -> None:
        """The entities of a batch of documents (``texts``: id -> title, body, ...) by the
        heuristic, written in one transaction."""
        connection = self._connection
        with self._guard, write_step(connection):
            for doc_id in doc_ids:
                if doc_id in texts:
                    title, text = texts[doc_id][0], texts[doc_id][1]
                    found = extract_entities(
                        connection, doc_id, title, text, None, link=False, resolver=self._resolver
                    )
                    self._add(doc_id, found.entities)
            self._resolver.flush()

    def link(self) -> int:
        """Write the run's co-occurrences, then link every extracted document, once all
        their mentions are in (document frequencies are then the vault's); returns how many
        links were made."""
        connection = self._connection
        with self._guard, write_transaction(connection):
            self._resolver.finish()
        with self._guard:
            documents = active_documents(connection)
        cache = LinkCache(buffered=True)
        linked = 0
        for start in range(0, len(self._extracted), _LINK_BATCH):
            with self._guard, write_transaction(connection):
                for doc_id, identifiers in self._extracted[start : start + _LINK_BATCH]:
                    linked += link_shared_entities(
                        connection, doc_id, identifiers, documents=documents, cache=cache
                    )
                cache.flush(connection)
        return linked
