"""The knowledge area (``vault.knowledge``): the entities documents name, and ``kg_query``
over the subject-predicate-object facts about them.

Contract: given the vault's database, its models (the LLM that extracts entities, when one is
configured), the document look-up (``get``, refs as for :meth:`Vault.get`), the redaction of
stored text and the vault's clock. Its statements are those of :mod:`memtrove.graph.entities`,
:mod:`memtrove.graph.entity_resolution`, :mod:`memtrove.graph.amem_entities` (entities,
mentions, ``entity`` edges) and :mod:`memtrove.graph.triples` (facts); documents are only read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memtrove.vault.areas import chosen_llm

if TYPE_CHECKING:  # the graph modules load on first use: a search needs neither
    from memtrove.db.database import Database
    from memtrove.graph.entities import EntityExtraction
    from memtrove.graph.entity_resolution import Entity
    from memtrove.graph.triples import KnowledgeResult
    from memtrove.models.registry import Models
    from memtrove.vault.areas import Clock, Lookup, Redact

__all__ = ["BULK_BATCH", "KnowledgeArea"]

BULK_BATCH = 200  # documents per write transaction in a run without an LLM


class KnowledgeArea:
    """Entities (extraction, resolution, mentions, ``entity`` edges) and ``kg_query``."""

    def __init__(
        self, database: Database, *, models: Models, get: Lookup, redact: Redact, clock: Clock
    ) -> None:
        self._connection, self._lock = database.connection, database.lock
        self.models, self.get, self.redact, self._clock = models, get, redact, clock

    def extract_entities(self, ref: str, *, use_llm: bool = True) -> EntityExtraction:
        """Extract and record the entities of one document (refs as for :meth:`get`),
        replacing what an earlier run recorded for it; by the LLM when one is configured
        (the heuristic when it fails), else by the heuristic."""
        from memtrove.graph.entities import extract_entities

        document = self.get(ref)
        llm = chosen_llm(self.models, use_llm)
        with self._lock:
            return extract_entities(
                self._connection, document.doc_id, document.title, document.body, llm
            )

    def document_entities(self, ref: str, limit: int = 100) -> list[Entity]:
        """The entities document ``ref`` names (as extraction recorded them), by name;
        ``kg_query(entity.entity_id)`` gives the facts about each."""
        from memtrove.graph.entities import document_entities
        from memtrove.retrieval.arguments import check_limit

        limit = check_limit(limit, ceiling=1000)
        doc_id = self.get(ref).doc_id
        with self._lock:
            return document_entities(self._connection, doc_id, limit)

    def enrich_entities(
        self,
        *,
        everything: bool = False,
        use_llm: bool = True,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, Any]:
        """Extract entities for every active document that has none recorded (every active
        document with ``everything``); re-running replaces a document's mentions, so it is
        safe to repeat. Documents are linked by ``entity`` edges once all are extracted.
        Returns counts: documents, entities, by source, LLM failures, edges written."""
        from memtrove.graph.amem_entities import EntityPass
        from memtrove.graph.entity_resolution import document_text, documents_to_extract

        llm = chosen_llm(self.models, use_llm)
        with self._lock:
            pending = documents_to_extract(self._connection, everything=everything)
        report: dict[str, Any] = {
            "documents": 0,
            "entities": 0,
            "llm": 0,
            "heuristic": 0,
            "llm_failures": 0,
        }
        # Without an LLM, documents are written in batches of one transaction each (a
        # commit per document is most of the cost); with one, never across a model call.
        batch = BULK_BATCH if llm is None else 1
        entity_pass = EntityPass(self._connection, self._lock, len(pending) if llm is None else 0)
        try:
            for start in range(0, len(pending), batch):
                chosen = pending[start : start + batch]
                with self._lock:
                    texts = {
                        doc_id: text
                        for doc_id in chosen
                        if (text := document_text(self._connection, doc_id)) is not None
                    }
                if llm is None:
                    found = entity_pass.extract_batch(chosen, texts)
                else:
                    found = [
                        entity_pass.extract_one(doc_id, title, body, llm)
                        for doc_id, (title, body) in texts.items()
                    ]
                for extraction in found:
                    report["documents"] += 1
                    report["entities"] += len(extraction.entities)
                    report[extraction.source] += 1
                    report["llm_failures"] += extraction.error is not None
                if progress is not None:
                    progress(min(start + batch, len(pending)), len(pending))
            # Linked once every mention is in: document frequencies are then the vault's.
            report["entity_edges"] = entity_pass.link()
        finally:
            entity_pass.close()
        return report

    def kg_query(
        self, entity: str, as_of: str | None = None, direction: str = "both"
    ) -> KnowledgeResult:
        """Facts about ``entity`` (a name or ``vault:type:slug``): all of them with a
        ``current`` flag, or those valid at ``as_of`` (YYYY-MM-DD: the end of that day);
        ``direction`` outgoing (it is the subject), incoming (the object) or both."""
        from memtrove.graph.triples import kg_query

        with self._lock:
            return kg_query(
                self._connection, entity, as_of=as_of, direction=direction, now=self._clock()
            )

    def add_triple(
        self,
        subject: str,
        predicate: str,
        object_name: str,
        *,
        subject_type: str | None = None,
        object_type: str | None = None,
        valid_from: str | None = None,
        valid_to: str | None = None,
        confidence: float = 1.0,
        source: str | None = None,
        source_fact: str | None = None,
    ) -> int:
        """Record a fact whose entities may carry types (``person``, ``tool``, ...): a
        typed name resolves canonically, an untyped one inherits the type of the one
        entity of that exact name. ``prefers``/``avoids`` keep ``object_name`` as a
        literal. ``source``: the document the fact comes from (refs as for :meth:`get`).
        Names and literals are stored redacted, like every other write."""
        from memtrove.graph.triples import add_fact

        source_doc_id = self.get(source).doc_id if source is not None else None
        literal_side = predicate.strip().lower() in ("prefers", "avoids")
        with self._lock:
            return add_fact(
                self._connection,
                self.redact(subject),
                predicate,
                None if literal_side else self.redact(object_name),
                object_literal=self.redact(object_name) if literal_side else None,
                subject_type=subject_type,
                object_type=object_type,
                valid_from=valid_from,
                valid_to=valid_to,
                confidence=confidence,
                source_doc_id=source_doc_id,
                source_fact=self.redact(source_fact) if source_fact else None,
            )
