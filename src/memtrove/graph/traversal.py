"""Adaptive beam traversal of ``memory_relations`` and causal chains.

:func:`adaptive_traversal` answers "why" and "who/what is X connected to" questions that
keyword and vector search cannot: it starts from the top search results (the anchors) and
walks the graph outward, hop by hop:

- outbound edges (source -> target) of every type; inbound edges (target -> source) only of
  the symmetric kinds, ``semantic`` and ``entity`` (causal and temporal edges have a
  direction: a decision does not explain the postmortem that led to it);
- a candidate reached over an edge scores ``edge weight x query similarity x DECAY`` times
  the score of the node it was reached from, so the decay compounds with depth and a path
  from the best hit outranks one from the tenth (an anchor's score is its search
  relevance, 1.0 when none is given); its best way in wins; the similarity is the cosine
  mapped onto [``SIMILARITY_FLOOR``, 1] so that a cause worded unlike the question counts;
- each hop keeps the ``beam`` best candidates as the next frontier; the walk stops after
  ``depth`` hops or once ``budget`` nodes have been discovered;
- only active, valid (not invalidated) documents are visited.

``intent_search`` also follows ``causal`` edges inbound for WHY questions (``inbound_types``):
a WHY question asks for the cause of what it names, which is the source of a causal edge
into the document that matched, and a semantic edge between two documents is not written
where a causal one exists (:mod:`memtrove.graph.relations`).

The scores of what it discovers are normalised to [0, 1] (best = 1) before the caller
merges them with search results. Query similarity is a callable (document ids -> cosine)
so the walk needs no vectors: without them every candidate's similarity is neutral.

:func:`causal_links` walks only ``causal`` edges, in the direction asked for.

:func:`mpfp_traversal` is Meta-Path Forward Push (ClawMem's MPFP, after Hindsight): for each
meta-path of :data:`MPFP_PATTERNS` (a sequence of edge steps such as ``entity`` then
``semantic``: documents sharing an entity with a hit, then their topical neighbours) the
anchors' relevance is pushed along edges of exactly those types, step by step: each node
keeps ``alpha`` of the mass that reached it as its score and passes the rest to its
``top_k`` heaviest neighbours of the step's type in proportion to the edge weights; mass
under ``threshold`` stops. The patterns' rankings are fused by RRF (k = 60), so a document
several meta-paths reach ranks first; anchors are left out (they are ranked already).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from memtrove.db.connection import Connection
from memtrove.errors import InvalidQueryError

__all__ = [
    "ANCHORS",
    "BEAM",
    "BUDGET",
    "CAUSAL_DIRECTIONS",
    "DECAY",
    "DEPTH",
    "INBOUND_TYPES",
    "MPFP_PATTERNS",
    "CausalLink",
    "Discovery",
    "adaptive_traversal",
    "causal_links",
    "mpfp_traversal",
]

ANCHORS = 10
BUDGET = 30
DEPTH = 2
BEAM = 5
DECAY = 0.8  # per hop: one hop away scores 0.8 of an equally similar neighbour's edge weight
NEUTRAL_SIMILARITY = 0.5  # a candidate without a vector: neither helped nor sunk
# Similarity counts from this floor up: the cause of a decision is often worded unlike the
# question about it (that is why it needs the edge), so a low cosine must not zero it.
SIMILARITY_FLOOR = 0.5
INBOUND_TYPES: tuple[str, ...] = ("semantic", "entity")
CAUSAL_DIRECTIONS: tuple[str, ...] = ("causes", "caused_by", "both")
MAX_CAUSAL_DEPTH = 10

Similarity = Callable[[Sequence[int]], Mapping[int, float]]


@dataclass(frozen=True)
class Discovery:
    """A document the walk reached: normalised score, hop, and the edge it came over."""

    doc_id: int
    score: float
    hop: int
    via: int
    relation_type: str
    direction: str  # "out" (via -> doc) or "in" (doc -> via)
    anchor: int  # the anchor the walk to it started from


@dataclass(frozen=True)
class CausalLink:
    """One causal edge on a chain from the starting document; ``hop`` counts from 1."""

    source_id: int
    target_id: int
    source_docid: str
    target_docid: str
    source_title: str
    target_title: str
    weight: float
    hop: int
    direction: str  # "causes" (the start leads to it) or "caused_by"

    def to_dict(self) -> dict[str, object]:
        return {
            "source": {"docid": self.source_docid, "title": self.source_title},
            "target": {"docid": self.target_docid, "title": self.target_title},
            "weight": round(self.weight, 6),
            "hop": self.hop,
            "direction": self.direction,
        }


_VALID = "d.active = 1 AND d.invalidated_at IS NULL"


def _edges(
    connection: Connection, frontier: Sequence[int], inbound_types: Sequence[str]
) -> list[tuple[int, int, str, float, str]]:
    """(from, to, type, weight, direction) for every traversable edge touching ``frontier``."""
    marks = ",".join("?" * len(frontier))
    inbound = ",".join("?" * len(inbound_types))
    rows = connection.execute(
        f"""
        SELECT r.source_id, r.target_id, r.relation_type, r.weight, 'out'
        FROM memory_relations r JOIN documents d ON d.id = r.target_id AND {_VALID}
        WHERE r.source_id IN ({marks})
        UNION ALL
        SELECT r.target_id, r.source_id, r.relation_type, r.weight, 'in'
        FROM memory_relations r JOIN documents d ON d.id = r.source_id AND {_VALID}
        WHERE r.target_id IN ({marks}) AND r.relation_type IN ({inbound})
        """,
        (*frontier, *frontier, *inbound_types),
    ).fetchall()
    return [(int(a), int(b), str(kind), float(w), str(way)) for a, b, kind, w, way in rows]


def adaptive_traversal(
    connection: Connection,
    anchors: Sequence[int] | Mapping[int, float],
    similarity: Similarity | None = None,
    *,
    budget: int = BUDGET,
    depth: int = DEPTH,
    beam: int = BEAM,
    inbound_types: Sequence[str] = INBOUND_TYPES,
) -> list[Discovery]:
    """Documents reachable from ``anchors``, best first, with scores normalised to [0, 1]
    (see the module docstring). An anchor is listed too when another anchor's edge reaches
    it (a cause ranked 8th, linked from the top hit, deserves better), but is not expanded
    again."""
    if isinstance(anchors, Mapping):
        relevance = {doc: max(0.0, min(1.0, float(score))) for doc, score in anchors.items()}
    else:
        relevance = dict.fromkeys(anchors, 1.0)
    start = list(relevance)[:ANCHORS]
    path_score = {doc: relevance[doc] for doc in start}
    if not start or budget <= 0 or depth <= 0 or beam <= 0:
        return []
    anchor_set = set(start)
    seen: set[int] = set()  # discovered so far: each document is discovered once
    root = {doc: doc for doc in start}
    found: dict[int, Discovery] = {}
    frontier = start
    for hop in range(1, depth + 1):
        if not frontier or len(found) >= budget:
            break
        reached: dict[int, tuple[float, int, str, str]] = {}  # doc -> strength, via, type, way
        for via, doc, kind, weight, way in _edges(connection, frontier, inbound_types or ("",)):
            if doc in seen or doc == via or (hop > 1 and doc in anchor_set):
                continue  # anchors are reached only from each other, at the first hop
            strength = max(0.0, min(1.0, weight)) * path_score[via]
            best = reached.get(doc)
            if best is None or strength > best[0]:
                reached[doc] = (strength, via, kind, way)
        if not reached:
            break
        cosines = similarity(list(reached)) if similarity is not None else {}
        scored = sorted(
            (
                (
                    weight * _similarity(cosines, doc) * DECAY,
                    doc,
                    via,
                    kind,
                    way,
                )
                for doc, (weight, via, kind, way) in reached.items()
            ),
            key=lambda item: (-item[0], item[1]),
        )
        kept = scored[: min(beam, budget - len(found))]
        for score, doc, via, kind, way in kept:
            root.setdefault(doc, root[via])
            path_score.setdefault(doc, score)
            found[doc] = Discovery(doc, score, hop, via, kind, way, root[via])
            seen.add(doc)
        frontier = [doc for _, doc, _, _, _ in kept if doc not in anchor_set]
    top = max((item.score for item in found.values()), default=0.0)
    ordered = sorted(found.values(), key=lambda item: (-item.score, item.doc_id))
    if top <= 0:
        return [_with_score(item, 0.0) for item in ordered]
    return [_with_score(item, item.score / top) for item in ordered]


def _similarity(cosines: Mapping[int, float], doc: int) -> float:
    value = cosines.get(doc)
    if value is None:
        return NEUTRAL_SIMILARITY
    return SIMILARITY_FLOOR + (1.0 - SIMILARITY_FLOOR) * max(0.0, min(1.0, float(value)))


def _with_score(item: Discovery, score: float) -> Discovery:
    return Discovery(
        item.doc_id, score, item.hop, item.via, item.relation_type, item.direction, item.anchor
    )


# Meta-paths, one edge step each: semantic and entity edges are walked both ways; causes
# (cause -> effect), caused_by (effect -> cause), temporal and supporting as written.
MPFP_PATTERNS: tuple[tuple[str, ...], ...] = (
    ("semantic", "semantic"),  # topic expansion
    ("entity", "semantic"),  # an entity's context
    ("entity", "temporal"),  # an entity's timeline
    ("semantic", "causes"),  # reasoning forward
    ("semantic", "caused_by"),  # reasoning backward
    ("caused_by", "caused_by"),  # a why chain
)
MPFP_ALPHA = 0.15
MPFP_THRESHOLD = 1e-3
MPFP_TOP_K = 20
_RRF_K = 60
_STEP_SQL = {
    # step -> (column matching the frontier, column reached, relation types)
    "semantic": (("source_id", "target_id"), ("target_id", "source_id")),
    "entity": (("source_id", "target_id"), ("target_id", "source_id")),
    "causes": (("source_id", "target_id"),),
    "caused_by": (("target_id", "source_id"),),
    "temporal": (("source_id", "target_id"),),
    "supporting": (("source_id", "target_id"),),
}
_STEP_TYPE = {"causes": "causal", "caused_by": "causal"}


def _step_edges(
    connection: Connection, frontier: Sequence[int], step: str, top_k: int
) -> dict[int, list[tuple[int, float, str]]]:
    """frontier node -> its ``top_k`` heaviest (neighbour, weight, direction) over ``step``."""
    kind = _STEP_TYPE.get(step, step)
    marks = ",".join("?" * len(frontier))
    found: dict[int, list[tuple[int, float, str]]] = defaultdict(list)
    for near, far in _STEP_SQL[step]:
        rows = connection.execute(
            f"SELECT r.{near}, r.{far}, r.weight FROM memory_relations r "
            f"JOIN documents d ON d.id = r.{far} AND {_VALID} "
            f"WHERE r.relation_type = ? AND r.{near} IN ({marks})",
            (kind, *frontier),
        ).fetchall()
        way = "out" if near == "source_id" else "in"
        for node, neighbour, weight in rows:
            if int(neighbour) != int(node) and float(weight) > 0:
                found[int(node)].append((int(neighbour), float(weight), way))
    for edges in found.values():
        edges.sort(key=lambda edge: (-edge[1], edge[0]))
        del edges[top_k:]
    return found


def _forward_push(
    connection: Connection,
    seeds: Mapping[int, float],
    pattern: Sequence[str],
    alpha: float,
    threshold: float,
    top_k: int,
) -> tuple[dict[int, float], dict[int, tuple[int, str, str, int]]]:
    """One meta-path's scores, and for each node the heaviest push into it (via, step,
    direction, hop)."""
    total = sum(seeds.values()) or 1.0
    mass = {doc: value / total for doc, value in seeds.items()}
    scores: dict[int, float] = defaultdict(float)
    best: dict[int, tuple[float, int, str, str, int]] = {}
    for hop, step in enumerate(pattern, start=1):
        active = {doc: value for doc, value in mass.items() if value >= threshold}
        if not active:
            return scores, {}
        for doc, value in active.items():
            scores[doc] += alpha * value
        edges = _step_edges(connection, list(active), step, top_k)
        pushed: dict[int, float] = defaultdict(float)
        for doc, value in active.items():
            out = edges.get(doc)
            if not out:
                continue
            weights = sum(weight for _, weight, _ in out)
            for neighbour, weight, way in out:
                share = (1.0 - alpha) * value * weight / weights
                pushed[neighbour] += share
                if share > best.get(neighbour, (0.0,))[0]:
                    best[neighbour] = (share, doc, _STEP_TYPE.get(step, step), way, hop)
        mass = pushed
    for doc, value in mass.items():
        scores[doc] += value
    return scores, {doc: item[1:] for doc, item in best.items()}


def mpfp_traversal(
    connection: Connection,
    anchors: Mapping[int, float],
    patterns: Sequence[Sequence[str]] = MPFP_PATTERNS,
    *,
    alpha: float = MPFP_ALPHA,
    threshold: float = MPFP_THRESHOLD,
    top_k: int = MPFP_TOP_K,
    budget: int = BUDGET,
    similarity: Similarity | None = None,
) -> list[Discovery]:
    """Documents the meta-paths reach from ``anchors`` (doc -> relevance), best first, RRF
    of the patterns' rankings normalised to [0, 1]; anchors left out (module docstring).
    With ``similarity`` each score is also multiplied, as in :func:`adaptive_traversal`, by
    the query similarity (mapped onto [``SIMILARITY_FLOOR``, 1]) and ``DECAY`` per hop."""
    seeds = {doc: max(0.0, float(score)) for doc, score in list(anchors.items())[:ANCHORS]}
    if not seeds or budget <= 0:
        return []
    if not any(seeds.values()):
        seeds = dict.fromkeys(seeds, 1.0)
    fused: dict[int, float] = defaultdict(float)
    ways: dict[int, tuple[int, str, str, int]] = {}
    for pattern in patterns:
        scores, best = _forward_push(connection, seeds, pattern, alpha, threshold, top_k)
        ranked = sorted(
            (doc for doc in scores if doc not in seeds and doc in best),
            key=lambda doc: (-scores[doc], doc),
        )
        for rank, doc in enumerate(ranked, start=1):
            fused[doc] += 1.0 / (_RRF_K + rank)
            ways.setdefault(doc, best[doc])
    if not fused:
        return []
    top = max(fused.values())
    scores = {doc: value / top for doc, value in fused.items()}
    if similarity is not None:
        cosines = similarity(list(scores))
        for doc in scores:
            scores[doc] *= _similarity(cosines, doc) * DECAY ** ways[doc][3]
    ordered = sorted(scores, key=lambda doc: (-scores[doc], doc))[:budget]
    found: list[Discovery] = []
    for doc in ordered:
        via, kind, way, hop = ways[doc]
        found.append(Discovery(doc, scores[doc], hop, via, kind, way, _root(via, ways, seeds)))
    return found


def _root(
    doc: int, ways: Mapping[int, tuple[int, str, str, int]], seeds: Mapping[int, float]
) -> int:
    """The anchor a push into ``doc`` started from (following the heaviest pushes back)."""
    for _ in range(len(ways) + 1):
        if doc in seeds or doc not in ways:
            return doc
        doc = ways[doc][0]
    return doc


def check_direction(direction: str) -> str:
    """``causes``, ``caused_by`` or ``both`` (any case); anything else is refused."""
    if not isinstance(direction, str) or direction.strip().lower() not in CAUSAL_DIRECTIONS:
        raise InvalidQueryError(
            f"direction must be one of {', '.join(CAUSAL_DIRECTIONS)}, got {direction!r}"
        )
    return direction.strip().lower()


def check_causal_depth(depth: int) -> int:
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_CAUSAL_DEPTH:
        raise InvalidQueryError(f"depth must be a whole number from 1 to {MAX_CAUSAL_DEPTH}")
    return depth


def causal_links(
    connection: Connection, doc_id: int, direction: str = "both", depth: int = 5
) -> list[CausalLink]:
    """The causal edges on chains through ``doc_id``: what it led to (``causes``), what led
    to it (``caused_by``), or both; breadth first, each edge once, active documents only."""
    direction = check_direction(direction)
    depth = check_causal_depth(depth)
    links: list[CausalLink] = []
    ways = ("causes", "caused_by") if direction == "both" else (direction,)
    for way in ways:
        seen = {doc_id}
        frontier = [doc_id]
        for hop in range(1, depth + 1):
            if not frontier:
                break
            marks = ",".join("?" * len(frontier))
            near, far = (
                ("source_id", "target_id") if way == "causes" else ("target_id", "source_id")
            )
            rows = connection.execute(
                f"""
                SELECT r.source_id, r.target_id, r.weight, s.docid, t.docid, s.title, t.title,
                       r.{far}
                FROM memory_relations r
                JOIN documents s ON s.id = r.source_id AND s.active = 1
                JOIN documents t ON t.id = r.target_id AND t.active = 1
                WHERE r.relation_type = 'causal' AND r.{near} IN ({marks})
                ORDER BY r.weight DESC, r.source_id, r.target_id
                """,
                frontier,
            ).fetchall()
            next_frontier: list[int] = []
            for source, target, weight, sdoc, tdoc, stitle, ttitle, other in rows:
                if int(other) in seen:
                    continue
                seen.add(int(other))
                next_frontier.append(int(other))
                links.append(
                    CausalLink(
                        int(source),
                        int(target),
                        str(sdoc),
                        str(tdoc),
                        str(stitle),
                        str(ttitle),
                        float(weight),
                        hop,
                        way,
                    )
                )
            frontier = next_frontier
    return links
