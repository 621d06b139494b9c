"""The enrichment area (``vault.enrichment``): A-MEM enrichment of new and changed
documents, ``reindex``, and the evolution of a document's note (``memory_evolution``).

Contract: given the vault's database, its models (the LLM that writes notes, when one is
configured), the document look-up (``get``, refs as for :meth:`Vault.get`), the redaction of
text sent to the LLM and the vault's ``update`` (the re-scan ``reindex`` runs first). Its
statements are those of :mod:`memtrove.graph.amem` and :mod:`memtrove.graph.amem_status`
(notes, links, evolution, entities of enriched documents).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from memtrove.vault.areas import chosen_llm

if TYPE_CHECKING:  # the graph modules load on first use: a search needs neither
    from memtrove.db.database import Database
    from memtrove.graph.amem import EnrichmentReport
    from memtrove.graph.amem_status import EvolutionStatus
    from memtrove.models.registry import Models
    from memtrove.results import UpdateReport
    from memtrove.vault.areas import Lookup, Redact

__all__ = ["EnrichmentArea", "ReindexReport"]


class ReindexReport(NamedTuple):
    """``reindex``: the re-scan, then the enrichment (None when not asked for)."""

    update: UpdateReport
    enrichment: EnrichmentReport | None

    def text(self) -> str:
        lines = [f"reindexed {self.update.summary} in {self.update.elapsed_seconds:.2f}s"]
        if self.enrichment is not None:
            lines.append(self.enrichment.text())
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.update.to_dict(),
            "enrichment": None if self.enrichment is None else self.enrichment.to_dict(),
        }


class EnrichmentArea:
    """A-MEM notes, links and evolution (see :mod:`memtrove.graph.amem`)."""

    def __init__(
        self,
        database: Database,
        *,
        models: Models,
        get: Lookup,
        redact: Redact,
        update: Callable[[], UpdateReport],
    ) -> None:
        self._connection, self._lock = database.connection, database.lock
        self.models, self.get, self.redact, self.update = models, get, redact, update

    def enrich(
        self,
        *,
        force: bool = False,
        limit: int | None = None,
        use_llm: bool = True,
        entities: bool = True,
        progress: Callable[[int, int], None] | None = None,
    ) -> EnrichmentReport:
        """Enrich the active documents that are new or changed since their last enrichment
        (every one with ``force``), newest first, at most ``limit``: notes, links to vector
        neighbours, evolution of their notes, and entities. By the LLM when one is
        configured and ``use_llm``; otherwise by the documented heuristics."""
        from memtrove.graph.amem import enrich_documents, pending_documents

        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise TypeError("limit must be an integer")
        llm = chosen_llm(self.models, use_llm)
        with self._lock:
            pending, unchanged = pending_documents(
                self._connection, force=force, limit=None if limit is None else max(0, limit)
            )
        return enrich_documents(
            self._connection,
            pending,
            llm=llm,
            redact=self.redact if llm is not None else None,
            lock=self._lock,
            entities=entities,
            unchanged=unchanged,
            progress=progress,
        )

    def reindex(
        self, *, enrich: bool = False, force: bool = False, use_llm: bool = True
    ) -> ReindexReport:
        """Re-scan every collection; with ``enrich`` then enrich new and changed documents;
        ``force`` enriches every document again, whatever its enrichment state."""
        update = self.update()
        enrichment = self.enrich(force=force, use_llm=use_llm) if enrich or force else None
        return ReindexReport(update, enrichment)

    def memory_evolution(self, ref: str, limit: int = 10) -> EvolutionStatus:
        """How document ``ref``'s note changed (refs as for :meth:`get`), newest first;
        ``limit`` 1-100."""
        from memtrove.graph.amem_status import evolution_status

        doc_id = self.get(ref).doc_id
        with self._lock:
            return evolution_status(self._connection, doc_id, limit)
