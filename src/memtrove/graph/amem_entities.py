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
from contextlib import AbstractContextManager, ExitStack, contextmanager, suppress
from itertools import chain
from typing import TYPE_CHECKING, Any

from memtrove.db.connection import Connection, DatabaseError, write_step, write_transaction
from memtrove.graph.entities import EntityExtraction, ExtractedEntity, extract_entities
from memtrove.graph.entity_links import (
    LinkCache,
    active_documents,
    link_shared_entities,
    naming_of,
    write_entity_edges,
)
from memtrove.graph.entity_resolution import Resolver, cooccurrences_pending, repair_cooccurrences

if TYPE_CHECKING:
    from memtrove.index.workers import Helper
    from memtrove.lifecycle.leases import Lease

__all__ = [
    "BULK_CACHE_KIB",
    "BULK_DOCUMENTS",
    "DEFERRAL_LEASE",
    "EntityPass",
    "bulk_page_cache",
    "deferral_lease",
    "release_lease",
]

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
    cache = ExitStack()  # entered and left under the guard, held while the run lasts
    with guard:
        cache.enter_context(connection.catalog.large_cache(BULK_CACHE_KIB))
    try:
        yield
    finally:
        with guard:
            cache.close()


DEFERRAL_LEASE = "entity-cooccurrences"


def deferral_lease(
    connection: Connection, guard: AbstractContextManager[Any], documents: int
) -> Lease | None:
    """For a run of more than :data:`BULK_DOCUMENTS` documents, the lease under which it
    counts co-occurrences in memory (one such run at a time), after recounting what an
    interrupted one left (see ``m017_vault_state``); None for a small run (which still
    recounts, under the lease for that moment, what an interrupted run left), or when
    another process holds it (that run then writes its co-occurrences batch by batch)."""
    from memtrove.errors import LeaseHeldError, VaultBusyError
    from memtrove.lifecycle.leases import Lease

    with guard:
        if documents <= BULK_DOCUMENTS and not cooccurrences_pending(connection):
            return None
        try:
            lease = Lease.acquire(connection, DEFERRAL_LEASE)
        except (LeaseHeldError, VaultBusyError):
            return None
        repair_cooccurrences(connection)
    if documents <= BULK_DOCUMENTS:  # a small run only repaired what an interrupted one left
        release_lease(lease, guard)
        return None
    return lease


def release_lease(lease: Lease | None, guard: AbstractContextManager[Any]) -> None:
    """Release ``lease`` if there is one; a failure leaves it to expire."""
    from memtrove.errors import MemtroveError

    if lease is None:
        return
    with guard, suppress(MemtroveError, DatabaseError):
        lease.release()


class EntityPass:
    """Collects the entities of a run's documents, then links them (see the module doc)."""

    def __init__(
        self, connection: Connection, guard: AbstractContextManager[Any], documents: int = 0
    ) -> None:
        self._connection = connection
        self._guard = guard
        self._lease = deferral_lease(connection, guard, documents)
        self._resolver = Resolver(connection, deferred=self._lease is not None)
        self._extracted: list[tuple[int, list[str]]] = []
        self.mentions = 0

    def _renew(self) -> None:
        """Inside a batch's transaction: the deferral lease is still this run's (a run
        whose lease was taken over stops here, its pairs unwritten: the new holder's
        recount counted what it had committed)."""
        if self._lease is not None:
            self._lease.renew()

    def close(self) -> None:
        """Give the deferral lease back (it expires anyway)."""
        release_lease(self._lease, self._guard)
        self._lease = None

    def page_cache(self, documents: int) -> AbstractContextManager[None]:
        """:func:`bulk_page_cache` for a run of ``documents`` documents."""
        return bulk_page_cache(self._connection, self._guard, documents)

    def _add(self, doc_id: int, entities: Sequence[tuple[str, str, str]]) -> None:
        identifiers = [entity[0] for entity in entities]
        self._extracted.append((doc_id, identifiers))
        self.mentions += len(identifiers)

    def extract_one(self, doc_id: int, title: str, text: str, llm: Any) -> EntityExtraction:
        """One document's entities, by ``llm`` (the heuristic when it fails), written in a
        transaction of their own."""
        with self._guard:
            found = extract_entities(self._connection, doc_id, title, text, llm, link=False)
        self._add(doc_id, found.entities)
        return found

    def extract_batch(
        self,
        doc_ids: Sequence[int],
        texts: Mapping[int, tuple[Any, ...]],
        found_ahead: Mapping[int, tuple[list[ExtractedEntity], int]] | None = None,
    ) -> list[EntityExtraction]:
        """The entities of a batch of documents (``texts``: id -> title, body, ...) by the
        heuristic (``found_ahead``: what it found for some of them already), written in
        one transaction (a step of the caller's, when it has one)."""
        connection = self._connection
        ahead = found_ahead or {}
        extractions: list[EntityExtraction] = []
        with self._guard, write_step(connection):
            self._renew()
            for doc_id in doc_ids:
                if doc_id in texts:
                    title, text = texts[doc_id][0], texts[doc_id][1]
                    found = extract_entities(
                        connection,
                        doc_id,
                        title,
                        text,
                        None,
                        link=False,
                        resolver=self._resolver,
                        heuristic=ahead.get(doc_id),
                    )
                    self._add(doc_id, found.entities)
                    extractions.append(found)
            self._resolver.flush()
        return extractions

    def link(self, helper: Helper | None = None) -> int:
        """Write the run's co-occurrences, then link every extracted document, once all
        their mentions are in (document frequencies are then the vault's); returns how many
        links were made. ``helper`` (a large run's) works out the edges while this process
        writes the co-occurrences and then each chunk of edges; should it fail, this
        process links the rest (afresh: rewriting an edge the helper's rows wrote changes
        nothing)."""
        from memtrove.graph.amem_ahead import linked, send_links

        connection = self._connection
        extracted = self._extracted
        with self._guard:
            documents = active_documents(connection)
        cache = LinkCache(buffered=True)
        asked = False
        if helper is not None and extracted:
            with self._guard:  # the mentions are all in: what each entity names is settled
                cache.naming.update(
                    naming_of(connection, chain.from_iterable(ids for _, ids in extracted))
                )
            asked = send_links(helper, documents, cache.naming, extracted, _LINK_BATCH)
        with self._guard, write_transaction(connection):
            self._renew()
            self._resolver.finish()
        total = 0
        for start in range(0, len(extracted), _LINK_BATCH):
            answer = linked(helper) if asked and helper is not None else None
            asked = answer is not None
            with self._guard, write_transaction(connection):
                self._renew()
                if answer is not None:
                    total += answer[0]
                    write_entity_edges(connection, answer[1])
                    continue
                for doc_id, identifiers in extracted[start : start + _LINK_BATCH]:
                    total += link_shared_entities(
                        connection, doc_id, identifiers, documents=documents, cache=cache
                    )
                cache.flush(connection)
        return total
