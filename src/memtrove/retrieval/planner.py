"""``query_plan``: split a multi-topic question into sub-queries, run each, merge them.

Decomposition asks the LLM when one is configured (a JSON list of clauses, each with a
``query``, a ``type`` of ``bm25``, ``vector`` or ``graph`` and a ``priority`` 1-5, 1 first).
Without an LLM, or when its answer is unusable (an error, truncated or non-JSON text, no
valid clause), a heuristic splits the question on question marks, semicolons, "and also" /
"as well as" / "plus", and "compare A and B" / "A vs B" / "difference between A and B";
the whole question always stays as a clause of its own, so a plan never finds less than
its question would alone.

Each clause runs by type (``bm25``: BM25; ``vector``: vectors; ``graph``: BM25 and vectors
together, as ``hybrid`` fuses them: score fusion and conversation context, which measured
R@10 .786 on the LoCoMo development set where the reference product's RRF of BM25 (15) and
vectors gave .694), in priority order. A document keeps its best score over clauses,
each clause's scores scaled by ``1 / priority``; ``provenance`` says which clauses found it.
The merged list is composite-scored by the caller.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memtrove.db.connection import Connection
from memtrove.errors import EmbeddingSpaceError, ModelError
from memtrove.models.protocols import LLM
from memtrove.retrieval.cache import cache_get, cache_key, cache_put

if TYPE_CHECKING:
    from memtrove.retrieval.pipeline import Filters, Retriever

__all__ = [
    "CLAUSE_TYPES",
    "MAX_CLAUSES",
    "Clause",
    "decompose",
    "decompose_heuristic",
    "parse_plan",
    "run_plan",
]

CLAUSE_TYPES: tuple[str, ...] = ("bm25", "vector", "graph")
MAX_CLAUSES = 5
MAX_CLAUSE_CHARS = 300
PLAN_VERSION = "plan-v1"
_MIN_WORDS = 2


@dataclass(frozen=True)
class Clause:
    """One sub-query of a plan."""

    query: str
    type: str = "graph"
    priority: int = 1
    source: str = "heuristic"  # "heuristic", "llm" or "question" (the whole question)

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "type": self.type,
            "priority": self.priority,
            "source": self.source,
        }


_SPLIT = re.compile(
    r"\?|;|\n|\b(?:and also|as well as|and then|plus|also)\b|,\s*and\b", re.IGNORECASE
)
_COMPARE = re.compile(
    r"\b(?:compare|comparison of|difference between|differences between)\s+(.+?)\s+"
    r"(?:and|with|to|vs\.?|versus)\s+(.+?)(?:[?.!]|$)",
    re.IGNORECASE,
)
_VERSUS = re.compile(r"(.+?)\s+(?:vs\.?|versus)\s+(.+?)(?:[?.!]|$)", re.IGNORECASE)
_LEAD = re.compile(r"^\s*(?:and|or|but|then|also)\s+", re.IGNORECASE)


def _words(text: str) -> int:
    return len(re.findall(r"\w+", text))


def decompose_heuristic(query: str) -> list[Clause]:
    """Clauses by wording alone (see the module docstring); the question comes first."""
    question = " ".join(query.split())[:MAX_CLAUSE_CHARS]
    parts: list[str] = []
    compared = _COMPARE.search(question) or _VERSUS.search(question)
    if compared:
        parts.extend([compared.group(1), compared.group(2)])
    else:
        parts.extend(_SPLIT.split(question))
    clauses = [Clause(question, "graph", 1, "question")] if question else []
    seen = {question.lower()}
    for part in parts:
        text = _LEAD.sub("", part).strip(" ,.:-")
        if _words(text) < _MIN_WORDS and not compared:
            continue
        if not text or text.lower() in seen:
            continue
        seen.add(text.lower())
        clauses.append(Clause(text, "graph", 2, "heuristic"))
        if len(clauses) >= MAX_CLAUSES:
            break
    return clauses


_PROMPT = """Split this memory search question into at most {most} independent sub-queries.
For each give "query" (short search text), "type" (bm25 for exact names and identifiers,
vector for meaning, graph for both) and "priority" (1 = most important, up to 5).
Answer with a JSON list only, like [{{"query": "...", "type": "graph", "priority": 1}}].
Question: {question}"""
_LIST = re.compile(r"\[.*\]", re.DOTALL)


def parse_plan(answer: str) -> list[Clause]:
    """The valid clauses of an LLM answer (JSON list, maybe fenced); empty when unusable."""
    if not isinstance(answer, str):
        return []
    match = _LIST.search(answer)
    if match is None:
        return []
    try:
        data = json.loads(match.group(0))
    except (ValueError, RecursionError):
        return []
    if not isinstance(data, list):
        return []
    clauses: list[Clause] = []
    for item in data:
        if not isinstance(item, dict):
            continue
        text = item.get("query")
        if not isinstance(text, str) or not text.strip():
            continue
        kind = str(item.get("type", "graph")).strip().lower()
        priority = item.get("priority", 2)
        if isinstance(priority, bool) or not isinstance(priority, (int, float)):
            priority = 2
        clauses.append(
            Clause(
                " ".join(text.split())[:MAX_CLAUSE_CHARS],
                kind if kind in CLAUSE_TYPES else "graph",
                max(1, min(5, int(priority))),
                "llm",
            )
        )
        if len(clauses) >= MAX_CLAUSES:
            break
    return clauses


def decompose(
    connection: Connection,
    query: str,
    llm: LLM | None = None,
    warnings: list[str] | None = None,
) -> list[Clause]:
    """The plan's clauses: the LLM's (cached) when configured and usable, else the
    heuristic's. The whole question is always the first clause."""
    heuristic = decompose_heuristic(query)
    if llm is None or not heuristic:
        return heuristic
    key = cache_key("plan", PLAN_VERSION, llm.identity, query)
    cached = cache_get(connection, key)
    clauses: list[Clause] = []
    if isinstance(cached, list):
        clauses = parse_plan(json.dumps(cached))
    if not clauses:
        try:
            answer = llm.complete(
                _PROMPT.format(most=MAX_CLAUSES - 1, question=query[:2000]),
                max_tokens=400,
                temperature=0.0,
            )
        except ModelError as error:
            if warnings is not None:
                warnings.append(f"query decomposition by the LLM failed: {error}")
            return heuristic
        clauses = parse_plan(answer)
        if not clauses:
            if warnings is not None:
                warnings.append("the LLM's plan was not understood; split the question by wording")
            return heuristic
        cache_put(connection, {key: [clause.to_dict() for clause in clauses]})
    question = heuristic[0]
    rest = [clause for clause in clauses if clause.query.lower() != question.query.lower()]
    return [question, *rest][:MAX_CLAUSES]


def run_plan(
    retriever: Retriever,
    clauses: Sequence[Clause],
    depth: int,
    filters: Filters,
    skipped: dict[str, str],
) -> tuple[list[tuple[int, float]], dict[int, list[int]]]:
    """Merged ``(doc id, score)`` best first and doc id -> indexes of the clauses that found it."""
    from memtrove.retrieval.fusion import normalize_max

    best: dict[int, float] = {}
    provenance: dict[int, list[int]] = {}
    order = sorted(range(len(clauses)), key=lambda index: (clauses[index].priority, index))
    for index in order:
        clause = clauses[index]
        hits: list[tuple[int, float]] = []
        if clause.type == "bm25":
            hits = retriever.bm25(clause.query, depth, filters)
        elif clause.type == "vector":
            try:
                hits = [
                    (doc, score)
                    for doc, score, _ in retriever.vectors(clause.query, depth, filters)
                ]
            except (EmbeddingSpaceError, ModelError) as error:
                skipped["vector"] = str(error)
        else:
            combined = retriever.hybrid(clause.query, depth, filters)
            skipped.update(combined.skipped)
            hits = combined.hits
        for doc, score in normalize_max(hits):
            weighted = score / clause.priority
            if weighted > best.get(doc, 0.0):
                best[doc] = weighted
            provenance.setdefault(doc, []).append(index)
    merged = sorted(best.items(), key=lambda pair: (-pair[1], pair[0]))
    return merged, provenance
