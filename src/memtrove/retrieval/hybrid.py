"""Hybrid fusion of BM25 and vectors that needs no model server, and conversation context.

Measured on the LoCoMo development set (997 questions over five long conversations, one
document per turn, the embedded wordllama model), R@10:

- BM25 alone .657; rank fusion (RRF, k=60) with wordllama .596: rank fusion lets a weak
  retriever's guesses displace good keyword hits.
- Score fusion: ``0.6 * |bm25| / max|bm25| + 0.4 * minmax(cosine)`` over the union of both
  top-50 lists .692 (alpha .2-.4 within .003 of each other; fitted on either half of the
  conversations and tested on the other, it never fell below BM25).
- Conversation context: a turn next to a strong hit is often the answer (the question
  matches the turn before it). Adding ``0.5 * max(f(prev), f(next)) + 0.3 * max(f(prev2),
  f(next2))`` of the neighbours' fused scores .778. Neighbours are the adjacent documents of
  content type ``conversation`` in the same collection, in effective-time order (ties by
  path); other documents are never affected, since adjacent notes in a notes vault need
  not be related.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memtrove.db.connection import Connection
from memtrove.retrieval.filters import Filters
from memtrove.retrieval.fts import parse_query, search_by_passage, search_documents

__all__ = [
    "CONTEXT_SOURCES",
    "FUSION_ALPHA",
    "HYBRID_DEPTH",
    "NEIGHBOUR_WEIGHTS",
    "SECOND_ALPHA",
    "SECOND_FIRST_ALPHA",
    "blend_passages",
    "conversation_neighbours",
    "keyword_channel",
    "propagate",
    "score_fusion",
]

FUSION_ALPHA = 0.3
# With the second space on (MEMTROVE_EMBED_SECOND): 0.5 BM25 + 0.2 wordllama + 0.3 MiniLM.
# Chosen on LoCoMo dev and the Go proposals' judged sets (benchmarks/bench_second.py); of
# the grid tried, it led on both (README, "The second vector space").
SECOND_FIRST_ALPHA = 0.2
SECOND_ALPHA = 0.3
HYBRID_DEPTH = 50
# Only the best fused documents pass context on (each costs two indexed lookups). On LoCoMo
# dev, 30 sources gave R@10 .776, 50 gave .779-.786 (both halves of the set gained), and
# passing context from every candidate gained nothing more.
CONTEXT_SOURCES = 50
NEIGHBOUR_WEIGHTS: tuple[float, ...] = (0.5, 0.3)
CONVERSATION_TYPE = "conversation"
# A long document's own BM25 share added to its best passage's (blend_passages). With 0.3
# the judged working sessions' right document reached the keyword top 3 for 48 of 65
# prompts against 46 with the best passage alone and 41 without passages; Go proposals'
# hit@3 through the hook .864 against .841.
PASSAGE_DOC_SHARE = 0.3


def blend_passages(
    documents: Sequence[tuple[int, float]], passages: Sequence[tuple[int, float]]
) -> list[tuple[int, float]]:
    """Keyword scores of documents (raw ``|bm25|`` in and out), best first. A document with
    passages (a long one) scores its best passage's share of the best passage, plus
    ``PASSAGE_DOC_SHARE`` of its own share of the best document, on the best document's
    scale; a document without passages keeps its BM25 exactly. A long record whose one
    section answers then ranks with the short note that does, and of two such records the
    one that also matches as a whole leads."""
    doc_top = max((score for _, score in documents), default=0.0)
    passage_top = max((score for _, score in passages), default=0.0)
    if passage_top <= 0:
        return list(documents)
    if doc_top <= 0:
        return list(passages)
    blended = dict(documents)
    own = dict(documents)
    for doc, score in passages:
        lifted = (score / passage_top + PASSAGE_DOC_SHARE * own.get(doc, 0.0) / doc_top) * doc_top
        blended[doc] = max(blended.get(doc, 0.0), lifted)
    return sorted(blended.items(), key=lambda item: (-item[1], item[0]))


def keyword_channel(
    connection: Connection, query: str, limit: int, filters: Filters
) -> list[tuple[int, float]]:
    """(doc id, raw keyword score) best first: whole-document BM25 blended with each
    document's best passage (:func:`blend_passages`)."""
    parsed = parse_query(query)
    documents = [
        (hit.doc_id, abs(hit.bm25))
        for hit in search_documents(connection, parsed, limit=limit, filters=filters)
    ]
    passages = search_by_passage(connection, parsed, limit=limit, filters=filters)
    return blend_passages(documents, [(doc, score) for doc, score, _ in passages])[:limit]


def score_fusion(
    lexical: Sequence[tuple[int, float]],
    cosine: Mapping[int, float],
    alpha: float = FUSION_ALPHA,
    second: Mapping[int, float] | None = None,
    beta: float = SECOND_ALPHA,
) -> dict[int, float]:
    """``(1 - alpha) * bm25 / max bm25 + alpha * minmax(cosine)`` over both candidate sets;
    with ``second`` (the second space's cosines) ``(1 - alpha - beta) * bm25 + alpha *
    minmax(cosine) + beta * minmax(second)`` over all three (callers then pass
    :data:`SECOND_FIRST_ALPHA` as ``alpha``).

    A document missing from one channel scores 0 there; with one distinct cosine value a
    vector channel adds nothing (it cannot tell the candidates apart).
    """
    if not second:
        beta = 0.0
    top = max((score for _, score in lexical), default=0.0)
    fused: dict[int, float] = {}
    for doc, score in lexical:
        fused[doc] = (1.0 - alpha - beta) * (score / top if top > 0 else 0.0)
    for weight, channel in ((alpha, cosine), (beta, second or {})):
        if not channel or weight <= 0:
            continue
        low, high = min(channel.values()), max(channel.values())
        spread = high - low
        for doc, similarity in channel.items():
            share = weight * ((similarity - low) / spread) if spread > 0 else 0.0
            fused[doc] = fused.get(doc, 0.0) + share
    return fused


def conversation_neighbours(
    connection: Connection,
    doc_ids: Sequence[int],
    span: int = len(NEIGHBOUR_WEIGHTS),
    *,
    since: str | None = None,
    until: str | None = None,
) -> dict[int, list[tuple[int, int]]]:
    """For each conversation document, its neighbours as ``(distance, doc id)``, both sides.

    Documents of other types get no entry. Neighbours outside ``since`` / ``until`` (the
    search's time filter) are left out: context must not bring back what the filter excluded.
    """
    if not doc_ids or span <= 0:
        return {}
    bounds = ""
    limits: list[str] = []
    if since:
        bounds += " AND COALESCE(authored_at, modified_at) >= ?"
        limits.append(since)
    if until:
        bounds += " AND COALESCE(authored_at, modified_at) <= ?"
        limits.append(until)
    placeholders = ",".join("?" * len(doc_ids))
    rows = connection.execute(
        "SELECT id, collection, COALESCE(authored_at, modified_at), path FROM documents "
        f"WHERE id IN ({placeholders}) AND active = 1 AND content_type = ?",
        [*doc_ids, CONVERSATION_TYPE],
    ).fetchall()
    neighbours: dict[int, list[tuple[int, int]]] = {}
    for doc, collection, moment, path in rows:
        found: list[tuple[int, int]] = []
        for comparison, order in (("<", "DESC"), (">", "ASC")):
            side = connection.execute(
                "SELECT id FROM documents WHERE active = 1 AND collection = ? "
                f"AND content_type = ? AND COALESCE(authored_at, modified_at) {comparison}= ? "
                f"AND (COALESCE(authored_at, modified_at), path) {comparison} (?, ?){bounds} "
                f"ORDER BY COALESCE(authored_at, modified_at) {order}, path {order} LIMIT ?",
                (collection, CONVERSATION_TYPE, moment, moment, path, *limits, span),
            ).fetchall()
            found.extend((distance, int(row[0])) for distance, row in enumerate(side, start=1))
        neighbours[int(doc)] = found
    return neighbours


def propagate(
    scores: Mapping[int, float],
    neighbours: Mapping[int, Sequence[tuple[int, int]]],
    weights: Sequence[float] = NEIGHBOUR_WEIGHTS,
) -> dict[int, float]:
    """Each document's score plus, per distance, the weighted best score of its neighbours.

    ``neighbours`` maps a scored document to ``(distance, neighbour)`` pairs; the relation
    is symmetric, so a neighbour outside ``scores`` receives from the scored documents next
    to it.
    """
    best: dict[tuple[int, int], float] = {}
    for doc, pairs in neighbours.items():
        source = scores.get(doc, 0.0)
        for distance, other in pairs:
            if 1 <= distance <= len(weights) and source > 0:
                key = (other, distance)
                best[key] = max(best.get(key, 0.0), source)
    result = dict(scores)
    for (doc, distance), value in best.items():
        result[doc] = result.get(doc, 0.0) + weights[distance - 1] * value
    return result
