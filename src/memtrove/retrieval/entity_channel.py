"""The entity-graph channel of ``query``: documents about the entities a question names.

It runs only when the question names an entity the vault knows (an ``entity_nodes`` name,
matched whole and case-blind against the question's one- to four-word phrases, so
"what did Priya Raman decide" finds ``Priya Raman`` and "is PgBouncer still pooled" finds
``PgBouncer``). One indexed lookup decides that; a question naming no known entity costs
nothing more, and a vault without entities never runs the rest.

The channel is one ranked list:

1. documents that mention the named entities (``entity_mentions``), those naming more of
   them first, then in the order retrieval already ranked them, then newest first;
2. a 1-hop walk from the best of those (the seed results): documents linked to them by
   ``entity`` edges (``memory_relations``), strongest edge first.

An entity named nearly everywhere says nothing about which document answers (a project's
own name in every note): one whose specificity, ``log(1 + N/df) / log(1 + N)``, is below
the entity-edge threshold (0.3, :mod:`memtrove.graph.entity_resolution`) is left out, as
entity resolution leaves it out of edges.

The list joins the query's rank fusion as one more list (weight :data:`ENTITY_WEIGHT`, that
of an expansion list); see :mod:`memtrove.retrieval.temporal_channels`.
"""

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from memtrove.db.connection import Connection
from memtrove.patterns import LazyPattern
from memtrove.text import STOPWORDS

if TYPE_CHECKING:
    from memtrove.retrieval.filters import Filters

__all__ = [
    "ENTITY_SEEDS",
    "ENTITY_WEIGHT",
    "MIN_SPECIFICITY",
    "NamedEntity",
    "entity_list",
    "filter_conditions",
    "named_entities",
]

ENTITY_WEIGHT = 1.0
ENTITY_SEEDS = 5  # the walk starts from this many of the best mentioning documents
MIN_SPECIFICITY = 0.3  # graph.entity_resolution.ENTITY_EDGE_THRESHOLD
MAX_PHRASE_WORDS = 4
MAX_PHRASES = 200
_TOKEN = LazyPattern(r"@?\w[\w.+#/-]*\w|@?\w", re.UNICODE)


class NamedEntity(NamedTuple):
    """An entity the question names, and how many active documents mention it."""

    entity_id: str
    name: str
    documents: int


def _phrases(query: str) -> list[str]:
    """The question's lowercase phrases of one to four words (single stopwords left out)."""
    tokens = [token.lower() for token in _TOKEN.findall(query)]
    tokens = [token.removesuffix("'s").rstrip(".") for token in tokens]
    phrases: dict[str, None] = {}
    for start in range(len(tokens)):
        for size in range(1, MAX_PHRASE_WORDS + 1):
            part = tokens[start : start + size]
            if len(part) < size:
                break
            if size == 1 and (len(part[0]) < 2 or part[0] in STOPWORDS or part[0].isdigit()):
                continue
            phrases[" ".join(part)] = None
            if len(phrases) >= MAX_PHRASES:
                return list(phrases)
    return list(phrases)


def filter_conditions(
    connection: Connection, filters: "Filters", alias: str = "d"
) -> tuple[str, list[object]]:
    """``AND ...`` conditions for the filters every channel applies, and their parameters."""
    where = [f"{alias}.active = 1", f"{alias}.invalidated_at IS NULL"]
    conditions, parameters = filters.where(alias)
    where += conditions
    # searchable documents only: what BM25 and vectors could return
    where.append(connection.text.indexed_condition(alias))
    return " AND ".join(where), parameters


def named_entities(connection: Connection, query: str) -> list[NamedEntity]:
    """The known entities ``query`` names, specific enough to point at documents.

    One indexed lookup (``LOWER(name)``) when the question names none; the common case.
    """
    phrases = _phrases(query)
    if not phrases:
        return []
    marks = ",".join("?" * len(phrases))
    rows = connection.execute(
        f"SELECT entity_id, name FROM entity_nodes WHERE LOWER(name) IN ({marks})", phrases
    ).fetchall()
    if not rows:
        return []
    identifiers = {str(row[0]): str(row[1]) for row in rows}
    marks = ",".join("?" * len(identifiers))
    counts = dict(
        connection.execute(
            "SELECT m.entity_id, COUNT(*) FROM entity_mentions m JOIN documents d "
            f"ON d.id = m.doc_id WHERE d.active = 1 AND m.entity_id IN ({marks}) "
            "GROUP BY m.entity_id",
            list(identifiers),
        ).fetchall()
    )
    if not counts:
        return []
    total = int(connection.execute("SELECT COUNT(*) FROM documents WHERE active = 1").fetchone()[0])
    named = []
    for identifier, name in identifiers.items():
        documents = int(counts.get(identifier, 0))
        if documents and _specificity(total, documents) >= MIN_SPECIFICITY:
            named.append(NamedEntity(identifier, name, documents))
    return sorted(named, key=lambda entity: (entity.documents, entity.entity_id))


def _specificity(total: int, naming: int) -> float:
    if total <= 1:
        return 1.0
    return math.log(1 + total / naming) / math.log(1 + total)


def entity_list(
    connection: Connection,
    entities: Sequence[NamedEntity],
    pool: Sequence[int],
    depth: int,
    filters: "Filters",
) -> list[int]:
    """Documents mentioning ``entities`` then their 1-hop ``entity`` neighbours, best first
    (``pool``: retrieval's own order, which breaks ties among mentioning documents)."""
    if not entities or depth <= 0:
        return []
    where, parameters = filter_conditions(connection, filters)
    marks = ",".join("?" * len(entities))
    rows = connection.execute(
        # MAX over one document's rows (all equal): GROUP BY m.doc_id names d by an aggregate
        "SELECT m.doc_id, COUNT(*), MAX(COALESCE(d.authored_at, d.modified_at, '')) "
        f"FROM entity_mentions m JOIN documents d ON d.id = m.doc_id "
        f"WHERE m.entity_id IN ({marks}) AND {where} GROUP BY m.doc_id",
        [*(entity.entity_id for entity in entities), *parameters],
    ).fetchall()
    position = {doc: index for index, doc in enumerate(pool)}
    unranked = len(position)
    # more entities named first, then retrieval's order, then newest (two stable sorts)
    rows.sort(key=lambda row: str(row[2]), reverse=True)
    rows.sort(key=lambda row: (-int(row[1]), position.get(int(row[0]), unranked)))
    mentioning = [int(row[0]) for row in rows][:depth]
    if not mentioning:
        return []
    seeds = mentioning[:ENTITY_SEEDS]
    marks = ",".join("?" * len(seeds))
    neighbours = connection.execute(
        "SELECT other, MAX(weight) AS strongest FROM ("
        f"SELECT target_id AS other, weight FROM memory_relations WHERE source_id IN ({marks}) "
        "AND relation_type = 'entity' UNION ALL "
        f"SELECT source_id AS other, weight FROM memory_relations WHERE target_id IN ({marks}) "
        "AND relation_type = 'entity') e JOIN documents d ON d.id = e.other "
        f"WHERE {where} GROUP BY other ORDER BY strongest DESC, other",
        [*seeds, *seeds, *parameters],
    ).fetchall()
    found = dict.fromkeys(mentioning)
    for row in neighbours:
        if len(found) >= depth:
            break
        found.setdefault(int(row[0]), None)
    return list(found)
