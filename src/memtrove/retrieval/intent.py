"""``intent_search``: classify what a question asks (WHY, WHEN, ENTITY, WHAT), search for it.

Classification (heuristic first, the LLM when it is unsure, cached an hour) lives in
:mod:`memtrove.retrieval.intent_classifier`; its names are re-exported here.

The pipeline (see ``spec/clawmem/internals__intent-search-pipeline.md``):

1. BM25 (50) and vectors (50); when the question names dates, the same again inside them,
   merged at :data:`TEMPORAL_SHARE` of the in-window score (a window that matches nothing
   is dropped, and ``skipped`` says so);
2. intent-weighted fusion with the spec's weights: WHY boosts vectors (BM25 1.0, vector
   1.5), WHEN boosts BM25 (1.5, 1.0), others are balanced. The weights scale the vector
   share of ``hybrid``'s score fusion (alpha 0.3 x vector / BM25 weight), followed by its
   conversation context, rather than weighting RRF lists: on the LoCoMo development set
   (997 questions, wordllama vectors) RRF gave R@10 .698, score fusion .786
   (``FUSION = "rrf"`` restores the reference product's fusion);
3. ENTITY: documents whose title names the question's entity gain a share of a search
   within them (:mod:`memtrove.retrieval.entity_focus`);
   WHY and ENTITY: adaptive graph traversal from the top 10 (:mod:`memtrove.graph.traversal`;
   WHY also walks causal edges back to their causes);
   the walk starts from each anchor's fused score, and a discovered document scores its
   normalised traversal score times :data:`GRAPH_SHARE`, keeping the better of that and its
   own fused score;
4. with a reranker: reranking of each candidate's first 200 characters, blended by position
   (upstream weight 0.75 for the top 3, 0.60 to rank 10, 0.40 after);
5. composite scoring with the ``query`` weights.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from memtrove.db.connection import Connection
from memtrove.errors import EmbeddingSpaceError, ModelError
from memtrove.retrieval.intent_classifier import (
    CACHE_SECONDS,
    HEURISTIC_CONFIDENT,
    INTENTS,
    IntentClassification,
    check_intent,
    classify_heuristic,
    classify_intent,
    parse_llm_intent,
    temporal_window,
)

if TYPE_CHECKING:
    from memtrove.models.registry import Models
    from memtrove.retrieval.pipeline import Filters, Ranking, Retriever

__all__ = [
    "CACHE_SECONDS",
    "GRAPH_SHARE",
    "HEURISTIC_CONFIDENT",
    "INTENTS",
    "RRF_WEIGHTS",
    "IntentClassification",
    "check_intent",
    "classify_heuristic",
    "classify_intent",
    "parse_llm_intent",
    "position_weight",
    "run_intent_search",
    "temporal_window",
]

CHANNEL_DEPTH = 50  # the spec's 30 measured .007 lower R@10 on LoCoMo dev
RERANK_CHARS = 200
GRAPH_SHARE = 0.9
# Meta-path forward push (graph.traversal.mpfp_traversal) beside the adaptive walk: off,
# as measured (README, "Graph memory and intent search": no gain on the judged why/entity
# set at this share, one why question's top 5 lost at full share; LoCoMo has no edges).
MPFP = False
MPFP_SHARE = 0.5  # of a meta-path find's score (on top of GRAPH_SHARE)
# In-window hits join at this share of their in-window score: a hard filter cost LoCoMo dev
# .006 R@10 on temporal questions (evidence is often told in a later session)
TEMPORAL_SHARE = 0.8
# (BM25 weight, vector weight) in the fusion
RRF_WEIGHTS: dict[str, tuple[float, float]] = {
    "WHY": (1.0, 1.5),
    "WHEN": (1.5, 1.0),
    "ENTITY": (1.0, 1.0),
    "WHAT": (1.0, 1.0),
}
TRAVERSING: frozenset[str] = frozenset({"WHY", "ENTITY"})
# "score" (the default, measured below) or "rrf" (the reference product's fusion)
FUSION = "score"


# -- the pipeline ----------------------------------------------------------------------------


def position_weight(rank: int) -> float:
    """The upstream score's share in the rerank blend at 0-based ``rank``."""
    if rank < 3:
        return 0.75
    if rank < 10:
        return 0.60
    return 0.40


def run_intent_search(
    retriever: Retriever,
    connection: Connection,
    models: Models,
    query: str,
    limit: int,
    filters: Filters,
    *,
    force_intent: str | None = None,
    enable_graph_traversal: bool = True,
    texts: Callable[[Sequence[int]], dict[int, str]],
    co_activation: Callable[[int], int] | None = None,
    now: datetime | None = None,
) -> tuple[Ranking, IntentClassification]:
    """The ranking of ``intent_search`` and the classification it used."""
    from memtrove.retrieval.candidates import scoring_inputs
    from memtrove.retrieval.pipeline import Ranking
    from memtrove.retrieval.scoring import QUERY_WEIGHTS, apply_composite, has_profile_intent

    now = now or datetime.now(UTC)
    ranking = Ranking()
    forced = check_intent(force_intent)
    if forced is not None:
        window = temporal_window(query, now.date()) if forced == "WHEN" else None
        found = IntentClassification(
            forced, 1.0, "forced", window[0] if window else None, window[1] if window else None
        )
    else:
        llm = models.llm if models.has_llm else None
        found = classify_intent(connection, query, llm, now=now, warnings=ranking.warnings)
    ranking.stages.append("intent")
    depth = max(CHANNEL_DEPTH, limit)
    windowed = filters
    if found.temporal_start and found.temporal_end:
        windowed = filters._replace(
            since=max(filter(None, (filters.since, found.temporal_start))),
            until=min(filter(None, (filters.until, f"{found.temporal_end}T23:59:59Z"))),
        )
    lexical, semantic, vector, second = _channels(retriever, query, depth, filters, ranking)
    fused = _fuse(
        connection, retriever, found.intent, (lexical, semantic, second), vector, filters, ranking
    )
    if windowed is not filters:
        fused = _within_dates(
            connection, retriever, found.intent, query, depth, windowed, fused, ranking
        )
    if found.intent == "ENTITY" and fused:
        fused = _entity_focus(connection, retriever, query, depth, filters, fused, vector, ranking)
    if found.intent in TRAVERSING and enable_graph_traversal and fused:
        fused = _traverse(connection, retriever, fused, vector, ranking, found.intent)
    elif found.intent in TRAVERSING:
        ranking.skipped["graph"] = "graph traversal turned off"
    fused = fused[: max(depth, limit)]
    fused = _rerank(connection, models, query, fused, texts, ranking)
    ranking.hits = apply_composite(
        scoring_inputs(connection, fused),
        QUERY_WEIGHTS,
        now,
        co_activation=co_activation,
        profile_intent=has_profile_intent(query),
    )
    ranking.stages.append("composite")
    return ranking, found


def _entity_focus(
    connection: Connection,
    retriever: Retriever,
    query: str,
    depth: int,
    filters: Filters,
    fused: list[tuple[int, float]],
    vector: Any,
    ranking: Ranking,
) -> list[tuple[int, float]]:
    """ENTITY questions: the documents titled with the entity the question names rise
    (see :mod:`memtrove.retrieval.entity_focus`)."""
    from memtrove.retrieval.entity_focus import (
        apply_focus,
        focus_names,
        focus_scores,
        title_documents,
    )

    names = focus_names(query)
    members = title_documents(connection, names) if names else set()
    if not members:
        ranking.skipped["entity focus"] = "no document title names the question's entity"
        return fused
    focus = focus_scores(connection, retriever, query, names, members, depth, filters, vector)
    ranking.stages.append("entity focus")
    return apply_focus(fused, focus)


def _within_dates(
    connection: Connection,
    retriever: Retriever,
    intent: str,
    query: str,
    depth: int,
    windowed: Filters,
    fused: list[tuple[int, float]],
    ranking: Ranking,
) -> list[tuple[int, float]]:
    """The search again inside the dates the query names, merged into ``fused``: a document
    keeps the better of its own score and :data:`TEMPORAL_SHARE` of its in-window score."""
    from memtrove.retrieval.pipeline import Ranking

    inner = Ranking()
    lexical, semantic, vector, second = _channels(retriever, query, depth, windowed, inner)
    if not lexical and not semantic:
        ranking.skipped["temporal filter"] = "nothing matched the dates the query names"
        return fused
    ranking.stages.append("temporal filter")
    merged = dict(fused)
    for doc, score in _fuse(
        connection, retriever, intent, (lexical, semantic, second), vector, windowed, inner
    ):
        merged[doc] = max(merged.get(doc, 0.0), score * TEMPORAL_SHARE)
    return sorted(merged.items(), key=lambda pair: (-pair[1], pair[0]))


def _fuse(
    connection: Connection,
    retriever: Retriever,
    intent: str,
    lists: tuple[list[tuple[int, float]], list[tuple[int, float]], dict[int, float]],
    vector: Any,
    filters: Filters,
    ranking: Ranking,
) -> list[tuple[int, float]]:
    """The intent-weighted fusion of the channels (BM25, vectors, and the second space's
    cosines when it is on), max-normalised, best first."""
    from memtrove.retrieval.fusion import normalize_max, rrf
    from memtrove.retrieval.hybrid import (
        CONTEXT_SOURCES,
        FUSION_ALPHA,
        SECOND_ALPHA,
        SECOND_FIRST_ALPHA,
        conversation_neighbours,
        propagate,
        score_fusion,
    )
    from memtrove.retrieval.vectors import document_similarities

    lexical, semantic, second = lists
    bm25_weight, vector_weight = RRF_WEIGHTS[intent]
    if FUSION == "rrf":
        ranking.stages.append("rrf")
        ranked = [
            ([doc for doc, _ in lexical], bm25_weight),
            ([doc for doc, _ in semantic], vector_weight),
        ]
        return normalize_max(rrf(ranked))
    cosine = dict(semantic)
    if vector is not None:
        missing = [doc for doc, _ in lexical if doc not in cosine]
        cosine.update(document_similarities(connection, vector, missing, retriever.matrix))
    # the vector channels' shares grow with the intent's vector weight, BM25 keeps >= 0.1
    first = SECOND_FIRST_ALPHA if second else FUSION_ALPHA
    shares = [first * vector_weight / bm25_weight, SECOND_ALPHA * vector_weight / bm25_weight]
    scale = min(1.0, 0.9 / (shares[0] + (shares[1] if second else 0.0)))
    alpha, beta = shares[0] * scale, shares[1] * scale
    scores = score_fusion(lexical, cosine, alpha, second, beta)
    fused = sorted(scores.items(), key=lambda p: (-p[1], p[0]))
    ranking.stages.append("fusion")
    # conversation context, as in hybrid (nothing changes without conversation turns)
    sources = [doc for doc, _ in fused[:CONTEXT_SOURCES]]
    neighbours = conversation_neighbours(
        connection, sources, since=filters.since, until=filters.until
    )
    if any(neighbours.values()):
        ranking.stages.append("context")
        spread = propagate(dict(normalize_max(fused)), neighbours)
        fused = sorted(spread.items(), key=lambda p: (-p[1], p[0]))
    return normalize_max(fused)


def _channels(
    retriever: Retriever, query: str, depth: int, filters: Filters, ranking: Ranking
) -> tuple[list[tuple[int, float]], list[tuple[int, float]], Any, dict[int, float]]:
    """BM25 (raw), vector hits, the query vector, and the second space's cosines."""
    lexical = retriever.bm25(query, depth, filters, raw=True)
    if "bm25" not in ranking.stages:
        ranking.stages.append("bm25")
    pool = [doc for doc, _ in lexical]
    try:
        vector = retriever.embed_query(query)
        hits = retriever.vectors(query, depth, filters, vector=vector)
    except (EmbeddingSpaceError, ModelError) as error:
        ranking.fail("vector", error)
        return lexical, [], None, retriever.second_cosines(query, depth, filters, ranking, pool)
    if "vector" not in ranking.stages:
        ranking.stages.append("vector")
    ranking.best_seq.update({doc: seq for doc, _, seq in hits})
    semantic = [(doc, score) for doc, score, _ in hits]
    pool += [doc for doc, _ in semantic]
    second = retriever.second_cosines(query, depth, filters, ranking, pool)
    return lexical, semantic, vector, second


def _traverse(
    connection: Connection,
    retriever: Retriever,
    fused: list[tuple[int, float]],
    vector: Any,
    ranking: Ranking,
    intent: str,
) -> list[tuple[int, float]]:
    from memtrove.graph.traversal import (
        ANCHORS,
        INBOUND_TYPES,
        adaptive_traversal,
        mpfp_traversal,
    )
    from memtrove.retrieval.vectors import document_similarities

    def similarity(ids: Sequence[int]) -> dict[int, float]:
        return document_similarities(connection, vector, ids, retriever.matrix)

    anchors = dict(fused[:ANCHORS])
    inbound = (*INBOUND_TYPES, "causal") if intent == "WHY" else INBOUND_TYPES
    found = adaptive_traversal(
        connection, anchors, similarity if vector is not None else None, inbound_types=inbound
    )
    if MPFP:  # what the adaptive walk missed, weighted as it weights its own finds
        from dataclasses import replace

        known = {item.doc_id for item in found}
        found += [
            replace(item, score=item.score * MPFP_SHARE)
            for item in mpfp_traversal(
                connection, anchors, similarity=similarity if vector is not None else None
            )
            if item.doc_id not in known
        ]
    if not found:
        ranking.skipped["graph"] = "no edges from the top results"
        return fused
    ranking.stages.append("graph")
    merged = dict(fused)
    for item in found:
        reached = item.score * GRAPH_SHARE
        if reached > merged.get(item.doc_id, 0.0):
            merged[item.doc_id] = reached
    return sorted(merged.items(), key=lambda pair: (-pair[1], pair[0]))


def _rerank(
    connection: Connection,
    models: Models,
    query: str,
    fused: list[tuple[int, float]],
    texts: Callable[[Sequence[int]], dict[int, str]],
    ranking: Ranking,
) -> list[tuple[int, float]]:
    from memtrove.retrieval.fusion import RERANK_DEGENERATE_FLOOR
    from memtrove.retrieval.rerank import rerank_texts

    if not models.has_reranker:
        ranking.skipped["rerank"] = "no reranker configured (MEMTROVE_RERANK_URL)"
        return fused
    if not fused:
        return fused
    bodies = texts([doc for doc, _ in fused])
    snippets = {doc: " ".join(bodies.get(doc, "").split())[:RERANK_CHARS] for doc, _ in fused}
    try:
        scores = rerank_texts(connection, models.reranker, query, snippets)
    except ModelError as error:
        ranking.fail("rerank", error)
        ranking.warnings.append(f"reranking failed, kept the fused order: {error}")
        return fused
    if not any(score > RERANK_DEGENERATE_FLOOR for score in scores.values()):
        ranking.skipped["rerank"] = "the reranker's scores are degenerate (all near zero)"
        return fused
    ranking.stages.append("rerank")
    blended = [
        (doc, position_weight(rank) * score + (1 - position_weight(rank)) * scores.get(doc, 0.0))
        for rank, (doc, score) in enumerate(fused)
    ]
    return sorted(blended, key=lambda pair: -pair[1])
