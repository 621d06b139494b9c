"""``intent_search``: classify what a question asks (WHY, WHEN, ENTITY, WHAT), search for it.

Classification runs a heuristic first (wording: "why did", "what caused", "when did", "who",
a named component...). When its confidence is below :data:`HEURISTIC_CONFIDENT` (0.8) and an
LLM is configured, the LLM decides; its answer is cached for an hour in
``intent_classifications`` (keyed by the query's hash). A failed or unparseable LLM answer
falls back to the heuristic and is not cached. WHEN questions that name a time ("in March
2024", "last week", "2023-05-01") carry ``temporal_start``/``temporal_end``.

The pipeline (see ``spec/clawmem/internals__intent-search-pipeline.md``):

1. BM25 (50) and vectors (50), both restricted to the WHEN window when there is one (a
   window that matches nothing is dropped, and ``skipped`` says so);
2. intent-weighted fusion with the spec's weights: WHY boosts vectors (BM25 1.0, vector
   1.5), WHEN boosts BM25 (1.5, 1.0), others are balanced. The weights scale the vector
   share of ``hybrid``'s score fusion (alpha 0.3 x vector / BM25 weight), followed by its
   conversation context, rather than weighting RRF lists: on the LoCoMo development set
   (997 questions, wordllama vectors) RRF gave R@10 .698, score fusion .786
   (``FUSION = "rrf"`` restores the reference product's fusion);
3. WHY and ENTITY: adaptive graph traversal from the top 10 (:mod:`memtrove.graph.traversal`;
   WHY also walks causal edges back to their causes);
   the walk starts from each anchor's fused score, and a discovered document scores its
   normalised traversal score times :data:`GRAPH_SHARE`, keeping the better of that and its
   own fused score;
4. with a reranker: reranking of each candidate's first 200 characters, blended by position
   (upstream weight 0.75 for the top 3, 0.60 to rank 10, 0.40 after);
5. composite scoring with the ``query`` weights.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from memtrove.db.connection import Connection, is_locked_error
from memtrove.errors import EmbeddingSpaceError, InvalidQueryError, ModelError
from memtrove.models.protocols import LLM
from memtrove.text import to_iso

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

INTENTS: tuple[str, ...] = ("WHY", "WHEN", "ENTITY", "WHAT")
HEURISTIC_CONFIDENT = 0.8
CACHE_SECONDS = 3600
CHANNEL_DEPTH = 50  # the spec's 30 measured .007 lower R@10 on LoCoMo dev
RERANK_CHARS = 200
GRAPH_SHARE = 0.9
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
PROMPT_VERSION = "intent-v1"


@dataclass(frozen=True)
class IntentClassification:
    """What a query asks for; ``source`` is ``heuristic``, ``llm``, ``cache`` or ``forced``."""

    intent: str
    confidence: float
    source: str
    temporal_start: str | None = None
    temporal_end: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "intent": self.intent,
            "confidence": round(self.confidence, 3),
            "source": self.source,
            "temporal_start": self.temporal_start,
            "temporal_end": self.temporal_end,
        }


def check_intent(intent: str | None) -> str | None:
    """A ``force_intent`` value upper-cased, or None; anything else is refused."""
    if intent is None:
        return None
    if not isinstance(intent, str) or intent.strip().upper() not in INTENTS:
        raise InvalidQueryError(f"force_intent must be one of {', '.join(INTENTS)}, got {intent!r}")
    return intent.strip().upper()


# -- the heuristic ---------------------------------------------------------------------------

_WHY_STRONG = re.compile(
    r"^\s*why\b|\b(?:why did|why was|why were|why do|why does|why is|why are|what caused|"
    r"what led to|reason for|reasons for|reasoning behind|rationale|motivation for|"
    r"decided to|decision to|root cause)\b",
    re.IGNORECASE,
)
_WHY_WEAK = re.compile(r"\b(?:because|cause|caused|led to|trade.?off|instead of)\b", re.I)
_WHEN_STRONG = re.compile(
    r"^\s*when\b|\b(?:when did|when was|when were|when is|what date|which date|what day|"
    r"what time|how long ago|since when|first time|last time|timeline|at what point)\b",
    re.IGNORECASE,
)
_ENTITY_STRONG = re.compile(
    r"^\s*who\b|\b(?:who is|who was|who are|who owns|who wrote|who maintains|whose|"
    r"what do we know about|tell me about|everything about|owner of|owned by|works on)\b",
    re.IGNORECASE,
)
_NAMED = re.compile(r"`[^`\n]{2,60}`|@\w{2,}|\b[A-Z][a-z]+(?:[A-Z][a-z]+)+\b|\b[A-Z]{2,}\w*\b")
_CAPITALISED = re.compile(r"(?<![.?!]\s)(?<!^)\b[A-Z][a-z]{2,}\b")
_WHAT_STRONG = re.compile(
    r"^\s*(?:what is|what are|what does|how do|how does|how to|how can|explain|list|show)\b",
    re.IGNORECASE,
)


def classify_heuristic(query: str, today: date | None = None) -> IntentClassification:
    """The heuristic's intent and confidence (>= 0.8 only on clear wording)."""
    text = query.strip()
    window = temporal_window(text, today or datetime.now(UTC).date())
    if _WHY_STRONG.search(text):
        return IntentClassification("WHY", 0.9, "heuristic")
    if _WHEN_STRONG.search(text):
        return _when(0.9, window)
    if _ENTITY_STRONG.search(text):
        return IntentClassification("ENTITY", 0.85, "heuristic")
    if _WHY_WEAK.search(text):
        return IntentClassification("WHY", 0.6, "heuristic")
    if window is not None:
        return _when(0.7, window)
    if _NAMED.search(text) or _CAPITALISED.search(text):
        return IntentClassification("ENTITY", 0.55, "heuristic")
    if _WHAT_STRONG.search(text):
        return IntentClassification("WHAT", 0.8, "heuristic")
    return IntentClassification("WHAT", 0.5, "heuristic")


def _when(confidence: float, window: tuple[str, str] | None) -> IntentClassification:
    start, end = window if window else (None, None)
    return IntentClassification("WHEN", confidence, "heuristic", start, end)


_MONTHS = {
    name: index
    for index, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_YEAR = re.compile(
    r"\b(?:in|during|since|by|of)\s+(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")"
    r"\b\.?(?:\s+(\d{4}))?",
    re.IGNORECASE,
)
_YEAR = re.compile(r"\b(?:in|during|of)\s+((?:19|20)\d{2})\b", re.IGNORECASE)
_RELATIVE = re.compile(
    r"\b(yesterday|today|last week|this week|last month|this month|last year|this year)\b",
    re.IGNORECASE,
)


def temporal_window(query: str, today: date) -> tuple[str, str] | None:
    """The dates a query names, as an inclusive (start, end) pair of ``YYYY-MM-DD``."""
    match = _ISO_DATE.search(query)
    if match:
        try:
            day = date(int(match[1]), int(match[2]), int(match[3]))
        except ValueError:
            return None
        return day.isoformat(), day.isoformat()
    match = _MONTH_YEAR.search(query)
    if match and not (match[1].lower() == "may" and match[2] is None):
        month = _MONTHS[match[1].lower()]
        year = int(match[2]) if match[2] else today.year
        if not match[2] and month > today.month:
            year -= 1  # "in March", asked in January, means last March
        first = date(year, month, 1)
        following = date(year + (month == 12), month % 12 + 1, 1)
        return first.isoformat(), (following - timedelta(days=1)).isoformat()
    match = _YEAR.search(query)
    if match:
        return f"{match[1]}-01-01", f"{match[1]}-12-31"
    match = _RELATIVE.search(query)
    if match is None:
        return None
    word = match[1].lower()
    if word in ("today", "yesterday"):
        day = today - timedelta(days=word == "yesterday")
        return day.isoformat(), day.isoformat()
    if word.endswith("week"):
        monday = today - timedelta(days=today.weekday())
        start = monday - timedelta(days=7) if word.startswith("last") else monday
        return start.isoformat(), (start + timedelta(days=6)).isoformat()
    if word.endswith("month"):
        first = today.replace(day=1)
        if word.startswith("last"):
            end = first - timedelta(days=1)
            return end.replace(day=1).isoformat(), end.isoformat()
        return first.isoformat(), today.isoformat()
    year = today.year - word.startswith("last")
    return f"{year}-01-01", f"{year}-12-31"


# -- the LLM and its cache -------------------------------------------------------------------

_PROMPT = """Classify the intent of this memory search query as exactly one of:
WHY (asks for reasons, causes, decisions behind something), WHEN (asks for a time, date or
order of events), ENTITY (asks about a named person, component, service or project across
notes), WHAT (a general factual question).
Answer with JSON only: {{"intent": "WHY|WHEN|ENTITY|WHAT", "confidence": 0.0-1.0}}
Query: {query}"""
_JSON = re.compile(r"\{[^{}]*\}", re.DOTALL)


def parse_llm_intent(answer: str) -> tuple[str, float] | None:
    """(intent, confidence) from an LLM answer (JSON, maybe in a fence), else None."""
    if not isinstance(answer, str):
        return None
    for match in _JSON.finditer(answer):
        try:
            data = json.loads(match.group(0))
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        intent = str(data.get("intent", "")).strip().upper()
        confidence = data.get("confidence", 0.7)
        if intent not in INTENTS:
            continue
        if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
            confidence = 0.7
        return intent, max(0.0, min(1.0, float(confidence)))
    return None


def _query_hash(query: str) -> str:
    digest = hashlib.sha256(f"{PROMPT_VERSION}\x00{query.strip().lower()}".encode())
    return digest.hexdigest()


def _cached(connection: Connection, key: str, now: datetime) -> IntentClassification | None:
    row = connection.execute(
        "SELECT intent, confidence, temporal_start, temporal_end, cached_at "
        "FROM intent_classifications WHERE query_hash = ?",
        (key,),
    ).fetchone()
    if row is None or str(row[0]) not in INTENTS:
        return None
    try:
        cached_at = datetime.fromisoformat(str(row[4]).replace("Z", "+00:00"))
    except ValueError:
        return None
    if cached_at.tzinfo is None:
        cached_at = cached_at.replace(tzinfo=UTC)
    if (now - cached_at).total_seconds() > CACHE_SECONDS:
        return None
    start = str(row[2]) if row[2] is not None else None
    end = str(row[3]) if row[3] is not None else None
    return IntentClassification(str(row[0]), float(row[1]), "cache", start, end)


def _store(connection: Connection, key: str, found: IntentClassification, now: datetime) -> None:
    """Cache one answer; a locked vault skips the write (the answer is still used)."""
    try:
        connection.execute("BEGIN IMMEDIATE")
    except Exception as error:
        if is_locked_error(error):
            return
        raise
    try:
        connection.execute(
            "INSERT INTO intent_classifications "
            "(query_hash, intent, confidence, temporal_start, temporal_end, cached_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (query_hash) DO UPDATE SET "
            "intent = excluded.intent, confidence = excluded.confidence, "
            "temporal_start = excluded.temporal_start, temporal_end = excluded.temporal_end, "
            "cached_at = excluded.cached_at",
            (
                key,
                found.intent,
                found.confidence,
                found.temporal_start,
                found.temporal_end,
                to_iso(now),
            ),
        )
        connection.execute("COMMIT")
    except BaseException as error:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        if isinstance(error, Exception) and is_locked_error(error):
            return
        raise


def classify_intent(
    connection: Connection,
    query: str,
    llm: LLM | None = None,
    *,
    now: datetime | None = None,
    warnings: list[str] | None = None,
) -> IntentClassification:
    """Heuristic first; the LLM (cached an hour) when the heuristic is unsure."""
    now = now or datetime.now(UTC)
    guess = classify_heuristic(query, now.date())
    if guess.confidence >= HEURISTIC_CONFIDENT or llm is None:
        return guess
    key = _query_hash(query)
    cached = _cached(connection, key, now)
    if cached is not None:
        return cached
    try:
        answer = llm.complete(_PROMPT.format(query=query[:2000]), max_tokens=60, temperature=0.0)
    except ModelError as error:
        if warnings is not None:
            warnings.append(f"intent classification by the LLM failed, used the heuristic: {error}")
        return guess
    parsed = parse_llm_intent(answer)
    if parsed is None:
        if warnings is not None:
            warnings.append("the LLM's intent answer was not understood; used the heuristic")
        return guess
    intent, confidence = parsed
    window = temporal_window(query, now.date()) if intent == "WHEN" else None
    found = IntentClassification(
        intent, confidence, "llm", window[0] if window else None, window[1] if window else None
    )
    _store(connection, key, found, now)
    return found


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
    from memtrove.retrieval.scoring import QUERY_WEIGHTS, apply_composite

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
    lexical, semantic, vector = _channels(retriever, query, depth, windowed, ranking)
    if windowed is not filters and not lexical and not semantic:
        ranking.skipped["temporal filter"] = "nothing matched the dates the query names"
        windowed = filters
        lexical, semantic, vector = _channels(retriever, query, depth, filters, ranking)
    elif windowed is not filters:
        ranking.stages.append("temporal filter")
    fused = _fuse(connection, retriever, found.intent, lexical, semantic, vector, windowed, ranking)
    if found.intent in TRAVERSING and enable_graph_traversal and fused:
        fused = _traverse(connection, retriever, fused, vector, ranking, found.intent)
    elif found.intent in TRAVERSING:
        ranking.skipped["graph"] = "graph traversal turned off"
    fused = fused[: max(depth, limit)]
    fused = _rerank(connection, models, query, fused, texts, ranking)
    ranking.hits = apply_composite(
        scoring_inputs(connection, fused), QUERY_WEIGHTS, now, co_activation=co_activation
    )
    ranking.stages.append("composite")
    return ranking, found


def _fuse(
    connection: Connection,
    retriever: Retriever,
    intent: str,
    lexical: list[tuple[int, float]],
    semantic: list[tuple[int, float]],
    vector: Any,
    filters: Filters,
    ranking: Ranking,
) -> list[tuple[int, float]]:
    """The intent-weighted fusion of the two channels, max-normalised, best first."""
    from memtrove.retrieval.fusion import normalize_max, rrf
    from memtrove.retrieval.hybrid import (
        CONTEXT_SOURCES,
        FUSION_ALPHA,
        conversation_neighbours,
        propagate,
        score_fusion,
    )
    from memtrove.retrieval.vectors import document_similarities

    bm25_weight, vector_weight = RRF_WEIGHTS[intent]
    if FUSION == "rrf":
        ranking.stages.append("rrf")
        lists = [
            ([doc for doc, _ in lexical], bm25_weight),
            ([doc for doc, _ in semantic], vector_weight),
        ]
        return normalize_max(rrf(lists))
    cosine = dict(semantic)
    if vector is not None:
        missing = [doc for doc, _ in lexical if doc not in cosine]
        cosine.update(document_similarities(connection, vector, missing, retriever.matrix))
    alpha = min(0.9, FUSION_ALPHA * vector_weight / bm25_weight)
    fused = sorted(score_fusion(lexical, cosine, alpha).items(), key=lambda p: (-p[1], p[0]))
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
) -> tuple[list[tuple[int, float]], list[tuple[int, float]], Any]:
    lexical = retriever.bm25(query, depth, filters, raw=True)
    if "bm25" not in ranking.stages:
        ranking.stages.append("bm25")
    try:
        vector = retriever.embed_query(query)
        hits = retriever.vectors(query, depth, filters, vector=vector)
    except (EmbeddingSpaceError, ModelError) as error:
        ranking.skipped["vector"] = str(error)
        return lexical, [], None
    if "vector" not in ranking.stages:
        ranking.stages.append("vector")
    ranking.best_seq.update({doc: seq for doc, _, seq in hits})
    return lexical, [(doc, score) for doc, score, _ in hits], vector


def _traverse(
    connection: Connection,
    retriever: Retriever,
    fused: list[tuple[int, float]],
    vector: Any,
    ranking: Ranking,
    intent: str,
) -> list[tuple[int, float]]:
    from memtrove.graph.traversal import ANCHORS, INBOUND_TYPES, adaptive_traversal
    from memtrove.retrieval.vectors import document_similarities

    def similarity(ids: Sequence[int]) -> dict[int, float]:
        return document_similarities(connection, vector, ids, retriever.matrix)

    anchors = dict(fused[:ANCHORS])
    inbound = (*INBOUND_TYPES, "causal") if intent == "WHY" else INBOUND_TYPES
    found = adaptive_traversal(
        connection, anchors, similarity if vector is not None else None, inbound_types=inbound
    )
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
        ranking.skipped["rerank"] = str(error)
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
