"""Typed, weighted edges between documents (``memory_relations``).

Types: ``semantic`` (topically related, either direction), ``supporting``, ``contradicts``,
``causal``, ``temporal`` (creation order), ``entity`` (a shared entity), ``usage`` (surfaced
together) and ``reference`` (a link written in the source document, see
:mod:`memtrove.graph.links`).

Writing an edge that exists keeps the larger weight: equal reruns change nothing, stronger
later evidence is kept, and repetition never inflates a weight. ``semantic`` edges are the
exception, as in the spec: the first writer wins (an existing semantic edge keeps its weight
and metadata; semantic is symmetric, so one in the other direction counts as existing), and a
semantic edge is not written between two documents that an edge of a classified type
(supporting, contradicts, causal) already joins in either direction, so a bulk cosine pass
never shadows what enrichment decided.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple

from memtrove.db.connection import Connection, write_step
from memtrove.errors import InvalidQueryError
from memtrove.text import to_iso

__all__ = [
    "CLASSIFIED_TYPES",
    "REFERENCE",
    "RELATION_TYPES",
    "Relation",
    "count_relations",
    "delete_relations",
    "insert_edges",
    "insert_references",
    "insert_semantic_edges",
    "insert_temporal_edges",
    "relations_among",
    "relations_of",
    "upsert_relation",
]

REFERENCE = "reference"
RELATION_TYPES = frozenset(
    {"semantic", "supporting", "contradicts", "causal", "temporal", "entity", "usage", REFERENCE}
)
CLASSIFIED_TYPES = ("supporting", "contradicts", "causal")  # a semantic edge never shadows these
_CHUNK = 500


class Relation(NamedTuple):
    """An edge between two documents, with their titles for display."""

    source_id: int
    target_id: int
    relation_type: str
    weight: float
    source_title: str
    target_title: str

    def line(self) -> str:
        """``- Source --[type]--> Target`` (the ``<relationships>`` line)."""
        return f"- {self.source_title} --[{self.relation_type}]--> {self.target_title}"


def upsert_relation(
    connection: Connection,
    source_id: int,
    target_id: int,
    relation_type: str,
    weight: float = 1.0,
    metadata: Mapping[str, Any] | None = None,
) -> None:
    """Write one edge (weight-monotonic); a self-edge or an unknown type is refused."""
    if relation_type not in RELATION_TYPES:
        known = ", ".join(sorted(RELATION_TYPES))
        raise InvalidQueryError(f"unknown relation type {relation_type!r} (known: {known})")
    if source_id == target_id:
        raise InvalidQueryError("a document cannot be related to itself")
    if not 0.0 <= weight <= 1.0:
        raise InvalidQueryError(f"weight must be between 0 and 1, got {weight}")
    with write_step(connection):
        if relation_type == "semantic":
            insert_semantic_edges(connection, [(source_id, target_id, weight)], metadata=metadata)
            return
        connection.execute(
            """
            INSERT INTO memory_relations
                (source_id, target_id, relation_type, weight, metadata, created_at)
            VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (source_id, target_id, relation_type) DO UPDATE SET weight =
                CASE WHEN excluded.weight > memory_relations.weight
                THEN excluded.weight ELSE memory_relations.weight END
            """,
            (
                source_id,
                target_id,
                relation_type,
                weight,
                json.dumps(dict(metadata)) if metadata else None,
                to_iso(datetime.now(UTC)),
            ),
        )


def relations_among(
    connection: Connection, doc_ids: Sequence[int], limit: int = 10
) -> list[Relation]:
    """Edges with both ends in ``doc_ids`` (active documents), strongest first."""
    ids = list(dict.fromkeys(doc_ids))
    if len(ids) < 2 or limit <= 0:
        return []
    marks = ",".join("?" * len(ids))
    rows = connection.execute(
        f"""
        SELECT r.source_id, r.target_id, r.relation_type, r.weight, s.title, t.title
        FROM memory_relations r
        JOIN documents s ON s.id = r.source_id AND s.active = 1
        JOIN documents t ON t.id = r.target_id AND t.active = 1
        WHERE r.source_id IN ({marks}) AND r.target_id IN ({marks})
        ORDER BY r.weight DESC, r.source_id, r.target_id, r.relation_type
        LIMIT ?
        """,
        (*ids, *ids, limit),
    ).fetchall()
    return [
        Relation(int(a), int(b), str(kind), float(weight), str(source), str(target))
        for a, b, kind, weight, source, target in rows
    ]


def _now() -> str:
    return to_iso(datetime.now(UTC))


def insert_semantic_edges(
    connection: Connection,
    edges: Sequence[tuple[int, int, float]],
    *,
    metadata: Mapping[str, Any] | None = None,
) -> int:
    """Write ``semantic`` edges first-writer-wins (see the module doc); returns how many are
    new. Call inside a write transaction."""
    text = json.dumps(dict(metadata)) if metadata else None
    classified = ",".join(f"'{kind}'" for kind in CLASSIFIED_TYPES)
    cursor = connection.executemany(
        f"""
        INSERT INTO memory_relations
            (source_id, target_id, relation_type, weight, metadata, created_at)
        SELECT ?, ?, 'semantic', ?, ?, ?
        WHERE ? != ? AND NOT EXISTS (
            SELECT 1 FROM memory_relations c
            WHERE (c.source_id = ? AND c.target_id = ? AND c.relation_type IN ({classified}))
               OR (c.source_id = ? AND c.target_id = ?
                   AND c.relation_type IN ({classified}, 'semantic'))
        )
        ON CONFLICT (source_id, target_id, relation_type) DO NOTHING
        """,
        [(a, b, min(1.0, max(0.0, float(w))), text, _now(), a, b, a, b, b, a) for a, b, w in edges],
    )
    return int(cursor.rowcount)


def insert_temporal_edges(
    connection: Connection, edges: Sequence[tuple[int, int]], *, weight: float = 1.0
) -> int:
    """Write ``temporal`` edges (weight-monotonic); returns how many are new. Call inside a
    write transaction."""
    rows = [(a, b, weight, _now()) for a, b in edges if a != b]
    added = connection.executemany(
        "INSERT INTO memory_relations "
        "(source_id, target_id, relation_type, weight, metadata, created_at) "
        "VALUES (?, ?, 'temporal', ?, NULL, ?) "
        "ON CONFLICT (source_id, target_id, relation_type) DO NOTHING",
        rows,
    ).rowcount
    connection.executemany(  # weight-monotonic: a stronger rewrite raises a weaker edge
        "UPDATE memory_relations SET weight = ? WHERE source_id = ? AND target_id = ? "
        "AND relation_type = 'temporal' AND weight < ?",
        [(w, a, b, w) for a, b, w, _ in rows],
    )
    return int(added)


def insert_edges(
    connection: Connection,
    relation_type: str,
    edges: Sequence[tuple[int, int, float]],
    *,
    metadata: Mapping[str, Any] | None = None,
    contradict_confidence: float | None = None,
) -> None:
    """Write classified edges (not ``semantic``) weight-monotonically; self-edges are
    skipped. Call inside a write transaction."""
    if relation_type not in RELATION_TYPES or relation_type == "semantic":
        raise InvalidQueryError(f"insert_edges cannot write {relation_type!r} edges")
    text = json.dumps(dict(metadata)) if metadata else None
    connection.executemany(
        "INSERT INTO memory_relations (source_id, target_id, relation_type, weight, metadata, "
        "created_at, contradict_confidence) VALUES (?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (source_id, target_id, relation_type) DO UPDATE SET weight = "
        "CASE WHEN excluded.weight > memory_relations.weight "
        "THEN excluded.weight ELSE memory_relations.weight END",
        [
            (a, b, relation_type, min(1.0, max(0.0, w)), text, _now(), contradict_confidence)
            for a, b, w in edges
            if a != b
        ],
    )


def insert_references(connection: Connection, edges: Sequence[tuple[int, int]]) -> None:
    """Write ``reference`` edges (weight 1) for resolved links; call inside a write
    transaction."""
    if not edges:
        return
    now = _now()
    connection.executemany(
        "INSERT INTO memory_relations "
        "(source_id, target_id, relation_type, weight, metadata, created_at) "
        "VALUES (?, ?, 'reference', 1.0, NULL, ?) "
        "ON CONFLICT (source_id, target_id, relation_type) DO NOTHING",
        [(a, b, now) for a, b in edges if a != b],
    )


def delete_relations(
    connection: Connection,
    doc_ids: Sequence[int],
    *,
    relation_type: str,
    outgoing_only: bool = False,
) -> None:
    """Delete ``relation_type`` edges leaving ``doc_ids`` (and arriving at them unless
    ``outgoing_only``); call inside a write transaction."""
    ids = list(doc_ids)
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        connection.execute(
            f"DELETE FROM memory_relations WHERE relation_type = ? AND source_id IN ({marks})",
            (relation_type, *chunk),
        )
        if not outgoing_only:
            connection.execute(
                f"DELETE FROM memory_relations WHERE relation_type = ? AND target_id IN ({marks})",
                (relation_type, *chunk),
            )


def count_relations(connection: Connection, relation_type: str) -> int:
    """How many ``relation_type`` edges the vault holds."""
    row = connection.execute(
        "SELECT COUNT(*) FROM memory_relations WHERE relation_type = ?", (relation_type,)
    ).fetchone()
    return int(row[0])


def relations_of(connection: Connection, doc_id: int) -> list[Relation]:
    """Edges leaving or reaching one document (both ends active), strongest first."""
    rows = connection.execute(
        """
        SELECT r.source_id, r.target_id, r.relation_type, r.weight, s.title, t.title
        FROM memory_relations r
        JOIN documents s ON s.id = r.source_id AND s.active = 1
        JOIN documents t ON t.id = r.target_id AND t.active = 1
        WHERE r.source_id = ? OR r.target_id = ?
        ORDER BY r.weight DESC, r.source_id, r.target_id, r.relation_type
        """,
        (doc_id, doc_id),
    ).fetchall()
    return [
        Relation(int(a), int(b), str(kind), float(weight), str(source), str(target))
        for a, b, kind, weight, source, target in rows
    ]
