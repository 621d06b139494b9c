"""Named entities and subject-predicate-object facts about them (``entity_nodes``,
``entity_triples``).

An entity's id is ``vault:type:slug``. A fact's object is another entity or a literal; a
fact holds from ``valid_from`` until ``valid_to`` (open ends: always). Facts about a piece
of text are those whose subject or object entity is named in it, as whole words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from memtrove.db.connection import Connection, write_transaction
from memtrove.errors import InvalidQueryError
from memtrove.text import to_iso

__all__ = ["Fact", "add_fact", "entity_id", "facts_about", "slug"]

_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)
MAX_SCANNED_ENTITIES = 5000  # entities checked against a prompt, most mentioned first


@dataclass(frozen=True)
class Fact:
    subject: str
    predicate: str
    object: str
    valid_from: str | None
    valid_to: str | None
    confidence: float

    def line(self) -> str:
        """``subject predicate object`` (the ``<vault-facts>`` line)."""
        return f"{self.subject} {self.predicate} {self.object}"


def slug(name: str) -> str:
    """Lowercase words joined by ``-`` (letters and digits of any script kept)."""
    return _NON_WORD.sub("-", name.strip().lower()).strip("-_") or "entity"


def entity_id(name: str, entity_type: str = "concept", vault: str = "default") -> str:
    return f"{vault}:{slug(entity_type)}:{slug(name)}"


def _ensure_entity(connection: Connection, name: str, entity_type: str, now: str) -> str:
    row = connection.execute(
        "SELECT entity_id FROM entity_nodes WHERE LOWER(name) = LOWER(?) AND vault = 'default'"
        " ORDER BY mention_count DESC LIMIT 1",
        (name.strip(),),
    ).fetchone()
    if row is not None:
        connection.execute(
            "UPDATE entity_nodes SET mention_count = mention_count + 1, last_seen = ?"
            " WHERE entity_id = ?",
            (now, row[0]),
        )
        return str(row[0])
    identifier = entity_id(name, entity_type)
    connection.execute(
        "INSERT INTO entity_nodes (entity_id, entity_type, name, mention_count, last_seen)"
        " VALUES (?, ?, ?, 1, ?)"
        " ON CONFLICT (entity_id) DO UPDATE SET mention_count = mention_count + 1,"
        " last_seen = excluded.last_seen",
        (identifier, slug(entity_type), name.strip(), now),
    )
    return identifier


def add_fact(
    connection: Connection,
    subject: str,
    predicate: str,
    object_name: str | None = None,
    *,
    object_literal: str | None = None,
    subject_type: str = "concept",
    object_type: str = "concept",
    valid_from: str | None = None,
    valid_to: str | None = None,
    confidence: float = 1.0,
    source_doc_id: int | None = None,
    source_fact: str | None = None,
) -> int:
    """Record ``subject predicate object`` (an entity named ``object_name``, or a literal);
    returns the triple's id."""
    if not subject.strip() or not predicate.strip():
        raise InvalidQueryError("a fact needs a subject and a predicate")
    if (object_name is None) == (object_literal is None):
        raise InvalidQueryError("a fact needs exactly one of an object entity or a literal")
    if not 0.0 <= confidence <= 1.0:
        raise InvalidQueryError(f"confidence must be between 0 and 1, got {confidence}")
    now = to_iso(datetime.now(UTC))
    with write_transaction(connection):
        subject_id = _ensure_entity(connection, subject, subject_type, now)
        object_id = (
            _ensure_entity(connection, object_name, object_type, now)
            if object_name is not None
            else None
        )
        cursor = connection.execute(
            """
            INSERT INTO entity_triples (subject_entity_id, predicate, object_entity_id,
                object_literal, valid_from, valid_to, confidence, source_doc_id, source_fact)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            (
                subject_id,
                predicate.strip(),
                object_id,
                object_literal,
                valid_from,
                valid_to,
                confidence,
                source_doc_id,
                source_fact,
            ),
        )
        return int(cursor.lastrowid or 0)


def facts_about(
    connection: Connection, text: str, *, now: datetime | None = None, limit: int = 20
) -> list[Fact]:
    """Current facts whose subject or object entity is named in ``text`` (whole words,
    case-insensitive), most confident first."""
    words = f" {_NON_WORD.sub(' ', text.lower())} "
    if not words.strip() or limit <= 0:
        return []
    names = connection.execute(
        "SELECT entity_id, name FROM entity_nodes ORDER BY mention_count DESC LIMIT ?",
        (MAX_SCANNED_ENTITIES,),
    ).fetchall()
    seeds = [
        str(identifier)
        for identifier, name in names
        if (key := _NON_WORD.sub(" ", str(name).lower()).strip()) and f" {key} " in words
    ]
    if not seeds:
        return []
    moment = to_iso(now or datetime.now(UTC))
    marks = ",".join("?" * len(seeds))
    rows = connection.execute(
        f"""
        SELECT s.name, t.predicate, COALESCE(o.name, t.object_literal), t.valid_from,
               t.valid_to, t.confidence
        FROM entity_triples t
        JOIN entity_nodes s ON s.entity_id = t.subject_entity_id
        LEFT JOIN entity_nodes o ON o.entity_id = t.object_entity_id
        WHERE (t.subject_entity_id IN ({marks}) OR t.object_entity_id IN ({marks}))
          AND (t.valid_from IS NULL OR t.valid_from <= ?)
          AND (t.valid_to IS NULL OR t.valid_to > ?)
        ORDER BY t.confidence DESC, t.id DESC
        LIMIT ?
        """,
        (*seeds, *seeds, moment, moment, limit),
    ).fetchall()
    return [Fact(str(a), str(b), str(c), d, e, float(f)) for a, b, c, d, e, f in rows]
