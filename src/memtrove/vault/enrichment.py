"""The Vault's A-MEM methods: enrich new and changed documents, ``reindex``, and the
evolution of a document's note (``memory_evolution_status``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from memtrove.vault.state import VaultState

if TYPE_CHECKING:  # the graph modules load on first use: a search needs neither
    from memtrove.graph.amem import EnrichmentReport
    from memtrove.graph.amem_status import EvolutionStatus
    from memtrove.results import UpdateReport

__all__ = ["EnrichmentAccess", "ReindexReport"]


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


class EnrichmentAccess(VaultState):
    """A-MEM notes, links and evolution (see :mod:`memtrove.graph.amem`)."""

    if TYPE_CHECKING:

        def update(
            self, collections: Sequence[str] | None = None, *, progress: Any = None
        ) -> UpdateReport: ...

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
        llm = self.models.llm if use_llm and self.models.has_llm else None
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
