"""Typed, weighted edges between documents (``memory_relations``).

Writing an edge that exists keeps the larger weight: equal reruns change nothing, stronger
later evidence is kept, and repetition never inflates a weight.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memtrove.db.connection import Connection, write_transaction
from memtrove.errors import InvalidQueryError
from memtrove.text import to_iso

__all__ = ["RELATION_TYPES", "Relation", "relations_among", "upsert_relation"]

RELATION_TYPES = frozenset(
    {"semantic", "supporting", "contradicts", "causal", "temporal", "entity", "usage"}
)


@dataclass(frozen=True)
class Relation:
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
    with write_transaction(connection):
        connection.execute(
            """
            INSERT INTO memory_relations
                (source_id, target_id, relation_type, weight, metadata, created_at)
            VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (source_id, target_id, relation_type)
            DO UPDATE SET weight = MAX(weight, excluded.weight)
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
