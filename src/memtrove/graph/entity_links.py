"""``entity`` edges: documents that share a specific entity, linked both ways.

An edge's weight is the specificity of the most specific entity the two documents share,
``log(1 + N/df) / log(1 + N)`` (N active documents, df of them naming it): an entity named
nearly everywhere falls below :data:`ENTITY_EDGE_THRESHOLD` and links nothing. A document
links to at most :data:`MAX_ENTITY_EDGES` others, strongest first, found among the
:data:`MAX_LINKED_DOCUMENTS` most recent documents naming each of its entities.

A bulk run links once every mention is in, with a :class:`LinkCache`: each entity is looked
up once per run, not once per document naming it, and an edge already written in the run
at a weight at least as high is not written again (the upsert would change nothing).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from itertools import chain
from operator import itemgetter

from memtrove.db.connection import Connection, write_step
from memtrove.text import to_iso

__all__ = [
    "ENTITY_EDGE_THRESHOLD",
    "MAX_ENTITY_EDGES",
    "MAX_LINKED_DOCUMENTS",
    "LinkCache",
    "active_documents",
    "link_rows",
    "link_shared_entities",
    "naming_of",
    "specificity",
    "write_entity_edges",
]

ENTITY_EDGE_THRESHOLD = 0.3
MAX_LINKED_DOCUMENTS = 50  # per entity and document: the most recent ones sharing it
MAX_ENTITY_EDGES = 20  # per document: the strongest links (most specific, most shared)
MAX_SHARED_LISTED = 10  # entity ids an edge's metadata lists


class LinkCache:
    """What one linking run has learnt: per entity, how many active documents name it and
    the most recent of them; per pair of documents, the weight already written.
    ``buffered``: edge rows are kept in :attr:`rows` for the caller to write with
    :meth:`flush` (in the same transaction), not written document by document."""

    def __init__(self, *, buffered: bool = False) -> None:
        self.naming: dict[str, tuple[int, list[int]]] = {}
        self.written: dict[tuple[int, int], float] = {}
        self.buffered = buffered
        self.rows: list[tuple[int, int, float, str, str]] = []

    def flush(self, connection: Connection) -> None:
        """Write the buffered edge rows."""
        rows, self.rows = self.rows, []
        write_entity_edges(connection, rows)


def specificity(documents: int, naming: int) -> float:
    """IDF-style weight of an entity named in ``naming`` of ``documents`` documents."""
    if documents <= 1 or naming <= 0:
        return 0.0
    return math.log(1 + documents / naming) / math.log(1 + documents)


def active_documents(connection: Connection) -> int:
    return int(connection.execute("SELECT COUNT(*) FROM documents WHERE active = 1").fetchone()[0])


def link_shared_entities(
    connection: Connection,
    doc_id: int,
    entity_ids: Sequence[str],
    *,
    documents: int | None = None,
    cache: dict[str, tuple[int, list[int]]] | LinkCache | None = None,
) -> int:
    """Write ``entity`` edges both ways between ``doc_id`` and the documents sharing its
    specific entities (weight: the most specific shared entity), at most
    :data:`MAX_ENTITY_EDGES` of them, strongest first; returns how many documents it was
    linked to. A bulk run, linking once every mention is in, passes ``documents`` (the
    active count) and a ``cache`` for the whole run (a :class:`LinkCache`, or the per-entity
    dict of one), so each entity is looked up once, not once per document."""
    if not entity_ids:
        return 0
    if documents is None:
        documents = active_documents(connection)
    if isinstance(cache, LinkCache):
        naming: dict[str, tuple[int, list[int]]] = cache.naming
        written: dict[tuple[int, int], float] | None = cache.written
    else:
        naming, written = (cache if cache is not None else {}), None
    for identifier in entity_ids:
        if identifier not in naming:
            naming[identifier] = _naming(connection, identifier)
    linked, rows = link_rows(doc_id, entity_ids, documents, naming, written)
    if isinstance(cache, LinkCache) and cache.buffered:
        cache.rows.extend(rows)
    else:
        write_entity_edges(connection, rows)
    return linked


def naming_of(
    connection: Connection, entity_ids: Iterable[str]
) -> dict[str, tuple[int, list[int]]]:
    """Per entity, how many active documents name it and the most recent of them (what
    :func:`link_rows` reads), each looked up once."""
    return {identifier: _naming(connection, identifier) for identifier in dict.fromkeys(entity_ids)}


def link_rows(
    doc_id: int,
    entity_ids: Sequence[str],
    documents: int,
    naming: Mapping[str, tuple[int, list[int]]],
    written: dict[tuple[int, int], float] | None = None,
) -> tuple[int, list[tuple[int, int, float, str, str]]]:
    """How many documents ``doc_id`` links to by its entities, and the edge rows (both
    directions) to write; ``naming`` holds each entity's :func:`naming_of`. ``written``
    (a run's): the weight each pair was written at, so a pair already as strong is not
    written again. No database: a helper process can run it."""
    # Per specific entity, the documents it links to (self left out, at most
    # MAX_LINKED_DOCUMENTS each); then per candidate its best weight, how many of the
    # entities it shares and where it was first found, all by C-level dict and Counter
    # work rather than a Python step per (entity, candidate).
    kept: list[tuple[str, float, list[int]]] = []
    for identifier in dict.fromkeys(entity_ids):
        count, recent = naming[identifier]
        if count < 2:
            continue
        weight = specificity(documents, count)
        if weight < ENTITY_EDGE_THRESHOLD:
            continue
        if doc_id in recent:
            recent = [other for other in recent if other != doc_id]
        kept.append((identifier, weight, recent[:MAX_LINKED_DOCUMENTS]))
    if not kept:
        return 0, []
    found = list(dict.fromkeys(chain.from_iterable(others for _, _, others in kept)))
    shared_count = Counter(chain.from_iterable(others for _, _, others in kept))
    best: dict[int, float] = {}
    for _, weight, others in sorted(kept, key=itemgetter(1)):
        best.update(dict.fromkeys(others, weight))  # the highest weight is written last
    # Strongest first; among equals the most shared, then the first found.
    ranked = sorted(
        zip(
            map(best.__getitem__, found),
            map(shared_count.__getitem__, found),
            range(0, -len(found), -1),
            found,
            strict=True,
        ),
        reverse=True,
    )
    chosen = [other for _, _, _, other in ranked[:MAX_ENTITY_EDGES]]
    members = [(identifier, set(others)) for identifier, _, others in kept]
    shared = {other: [i for i, inside in members if other in inside] for other in chosen}
    links = []
    for other in chosen:
        weight = round(min(max(best[other], 0.0), 1.0), 4)
        if written is not None:
            pair = (doc_id, other) if doc_id < other else (other, doc_id)
            if written.get(pair, -1.0) >= weight:
                continue  # both directions are there already, at least this strong
            written[pair] = weight
        links.append((other, weight, shared[other]))
    return len(chosen), _edge_rows(doc_id, links)


def _naming(connection: Connection, identifier: str) -> tuple[int, list[int]]:
    """How many active documents name the entity, and the most recent of them (one more
    than a document links to, so that leaving the document itself out still leaves
    enough)."""
    naming = int(
        connection.execute(
            "SELECT COUNT(*) FROM entity_mentions m JOIN documents d ON d.id = m.doc_id"
            " WHERE m.entity_id = ? AND d.active = 1",
            (identifier,),
        ).fetchone()[0]
    )
    if naming < 2:
        return naming, []
    recent = [
        int(row[0])
        for row in connection.execute(
            "SELECT m.doc_id FROM entity_mentions m JOIN documents d ON d.id = m.doc_id"
            " WHERE m.entity_id = ? AND d.active = 1 ORDER BY d.modified_at DESC LIMIT ?",
            (identifier, MAX_LINKED_DOCUMENTS + 1),
        )
    ]
    return naming, recent


def _edge_rows(
    doc_id: int, links: Sequence[tuple[int, float, list[str]]]
) -> list[tuple[int, int, float, str, str]]:
    """Both directions of each link, as ``memory_relations`` rows."""
    import json

    if not links:
        return []
    moment = to_iso(datetime.now(UTC))
    rows = []
    for other, weight, shared in links:
        metadata = json.dumps({"entities": shared[:MAX_SHARED_LISTED]})
        rows += [
            (doc_id, other, weight, metadata, moment),
            (other, doc_id, weight, metadata, moment),
        ]
    return rows


def write_entity_edges(
    connection: Connection, rows: list[tuple[int, int, float, str, str]]
) -> None:
    """Write ``entity`` edge rows (weight-monotonic, as
    :func:`memtrove.graph.relations.upsert_relation` writes one edge) in one step, in key
    order: a bulk run would otherwise pay a transaction per edge, and random-order inserts
    into the edge table's indexes."""
    if not rows:
        return
    rows.sort()
    with write_step(connection):
        connection.executemany(
            """
            INSERT INTO memory_relations
                (source_id, target_id, relation_type, weight, metadata, created_at)
            VALUES (?, ?, 'entity', ?, ?, ?)
            ON CONFLICT (source_id, target_id, relation_type) DO UPDATE SET weight =
                CASE WHEN excluded.weight > memory_relations.weight
                THEN excluded.weight ELSE memory_relations.weight END
            """,
            rows,
        )
