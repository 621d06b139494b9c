"""The intent area (``vault.intent``): intent-aware retrieval: ``intent_search``,
``find_causal_links``, ``query_plan``, ``timeline_of`` and ``retrieve`` (``memory_retrieve``).

Contract: given the vault's database, its retriever and models (the LLM that decomposes a
plan), the vault's clock (WHEN questions and timelines are dated against it), the retrieval
area (:mod:`.retrieval`), through which every ranking is checked, collapsed and presented and
plain searches run, and the document look-up (``get``, refs as for :meth:`Vault.get`). Its
statements are those of :mod:`memtrove.retrieval.intent`, :mod:`memtrove.retrieval.planner`,
:mod:`memtrove.retrieval.temporal_timeline`, :mod:`memtrove.graph.traversal` (``relations``)
and :mod:`memtrove.lifecycle.sessions` (``session_log``): it only reads.

Their modules load when a method runs: opening a vault for a plain search imports none of
them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from memtrove.results import SearchResult, SearchResults, SessionRecord
from memtrove.retrieval.ranking import NO_VECTORS, Ranking

if TYPE_CHECKING:
    from memtrove.db.database import Database
    from memtrove.graph.traversal import CausalLink
    from memtrove.models.registry import Models
    from memtrove.retrieval.intent import IntentClassification
    from memtrove.retrieval.pipeline import Retriever
    from memtrove.retrieval.planner import Clause
    from memtrove.retrieval.router import Route
    from memtrove.vault.areas import Clock, Lookup
    from memtrove.vault.retrieval import RetrievalArea

__all__ = ["CausalLinks", "IntentArea", "IntentResults", "PlanResults", "TimelineResults"]


class IntentResults(SearchResults):
    """``intent_search`` results plus the intent they were searched for."""

    def __init__(
        self,
        results: Iterable[SearchResult] = (),
        *,
        classification: IntentClassification,
        **kwargs: Any,
    ) -> None:
        super().__init__(results, **kwargs)
        self.classification = classification

    @property
    def intent(self) -> str:
        return self.classification.intent

    def to_dict(self) -> dict[str, Any]:
        return {**self.classification.to_dict(), **super().to_dict()}


class PlanResults(SearchResults):
    """``query_plan`` results, the clauses that ran, and which clauses found each result."""

    def __init__(
        self,
        results: Iterable[SearchResult] = (),
        *,
        clauses: Sequence[Clause] = (),
        provenance: Mapping[str, Sequence[int]] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(results, **kwargs)
        self.clauses = list(clauses)
        self.provenance = {docid: list(found) for docid, found in (provenance or {}).items()}

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        for item in data["results"]:
            item["clauses"] = self.provenance.get(item["docid"], [])
        return {"clauses": [clause.to_dict() for clause in self.clauses], **data}


class TimelineResults(SearchResults):
    """``memory_retrieve``'s timeline: documents in time order (oldest first) in the window
    the question names, and the sessions active in it."""

    def __init__(
        self,
        results: Iterable[SearchResult] = (),
        *,
        window: Mapping[str, str | None] | None = None,
        sessions: Sequence[SessionRecord] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(results, **kwargs)
        self.window = dict(window or {})
        self.sessions = list(sessions)

    def to_dict(self) -> dict[str, Any]:
        return {
            "window": self.window,
            "sessions": [session.to_dict() for session in self.sessions],
            **super().to_dict(),
        }


class CausalLinks(list["CausalLink"]):
    """The causal edges around one document (``find_causal_links``)."""

    def __init__(
        self, links: Iterable[CausalLink], *, docid: str, title: str, direction: str, depth: int
    ) -> None:
        super().__init__(links)
        self.docid = docid
        self.title = title
        self.direction = direction
        self.depth = depth

    def to_dict(self) -> dict[str, Any]:
        return {
            "docid": self.docid,
            "title": self.title,
            "direction": self.direction,
            "depth": self.depth,
            "count": len(self),
            "links": [link.to_dict() for link in self],
        }


def _found_by(results: SearchResults) -> dict[str, Any]:
    """How ``results`` were found (stages, skipped stages, warnings, degradation), for the
    richer results built from them."""
    return {
        "stages": results.stages,
        "skipped": results.skipped,
        "warnings": results.warnings,
        "degraded_reason": results.degraded_reason,
        "degraded_legs": results.degraded_legs,
    }


class IntentArea:
    """Intent-aware retrieval over the vault's graph."""

    def __init__(
        self,
        database: Database,
        *,
        retriever: Retriever,
        models: Models,
        clock: Clock,
        retrieval: RetrievalArea,
        get: Lookup,
    ) -> None:
        self._connection, self._lock = database.connection, database.lock
        self._retriever = retriever
        self.models, self._clock, self._retrieval, self.get = models, clock, retrieval, get

    def intent_search(
        self,
        query: str,
        limit: int = 10,
        *,
        force_intent: str | None = None,
        enable_graph_traversal: bool = True,
        collections: Sequence[str] | None = None,
        min_score: float = 0.0,
        include_internal: bool = True,
    ) -> IntentResults:
        """Classify the question (WHY / WHEN / ENTITY / WHAT) and search for it: intent-
        weighted fusion of BM25 and vectors, graph traversal for WHY and ENTITY, reranking of
        short snippets when a reranker is configured, composite scoring (see
        :mod:`memtrove.retrieval.intent`)."""
        from memtrove.retrieval.intent import check_intent, run_intent_search

        force_intent = check_intent(force_intent)
        query, limit, filters = self._retrieval.check(
            query, limit, collections, None, None, None, include_internal
        )
        found: list[IntentClassification] = []

        def fetch(depth: int) -> Ranking:
            ranking, classification = run_intent_search(
                self._retriever,
                self._connection,
                self.models,
                query,
                depth,
                filters,
                force_intent=force_intent,
                enable_graph_traversal=bool(enable_graph_traversal),
                texts=self._retrieval.bodies,
                co_activation=self._retrieval.co_activation,
                now=self._clock(),
            )
            found.append(classification)
            return ranking

        with self._lock:
            ranking, copies = self._retrieval.collapsed(fetch, limit, filters=filters)
            results = self._retrieval.present(query, ranking, min_score, copies=copies, limit=limit)
        return IntentResults(results, classification=found[-1], **_found_by(results))

    def find_causal_links(self, ref: str, direction: str = "both", depth: int = 5) -> CausalLinks:
        """The causal chain through ``ref``: what it led to (``causes``), what led to it
        (``caused_by``) or ``both``, up to ``depth`` (1-10) hops."""
        from memtrove.graph.traversal import causal_links, check_causal_depth, check_direction

        direction = check_direction(direction)
        depth = check_causal_depth(depth)
        document = self.get(ref)
        with self._lock:
            links = causal_links(self._connection, document.doc_id, direction, depth)
        return CausalLinks(
            links, docid=document.docid, title=document.title, direction=direction, depth=depth
        )

    def query_plan(
        self,
        query: str,
        limit: int = 10,
        *,
        collections: Sequence[str] | None = None,
        min_score: float = 0.0,
        include_internal: bool = True,
    ) -> PlanResults:
        """Split a multi-topic question into sub-queries (the LLM when configured, else by
        wording), run each, and merge them with provenance (see
        :mod:`memtrove.retrieval.planner`)."""
        from memtrove.retrieval.candidates import scoring_inputs
        from memtrove.retrieval.planner import decompose, run_plan
        from memtrove.retrieval.scoring import QUERY_WEIGHTS, apply_composite

        query, limit, filters = self._retrieval.check(
            query, limit, collections, None, None, None, include_internal
        )
        ranking = Ranking(stages=["plan"])
        clauses: list[Clause] = []
        if not self.models.has_llm:
            ranking.skipped["llm decomposition"] = "no LLM configured (MEMTROVE_LLM_URL)"
        with self._lock:
            llm = self.models.llm if self.models.has_llm else None
            clauses = decompose(self._connection, query, llm, ranking.warnings)
            provenance: dict[int, list[int]] = {}

            def fetch(depth: int) -> Ranking:
                merged, found = run_plan(
                    self._retriever, clauses, max(depth, 30), filters, ranking.skipped
                )
                provenance.update(found)
                scored = apply_composite(
                    scoring_inputs(self._connection, merged),
                    QUERY_WEIGHTS,
                    self._clock(),
                    co_activation=self._retrieval.co_activation,
                )
                ranking.hits = scored
                missing = ranking.skipped.get("vector")
                if missing not in (None, NO_VECTORS) and "vector" not in ranking.failed:
                    ranking.failed.append("vector")  # run_plan records only the reason
                if "composite" not in ranking.stages:
                    channels = ["bm25"] + (["vector"] if "vector" not in ranking.skipped else [])
                    ranking.stages.extend([*channels, "merge", "composite"])
                return ranking

            ranking, copies = self._retrieval.collapsed(fetch, limit, filters=filters)
            results = self._retrieval.present(query, ranking, min_score, copies=copies, limit=limit)
        by_docid = {
            result.docid: sorted(set(provenance.get(result.doc_id, []))) for result in results
        }
        return PlanResults(results, clauses=clauses, provenance=by_docid, **_found_by(results))

    def timeline_of(
        self,
        query: str,
        limit: int = 10,
        *,
        collections: Sequence[str] | None = None,
        include_internal: bool = True,
    ) -> TimelineResults:
        """What happened around the time ``query`` names (the last session when it names
        none): documents in time order and the sessions of that window (see
        :mod:`memtrove.retrieval.temporal_timeline`)."""
        from memtrove.lifecycle.sessions import session_records
        from memtrove.retrieval.temporal_timeline import SESSION_LOOKBACK, run_timeline

        query, limit, filters = self._retrieval.check(
            query, limit, collections, None, None, None, include_internal
        )
        with self._lock:
            sessions = session_records(self._connection, SESSION_LOOKBACK)
            found = run_timeline(
                self._retriever, self._connection, query, limit, filters, sessions, self._clock()
            )
            if found is None:
                return TimelineResults(
                    stages=["timeline"], skipped={"timeline": "no dated document or session"}
                )
            results = self._retrieval.present(query, found.ranking, 0.0, limit=limit)
        return TimelineResults(
            results, window=found.window_dict(), sessions=found.sessions, **_found_by(results)
        )

    def retrieve(
        self,
        query: str,
        mode: str = "auto",
        limit: int = 10,
        *,
        collections: Sequence[str] | None = None,
        include_internal: bool = True,
    ) -> tuple[Route, SearchResults]:
        """``memory_retrieve``: route ``query`` by its wording (or run ``mode``), see
        :mod:`memtrove.retrieval.router`; the route says what ran. ``include_internal=False``
        leaves internal collections out (in each channel's query) unless one is named in
        ``collections``."""
        from memtrove.errors import EmbeddingSpaceError, ModelError
        from memtrove.retrieval.router import MODE_INTENTS, route

        chosen = route(query, mode)
        internal = include_internal
        if chosen.mode == "keyword":
            return chosen, self._retrieval.search(
                query, limit, collections=collections, include_internal=internal
            )
        if chosen.mode == "semantic":
            failed: list[str] = []
            try:
                results = self._retrieval.vsearch(
                    query, limit, collections=collections, include_internal=internal
                )
                reason = "no vector match; ran BM25"
            except (EmbeddingSpaceError, ModelError) as error:
                results, reason = SearchResults(), f"{error}; ran BM25"
                failed = [] if str(error) == NO_VECTORS else ["vector"]
            if results:
                return chosen, results
            fallback = self._retrieval.search(
                query, limit, collections=collections, include_internal=internal
            )
            legs = [*failed, *fallback.degraded_legs]
            reasons = (["leg-failed"] if failed else []) + [
                reason for reason in (fallback.degraded_reason or "").split(",") if reason
            ]
            return chosen, SearchResults(
                fallback,
                stages=fallback.stages,
                skipped={**fallback.skipped, "vector": reason},
                warnings=fallback.warnings,
                degraded_reason=",".join(dict.fromkeys(reasons)) or None,
                degraded_legs=legs,
            )
        if chosen.mode == "timeline":
            return chosen, self.timeline_of(
                query, limit, collections=collections, include_internal=internal
            )
        if chosen.mode in MODE_INTENTS:
            intent = MODE_INTENTS[chosen.mode]
            return chosen, self.intent_search(
                query,
                limit,
                force_intent=intent,
                enable_graph_traversal=True,
                collections=collections,
                include_internal=internal,
            )
        if chosen.mode == "complex":
            return chosen, self.query_plan(
                query, limit, collections=collections, include_internal=internal
            )
        return chosen, self._retrieval.hybrid(
            query, limit, collections=collections, include_internal=internal
        )
