"""Retrieval over one vault: BM25, vectors, their fusion, and the full ``query`` pipeline.

``query`` runs the stages of the spec, each only when it can:

1. BM25 probe; a strong, clear top hit (>= 0.85, gap >= 0.15, no intent) bypasses
   expansion, vectors and reranking.
2. Typed expansion by the LLM: ``lex`` variants go to BM25 only, ``vec``/``hyde`` to vectors
   only; the original query goes to both with twice the weight.
3. Reciprocal rank fusion (k = 60) of every list; the top ``candidate_limit`` go on.
4. Reranking of each candidate's best 4,000-character window (query terms 1.0, intent
   terms 0.5), blended 0.9 reranker + 0.1 normalised RRF; a degenerate reranker (no score
   above 1e-4) is ignored with a warning.
5. Composite scoring (relevance, recency, confidence, quality, pin, length, frequency,
   co-activation) with the ``query`` weights, or the recency weights for recency questions.
6. MMR: near-duplicates (bigram Jaccard > 0.6) are demoted below distinct results.

Without an LLM or a reranker their stages are skipped, and the result says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from memtrove.db.connection import Connection
from memtrove.errors import EmbeddingSpaceError, ModelError, ModelUnavailableError
from memtrove.models.protocols import Embedder, Vectors
from memtrove.models.registry import Models
from memtrove.retrieval.candidates import recent_documents, scoring_inputs
from memtrove.retrieval.entity_channel import NamedEntity, named_entities
from memtrove.retrieval.filters import Filters
from memtrove.retrieval.fts import (
    linear_relevance,
    parse_query,
    search_documents,
)
from memtrove.retrieval.ranking import NO_VECTORS, Ranking
from memtrove.retrieval.recency import RecencyPlan, recency_plan
from memtrove.retrieval.scoring import (
    QUERY_WEIGHTS,
    RECENCY_FIRST_TYPES,
    apply_composite,
    has_profile_intent,
)

# The vector, fusion, expansion, reranking and MMR stages load on first use (each method
# imports its own): a plain BM25 search, the CLI's most frequent, needs none of them.
if TYPE_CHECKING:
    from memtrove.retrieval.second_space import SecondMatrix
    from memtrove.retrieval.temporal import TimeConstraint
    from memtrove.retrieval.vector_matrix import VectorMatrix


__all__ = [
    "BYPASS_GAP",
    "BYPASS_SCORE",
    "CANDIDATE_LIMIT",
    "Filters",
    "Ranking",
    "Retriever",
]

BYPASS_SCORE = 0.85
BYPASS_GAP = 0.15
CANDIDATE_LIMIT = 30
RECENT_CANDIDATES = 5
RECENT_SHARE = 0.3
MMR_CHARS = 4000  # near-duplicates show in their openings; comparing whole bodies costs 10x
BM25_PROBE = 20  # a floor: the probe also fetches the candidate limit (30) when larger
ORIGINAL_WEIGHT = 2.0
EXPANSION_WEIGHT = 1.0
_WARNING_INTERVAL = 60.0

CoActivation = Callable[[int], int]


_last_warning: dict[str, float] = {}


def _rate_limited(key: str, message: str, warnings: list[str]) -> None:
    """Add ``message`` to the result's warnings at most once a minute per kind, per process.

    The reason a stage was skipped is always in ``Ranking.skipped``; warnings are what an
    interface prints, so a broken reranker does not flood a busy log.
    """
    now = time.monotonic()
    last = _last_warning.get(key)
    if last is None or now - last >= _WARNING_INTERVAL:
        warnings.append(message)
        _last_warning[key] = now


class Retriever:
    """The retrieval channels of one vault connection and its models."""

    def __init__(
        self, connection: Connection, models: Models, vault_path: str | None = None
    ) -> None:
        self._connection = connection
        self._models = models
        self._vault_path = vault_path  # file or URL: names the mapped vector file (in the cache)
        self._vectors_in_memory: VectorMatrix | None = None  # built with the first vector
        self._second_matrix: SecondMatrix | None = None  # the second space's, when it is on

    @property
    def matrix(self) -> VectorMatrix:
        """The vault's fragment vectors held in memory (loaded on first use)."""
        if self._vectors_in_memory is None:
            from memtrove.retrieval.vector_file import vector_file
            from memtrove.retrieval.vector_matrix import VectorMatrix

            folder, path = self._models.cache_folder, self._vault_path
            self._vectors_in_memory = VectorMatrix(
                vector_file(folder, path) if folder and path else None
            )
        return self._vectors_in_memory

    # -- channels ------------------------------------------------------------------------------

    def bm25(
        self, query: str, limit: int, filters: Filters, *, raw: bool = False
    ) -> list[tuple[int, float]]:
        """(doc id, score) best first; ``raw`` gives ``|bm25|`` instead of the [0, 1] score."""
        hits = search_documents(self._connection, parse_query(query), limit=limit, filters=filters)
        return [(hit.doc_id, abs(hit.bm25) if raw else hit.score) for hit in hits]

    def query_embedder(self) -> Embedder:
        """The embedder of the stored space: the configured one, else the embedded default.

        Raises :class:`EmbeddingSpaceError` when the vault has no vectors or only vectors
        of a space no available embedder produces (never mixing spaces).
        """
        from memtrove.retrieval.vectors import stored_space

        space = stored_space(self._connection)
        if space is None:
            raise EmbeddingSpaceError(NO_VECTORS)
        primary = self._models.embedder
        try:
            matches = (primary.identity, primary.dimensions) == (space.identity, space.dimensions)
            forget = getattr(primary, "forget_dimensions", None)
            if not matches and forget is not None and primary.identity == space.identity:
                forget()  # a size learnt from one bad answer: ask the service again
                matches = primary.dimensions == space.dimensions
        except ModelUnavailableError:
            matches = False
            fallback = self._models.fallback_embedder
            if (fallback.identity, fallback.dimensions) == (space.identity, space.dimensions):
                return fallback
            raise
        if matches:
            return primary
        raise EmbeddingSpaceError(
            f"the vault's vectors come from {space}, but the configured embedder is "
            f"{primary.identity} ({primary.dimensions}-d); run `memtrove embed --force` "
            "to re-embed, or configure the original embedder"
        )

    def embed_query(self, query: str) -> Vectors:
        from memtrove.retrieval.query_vectors import query_vector

        embedder = self.query_embedder()
        try:
            return query_vector(self._connection, embedder, query)
        except ModelUnavailableError:
            fallback = self._models.fallback_embedder
            if fallback is embedder or (fallback.identity, fallback.dimensions) != (
                embedder.identity,
                embedder.dimensions,
            ):
                raise
            return query_vector(self._connection, fallback, query)

    def vectors(
        self, query: str, limit: int, filters: Filters, vector: Vectors | None = None
    ) -> list[tuple[int, float, int]]:
        """(doc id, cosine, best fragment seq), best first."""
        from memtrove.retrieval.vectors import search_vectors

        if vector is None:
            vector = self.embed_query(query)
        hits = search_vectors(self._connection, vector, limit, matrix=self.matrix, filters=filters)
        return [(hit.doc_id, hit.score, hit.seq) for hit in hits]

    # -- hybrid --------------------------------------------------------------------------------

    def hybrid(
        self,
        query: str,
        limit: int,
        filters: Filters,
        *,
        vectors: bool = True,
        passages: bool = False,
    ) -> Ranking:
        """BM25 and vectors fused by score, plus conversation context (see retrieval.hybrid).

        Without vectors (none stored, or ``vectors=False``) it is BM25 with conversation
        context, and ``skipped`` says why. ``passages``: the keyword channel blends each
        document's best passage in (``retrieval.hybrid.keyword_channel``).
        """
        from memtrove.retrieval.fusion import normalize_max
        from memtrove.retrieval.hybrid import HYBRID_DEPTH

        ranking = Ranking(stages=["bm25"])
        depth = max(limit, HYBRID_DEPTH)
        if passages:
            from memtrove.retrieval.hybrid import keyword_channel

            lexical = keyword_channel(self._connection, query, depth, filters)
        else:
            lexical = self.bm25(query, depth, filters, raw=True)
        if not vectors:
            ranking.skipped["vector"] = "not asked for"
        fused = self._score_fused(query, depth, filters, ranking, lexical=lexical, vectors=vectors)
        ranking.hits = normalize_max(self._with_context(fused, filters, ranking))[:limit]
        return ranking

    def _score_fused(
        self,
        query: str,
        depth: int,
        filters: Filters,
        ranking: Ranking,
        lexical: list[tuple[int, float]] | None = None,
        vectors: bool = True,
    ) -> list[tuple[int, float]]:
        """``hybrid``'s score fusion of BM25 (raw magnitudes) and cosines, best first.

        Sets ``ranking.scale``: the best BM25 hit's [0, 1) score, else the best cosine.
        """
        from memtrove.retrieval.hybrid import FUSION_ALPHA, SECOND_FIRST_ALPHA, score_fusion

        if lexical is None:
            lexical = self.bm25(query, depth, filters, raw=True)
        top = max((score for _, score in lexical), default=0.0)
        ranking.scale = top / (1.0 + top) if top > 0 else None
        cosine = self._cosines(query, depth, filters, ranking, lexical) if vectors else {}
        pool = [*(doc for doc, _ in lexical), *cosine]
        second = self.second_cosines(query, depth, filters, ranking, pool) if vectors else {}
        alpha = SECOND_FIRST_ALPHA if second else FUSION_ALPHA
        fused = score_fusion(lexical, cosine, alpha, second)
        ranking.stages.append("fusion")
        return sorted(fused.items(), key=lambda item: (-item[1], item[0]))

    def _cosines(
        self,
        query: str,
        depth: int,
        filters: Filters,
        ranking: Ranking,
        lexical: list[tuple[int, float]],
    ) -> dict[int, float]:
        """Cosines of the vector hits and of every BM25 hit they missed (0 when a document
        has no vector); empty, with ``skipped`` saying why, when vectors cannot be used."""
        from memtrove.retrieval.vectors import document_similarities

        try:
            vector = self.embed_query(query)
            semantic = self.vectors(query, depth, filters, vector=vector)
        except (EmbeddingSpaceError, ModelError) as error:
            ranking.fail("vector", error)
            return {}
        if ranking.scale is None and semantic:
            ranking.scale = max(0.0, min(1.0, semantic[0][1]))
        ranking.stages.append("vector")
        ranking.best_seq.update({doc: seq for doc, _, seq in semantic})
        cosine = {doc: score for doc, score, _ in semantic}
        missing = [doc for doc, _ in lexical if doc not in cosine]
        cosine.update(document_similarities(self._connection, vector, missing, self.matrix))
        for doc in missing:
            cosine.setdefault(doc, 0.0)
        return cosine

    def second_cosines(
        self, query: str, depth: int, filters: Filters, ranking: Ranking, pool: Sequence[int]
    ) -> dict[int, float]:
        """The second space's channel (retrieval.second_space); {} when it is off."""
        if not self._models.settings.embed_second:
            return {}
        from memtrove.retrieval.second_space import STAGE, SecondMatrix, second_channel

        if self._second_matrix is None:
            self._second_matrix = SecondMatrix()
        channel = second_channel(
            self._connection, self._models, self._second_matrix, query, depth, filters, pool
        )
        if channel.error is not None:
            ranking.fail(STAGE, channel.error)
        elif channel.skipped:
            ranking.skipped[STAGE] = channel.skipped
        elif channel.cosines:
            ranking.stages.append(STAGE)
        return channel.cosines

    def _try_vectors(
        self, query: str, depth: int, filters: Filters, ranking: Ranking
    ) -> list[tuple[int, float, int]] | None:
        try:
            hits = self.vectors(query, depth, filters)
        except (EmbeddingSpaceError, ModelError) as error:
            ranking.fail("vector", error)
            return None
        ranking.stages.append("vector")
        ranking.best_seq.update({doc: seq for doc, _, seq in hits})
        return hits

    # -- the full pipeline -----------------------------------------------------------------------

    def query(
        self,
        query: str,
        limit: int,
        filters: Filters,
        *,
        intent: str | None = None,
        candidate_limit: int = CANDIDATE_LIMIT,
        diverse: bool = True,
        co_activation: CoActivation | None = None,
        texts: Callable[[Sequence[int]], dict[int, str]],
        now: datetime | None = None,
        diverse_limit: int | None = None,
    ) -> Ranking:
        """Run the pipeline; ``texts`` returns document bodies for reranking and MMR.

        ``diverse_limit``: how many leading positions MMR diversifies (default ``limit``);
        a caller that fetches deeper only to drop copies passes what it will show."""
        from memtrove.retrieval.hybrid import HYBRID_DEPTH
        from memtrove.retrieval.mmr import demote_similar
        from memtrove.retrieval.temporal import time_constraint  # its patterns cost ~4 ms

        ranking = Ranking()
        candidates_wanted = max(candidate_limit, limit)
        # One BM25 search, as deep as the score fusion needs; the probe is its head.
        raw = self.bm25(query, max(BM25_PROBE, candidates_wanted, HYBRID_DEPTH), filters, raw=True)
        probe = [(doc, score / (1.0 + score)) for doc, score in raw]
        probe = probe[: max(BM25_PROBE, candidates_wanted)]
        ranking.stages.append("bm25")
        moment = now or datetime.now(UTC)
        constraint = time_constraint(query, moment)  # a named time or a known entity:
        entities = named_entities(self._connection, query)  # BM25 alone cannot judge those
        if constraint is None and not entities and self._strong_signal(probe, intent):
            ranking.stages.append("bypass")
            for stage in ("expansion", "vector", "rerank"):
                ranking.skipped[stage] = "strong BM25 signal"
            candidates = probe[:candidates_wanted]
        else:
            candidates = self._fused_candidates(
                query, intent, probe, candidates_wanted, filters, ranking, raw,
                (constraint, entities, moment),
            )  # fmt: skip
            candidates = self._rerank(query, intent, candidates, texts, ranking)
        plan = recency_plan(query)
        if plan is not None and plan.recent_candidates:
            candidates = self._with_recent(candidates, filters)
        scored = apply_composite(
            scoring_inputs(self._connection, candidates),
            plan.weights if plan else QUERY_WEIGHTS,
            moment,
            co_activation=co_activation,
            recency_first_types=plan.first_types if plan else (),
            lead_types=plan.lead_types if plan else (),
            profile_intent=has_profile_intent(query),
        )
        ranking.stages.append("composite")
        if diverse and len(scored) > 1:
            bodies = texts([doc for doc, _ in scored])
            order = demote_similar(
                [(doc, bodies.get(doc, "")[:MMR_CHARS]) for doc, _ in scored],
                limit=min(limit, diverse_limit or limit),
            )
            by_doc = dict(scored)
            scored = [(doc, by_doc[doc]) for doc in order]
            ranking.stages.append("mmr")
        ranking.hits = scored[:limit]
        return ranking

    def _with_recent(
        self, candidates: list[tuple[int, float]], filters: Filters
    ) -> list[tuple[int, float]]:
        """Recency questions also consider the newest handoffs, decisions and progress notes.

        "Where were we?" shares no words with the handoff that answers it, so the
        RECENT_CANDIDATES newest documents of RECENCY_FIRST_TYPES join the candidates (at
        RECENT_SHARE of the best relevance when retrieval did not find them itself).
        """
        recent = recent_documents(self._connection, RECENCY_FIRST_TYPES, RECENT_CANDIDATES, filters)
        known = {doc for doc, _ in candidates}
        best = max((score for _, score in candidates), default=1.0) or 1.0
        extra = [(doc, best * RECENT_SHARE) for doc in recent if doc not in known]
        return [*candidates, *extra]

    def _strong_signal(self, probe: Sequence[tuple[int, float]], intent: str | None) -> bool:
        if intent or self._models.settings.disable_fts_bypass or not probe:
            return False
        top = probe[0][1]
        second = probe[1][1] if len(probe) > 1 else 0.0
        return top >= BYPASS_SCORE and top - second >= BYPASS_GAP

    def _fused_candidates(
        self,
        query: str,
        intent: str | None,
        probe: list[tuple[int, float]],
        depth: int,
        filters: Filters,
        ranking: Ranking,
        raw: list[tuple[int, float]],
        triggers: tuple[TimeConstraint | None, list[NamedEntity], datetime] | None = None,
    ) -> list[tuple[int, float]]:
        """Fused candidates; ``raw`` is the BM25 search (``|bm25|``) the probe came from.
        The temporal and entity channels join when their triggers fire (temporal_channels)."""
        from memtrove.retrieval import temporal_channels as side
        from memtrove.retrieval.fusion import normalize_max, rrf
        from memtrove.retrieval.hybrid import HYBRID_DEPTH

        def channels(pool: Sequence[int]) -> list[tuple[list[int], float]]:
            if triggers is None or triggers[:2] == (None, []):
                return []  # an ordinary question: ranked exactly as without the channels
            return side.side_channels(self, self._connection, query, triggers, pool, depth, filters, ranking)  # fmt: skip

        if not self._models.has_llm:
            # Only the two original lists: score fusion keeps BM25's margins, which rank
            # fusion throws away (README, "Composite scoring" has the evidence).
            ranking.skipped["expansion"] = "no LLM configured (MEMTROVE_LLM_URL)"
            wide = max(depth, HYBRID_DEPTH)  # as deep as hybrid: the context step needs it
            fused = self._score_fused(query, wide, filters, ranking, lexical=raw[:wide])
            fused = normalize_max(self._with_context(fused, filters, ranking))
            extra = channels([doc for doc, _ in fused])
            return (side.blend_channels(fused, extra) if extra else fused)[:depth]
        lists: list[tuple[Sequence[int], float]] = [([doc for doc, _ in probe], ORIGINAL_WEIGHT)]
        semantic = self._try_vectors(query, depth, filters, ranking)
        if semantic is not None:
            lists.append(([doc for doc, _, _ in semantic], ORIGINAL_WEIGHT))
        if second := self.second_cosines(query, depth, filters, ranking, []):
            lists.append((sorted(second, key=lambda doc: (-second[doc], doc)), EXPANSION_WEIGHT))
        if self._models.has_llm:
            try:
                from memtrove.retrieval.expansion import expand_query

                variants = expand_query(self._connection, self._models.llm, query, intent)
            except ModelError as error:
                ranking.fail("expansion", error)
                _rate_limited("expansion", f"query expansion failed: {error}", ranking.warnings)
                variants = []
            else:
                if variants:
                    ranking.stages.append("expansion")
                else:  # an empty or unparseable answer: nothing was expanded
                    ranking.skipped["expansion"] = "the LLM's answer held no lex/vec/hyde line"
            for variant in variants:
                if variant.kind == "lex":
                    hits = self.bm25(variant.text, depth, filters)
                    lists.append(([doc for doc, _ in hits], EXPANSION_WEIGHT))
                elif semantic is not None:
                    try:
                        vector_hits = self.vectors(variant.text, depth, filters)
                    except (EmbeddingSpaceError, ModelError) as error:
                        ranking.fail(f"vector ({variant.kind} variant)", error)
                        continue
                    lists.append(([doc for doc, _, _ in vector_hits], EXPANSION_WEIGHT))
        else:
            ranking.skipped["expansion"] = "no LLM configured (MEMTROVE_LLM_URL)"
        lists += channels(list(dict.fromkeys(doc for keys, _ in lists for doc in keys)))
        ranking.stages.append("rrf")
        fused = rrf(lists)[:depth]
        return self._with_context(fused, filters, ranking)[:depth]

    def _with_context(
        self, fused: list[tuple[int, float]], filters: Filters, ranking: Ranking
    ) -> list[tuple[int, float]]:
        """Conversation turns next to strong hits share in their score (retrieval.hybrid).

        ``fused`` is best first; the result is too (unchanged when no turn has neighbours).
        """
        from memtrove.retrieval.fusion import normalize_max
        from memtrove.retrieval.hybrid import CONTEXT_SOURCES, conversation_neighbours, propagate

        sources = [doc for doc, _ in fused[:CONTEXT_SOURCES]]
        neighbours = conversation_neighbours(
            self._connection, sources, since=filters.since, until=filters.until
        )
        if not any(neighbours.values()):
            return fused
        ranking.stages.append("context")
        spread = propagate(dict(normalize_max(fused)), neighbours)
        return sorted(spread.items(), key=lambda item: (-item[1], item[0]))

    def _rerank(
        self,
        query: str,
        intent: str | None,
        candidates: list[tuple[int, float]],
        texts: Callable[[Sequence[int]], dict[int, str]],
        ranking: Ranking,
    ) -> list[tuple[int, float]]:
        from memtrove.retrieval.chunks import select_chunk
        from memtrove.retrieval.fusion import blend_rerank, normalize_max
        from memtrove.retrieval.rerank import rerank_query, rerank_texts

        plain = normalize_max(candidates)
        if not self._models.has_reranker:
            ranking.skipped["rerank"] = "no reranker configured (MEMTROVE_RERANK_URL)"
            return plain
        if not candidates:
            return plain
        bodies = texts([doc for doc, _ in candidates])
        chunks = {doc: select_chunk(bodies.get(doc, ""), query, intent) for doc, _ in candidates}
        try:
            scores = rerank_texts(
                self._connection, self._models.reranker, rerank_query(query, intent), chunks
            )
        except ModelError as error:
            ranking.fail("rerank", error)
            _rate_limited(
                "rerank", f"reranking failed, kept the fused order: {error}", ranking.warnings
            )
            return plain
        blended = blend_rerank(plain, scores)
        if blended.degenerate:
            ranking.skipped["rerank"] = "the reranker's scores are degenerate (all near zero)"
            _rate_limited(
                "rerank-degenerate",
                "the reranker returned only near-zero scores; kept the fused order "
                "(check it with `memtrove rerank-health`)",
                ranking.warnings,
            )
            return blended.ranked
        ranking.stages.append("rerank")
        return blended.ranked

    def recency_ranking(
        self,
        candidates: Sequence[tuple[int, float]],
        limit: int,
        ranking: Ranking,
        plan: RecencyPlan,
        now: datetime | None = None,
    ) -> Ranking:
        """Direct lookups (search, vsearch, hybrid) asking about time ("latest",
        "yesterday", "where were we", "what do we use now") are ranked by composite score
        with the plan's weights and type order (see retrieval.recency); others keep the
        raw channel score, which judged evals found better for lookups. BM25 scores
        (``ranking.stages == ["bm25"]``) are made linear first."""
        if ranking.stages == ["bm25"]:
            candidates = linear_relevance(candidates)
        scored = apply_composite(
            scoring_inputs(self._connection, candidates),
            plan.weights,
            now or datetime.now(UTC),
            recency_first_types=plan.first_types,
            lead_types=plan.lead_types,
        )
        ranking.hits = scored[:limit]
        ranking.stages.append("composite")
        return ranking
