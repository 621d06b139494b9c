"""The graph area (``vault.graph``): typed edges between documents and facts about entities.

Contract: given the vault's database, the document look-up (``get``, refs as for
:meth:`Vault.get`), the redaction of stored text and the vault's clock. Its statements are
those of :mod:`memtrove.graph` (edges, facts, graph builds); documents are only read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the graph modules load on first use: a search needs neither
    from memtrove.db.database import Database
    from memtrove.graph.build import GraphBuildReport
    from memtrove.graph.relations import Relation
    from memtrove.graph.triples import Fact
    from memtrove.results import DocumentSummary
    from memtrove.vault.areas import Clock, Lookup, Redact

__all__ = ["GraphArea"]


class GraphArea:
    """Relations between documents and subject-predicate-object facts."""

    def __init__(self, database: Database, *, get: Lookup, redact: Redact, clock: Clock) -> None:
        self._connection, self._lock = database.connection, database.lock
        self.get, self.redact, self._clock = get, redact, clock

    def relate(
        self,
        source: str,
        target: str,
        relation_type: str,
        weight: float = 1.0,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Record a ``relation_type`` edge from document ``source`` to ``target`` (refs as
        for :meth:`get`); writing it again keeps the larger weight, except ``semantic``
        edges, where the first writer wins (see :mod:`memtrove.graph.relations`)."""
        from memtrove.graph.relations import upsert_relation

        source_id = self.get(source).doc_id
        target_id = self.get(target).doc_id
        with self._lock:
            upsert_relation(self._connection, source_id, target_id, relation_type, weight, metadata)

    def neighbourhood(
        self, ref: str, relation_types: Sequence[str] | None = None
    ) -> tuple[dict[int, DocumentSummary], list[Relation]]:
        """Document ``ref``'s edges (of ``relation_types``, all when None), strongest first,
        and a summary of every document they touch, by doc id (``ref`` included)."""
        from memtrove.graph.relations import relations_of
        from memtrove.index.documents import summaries_by_id

        doc_id = self.get(ref).doc_id
        wanted = set(relation_types) if relation_types is not None else None
        with self._lock:
            edges = [
                edge
                for edge in relations_of(self._connection, doc_id)
                if wanted is None or edge.relation_type in wanted
            ]
            ids = {doc_id} | {edge.source_id for edge in edges} | {edge.target_id for edge in edges}
            return summaries_by_id(self._connection, sorted(ids)), edges

    def relations_among(self, doc_ids: Sequence[int], limit: int = 10) -> list[Relation]:
        """Edges whose two ends are both among ``doc_ids``, strongest first."""
        from memtrove.graph.relations import relations_among

        with self._lock:
            return relations_among(self._connection, doc_ids, limit)

    def relations_of(self, ref: str) -> list[Relation]:
        """Every edge leaving or reaching document ``ref`` (both ends active), strongest
        first."""
        from memtrove.graph.relations import relations_of

        doc_id = self.get(ref).doc_id
        with self._lock:
            return relations_of(self._connection, doc_id)

    def links(self, ref: str) -> list[tuple[str, str, str | None, int | None]]:
        """The links document ``ref`` writes, as stored: ``(kind, target, text, target
        document id or None while unresolved)``; see :mod:`memtrove.graph.links`."""
        from memtrove.graph.links import links_of

        doc_id = self.get(ref).doc_id
        with self._lock:
            return links_of(self._connection, doc_id)

    def build_graphs(
        self,
        graph_types: Sequence[str] | str = ("all",),
        *,
        semantic_threshold: float = 0.7,
        neighbours: int = 5,
    ) -> GraphBuildReport:
        """Add the temporal backbone (effective-time order) and bulk semantic kNN edges
        (cosine >= ``semantic_threshold``, ``neighbours`` per document) over every active
        document; safe to rerun. See :mod:`memtrove.graph.build`."""
        from memtrove.graph.build import build_graphs, parse_graph_types

        kinds = parse_graph_types(
            list(graph_types) if not isinstance(graph_types, str) else graph_types
        )
        with self._lock:
            return build_graphs(
                self._connection, kinds, threshold=semantic_threshold, neighbours=neighbours
            )

    def add_fact(
        self,
        subject: str,
        predicate: str,
        object_name: str | None = None,
        *,
        object_literal: str | None = None,
        valid_from: str | None = None,
        valid_to: str | None = None,
        confidence: float = 1.0,
    ) -> int:
        """Record ``subject predicate object`` (entity ``object_name`` or a literal)."""
        from memtrove.graph.triples import add_fact

        subject = self.redact(subject)  # names are stored and injected like any other text
        if object_name is not None:
            object_name = self.redact(object_name)
        if object_literal is not None:
            object_literal = self.redact(object_literal)
        with self._lock:
            return add_fact(
                self._connection,
                subject,
                predicate,
                object_name,
                object_literal=object_literal,
                valid_from=valid_from,
                valid_to=valid_to,
                confidence=confidence,
            )

    def facts_about(self, text: str, limit: int = 20) -> list[Fact]:
        """Current facts about the entities named in ``text``."""
        from memtrove.graph.triples import facts_about

        with self._lock:
            return facts_about(self._connection, text, now=self._clock(), limit=limit)
