"""Named entities and subject-predicate-object facts about them (``entity_nodes``,
``entity_triples``).

An entity's id is ``vault:type:slug``. A fact's predicate is one of the 13 canonical ones
(:data:`PREDICATES`); its object is another entity, or a literal for ``prefers`` and
``avoids``. A fact holds from ``valid_from`` until ``valid_to`` (open ends: always); a new
object for a single-valued predicate (``runs_on``, ``owned_by``, ``migrated_to``) closes
the window of the one it replaces, so :func:`kg_query` ``as_of`` a date answers what held
then. Facts about a piece of text are those whose subject or object entity is named in it,
as whole words.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, NamedTuple

from memtrove.db.connection import Connection, write_step
from memtrove.errors import InvalidQueryError
from memtrove.graph.entity_names import entity_id, slug
from memtrove.text import parse_iso_datetime, to_iso

__all__ = [
    "DIRECTIONS",
    "LITERAL_PREDICATES",
    "PREDICATES",
    "SINGLE_VALUED",
    "Fact",
    "KnowledgeFact",
    "KnowledgeResult",
    "add_fact",
    "check_as_of",
    "check_predicate",
    "entity_id",
    "facts_about",
    "kg_query",
    "slug",
]

_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)
_DATE_ONLY = re.compile(r"^\d{4}(?:-\d{2}-\d{2}|\d{4})$")
MAX_SCANNED_ENTITIES = 5000  # entities checked against a prompt, most mentioned first
MAX_NAME_CHARS = 200
PREDICATES = (
    "adopted",
    "migrated_to",
    "deployed_to",
    "runs_on",
    "replaced",
    "depends_on",
    "integrates_with",
    "uses",
    "prefers",
    "avoids",
    "caused_by",
    "resolved_by",
    "owned_by",
)
LITERAL_PREDICATES = frozenset({"prefers", "avoids"})
SINGLE_VALUED = frozenset({"runs_on", "owned_by", "migrated_to"})
DIRECTIONS = ("outgoing", "incoming", "both")
MAX_KG_FACTS = 500


class Fact(NamedTuple):
    subject: str
    predicate: str
    object: str
    valid_from: str | None
    valid_to: str | None
    confidence: float

    def line(self) -> str:
        """``subject predicate object`` (the ``<vault-facts>`` line)."""
        return f"{self.subject} {self.predicate} {self.object}"


def _check_moment(value: str | None, label: str) -> str | None:
    if value is None:
        return None
    moment = parse_iso_datetime(value)
    if moment is None:
        raise InvalidQueryError(f"{label} must be an ISO date or datetime, got {str(value)[:40]!r}")
    return moment


def check_as_of(value: str | None) -> str | None:
    """``as_of`` as the moment it names: a bare date means the end of that day."""
    if value is None or not str(value).strip():
        return None
    given = str(value).strip()
    text = f"{given}T23:59:59Z" if _DATE_ONLY.match(given) else given
    moment = parse_iso_datetime(text)
    if moment is None:
        raise InvalidQueryError(f"as_of must be a date (YYYY-MM-DD), got {given[:40]!r}")
    return moment


def check_predicate(predicate: str) -> str:
    """The canonical predicate ``predicate`` names (case and spaces forgiven), or a 400."""
    key = "_".join(predicate.strip().lower().replace("-", " ").split())
    if key not in PREDICATES:
        raise InvalidQueryError(
            f"unknown predicate {predicate.strip()[:40]!r} (known: {', '.join(PREDICATES)})"
        )
    return key


def _fact_entity(connection: Connection, name: str, entity_type: str | None, now: str) -> str:
    """The entity a fact names: with a type, resolved canonically; without one, the one
    entity of exactly that name (its type inherited), else a ``concept``."""
    from memtrove.graph.entity_resolution import ensure_entity

    clean = " ".join(name.split())
    if len(clean) > MAX_NAME_CHARS:
        raise InvalidQueryError(f"an entity name is at most {MAX_NAME_CHARS} characters")
    if entity_type is None:
        rows = connection.execute(
            "SELECT entity_id FROM entity_nodes WHERE LOWER(name) = LOWER(?) AND vault = 'default'",
            (clean,),
        ).fetchall()
        if len(rows) == 1:
            connection.execute(
                "UPDATE entity_nodes SET mention_count = mention_count + 1, last_seen = ?"
                " WHERE entity_id = ?",
                (now, rows[0][0]),
            )
            return str(rows[0][0])
        entity_type = "concept"
    return ensure_entity(connection, clean, slug(entity_type), now=now).entity_id


def add_fact(
    connection: Connection,
    subject: str,
    predicate: str,
    object_name: str | None = None,
    *,
    object_literal: str | None = None,
    subject_type: str | None = None,
    object_type: str | None = None,
    valid_from: str | None = None,
    valid_to: str | None = None,
    confidence: float = 1.0,
    source_doc_id: int | None = None,
    source_fact: str | None = None,
) -> int:
    """Record ``subject predicate object`` (an entity named ``object_name``, or a literal);
    returns the triple's id.

    ``predicate`` is one of :data:`PREDICATES`. The object of ``prefers``/``avoids`` is
    kept as a literal, of every other predicate as an entity. A fact already holding is
    not written twice (its id is returned). A new object for a single-valued predicate
    (:data:`SINGLE_VALUED`) closes the window of the one holding when it starts.
    """
    if not subject.strip() or not predicate.strip():
        raise InvalidQueryError("a fact needs a subject and a predicate")
    if (object_name is None) == (object_literal is None):
        raise InvalidQueryError("a fact needs exactly one of an object entity or a literal")
    if not 0.0 <= confidence <= 1.0:
        raise InvalidQueryError(f"confidence must be between 0 and 1, got {confidence}")
    canonical = check_predicate(predicate)
    text = " ".join(str(object_name if object_name is not None else object_literal).split())
    if not text:
        raise InvalidQueryError("a fact's object must not be empty")
    start = _check_moment(valid_from, "valid_from")
    end = _check_moment(valid_to, "valid_to")
    if start is not None and end is not None and end <= start:
        raise InvalidQueryError("valid_to must be after valid_from")
    now = to_iso(datetime.now(UTC))
    with write_step(connection):
        subject_id = _fact_entity(connection, subject, subject_type, now)
        object_id: str | None = None
        literal: str | None = None
        if canonical in LITERAL_PREDICATES:
            literal = text
        else:
            object_id = _fact_entity(connection, text, object_type, now)
        # an open fact holds whatever its start; a closed one only with the same window
        window = (
            "valid_to IS NULL"
            if end is None
            else "valid_from IS NOT DISTINCT FROM ? AND valid_to IS NOT DISTINCT FROM ?"
        )
        same = connection.execute(
            f"""
            SELECT id FROM entity_triples
            WHERE subject_entity_id = ? AND predicate = ?
              AND object_entity_id IS NOT DISTINCT FROM ?
              AND object_literal IS NOT DISTINCT FROM ? AND {window}
            """,
            (subject_id, canonical, object_id, literal, *(() if end is None else (start, end))),
        ).fetchone()
        if same is not None:
            return int(same[0])
        if canonical in SINGLE_VALUED and end is None:
            begins = start or now
            later = connection.execute(
                "SELECT MIN(valid_from) FROM entity_triples WHERE subject_entity_id = ?"
                " AND predicate = ? AND valid_from > ?",
                (subject_id, canonical, begins),
            ).fetchone()[0]
            end = str(later) if later is not None else None
            closed = connection.execute(
                """
                UPDATE entity_triples SET valid_to = ?
                WHERE subject_entity_id = ? AND predicate = ?
                  AND (object_entity_id IS DISTINCT FROM ? OR object_literal IS DISTINCT FROM ?)
                  AND (valid_from IS NULL OR valid_from < ?)
                  AND (valid_to IS NULL OR valid_to > ?)
                """,
                (begins, subject_id, canonical, object_id, literal, begins, begins),
            ).rowcount
            if closed and start is None:
                start = begins
        new_id = connection.insert(
            """
            INSERT INTO entity_triples (subject_entity_id, predicate, object_entity_id,
                object_literal, valid_from, valid_to, confidence, source_doc_id, source_fact)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            (
                subject_id,
                canonical,
                object_id,
                literal,
                start,
                end,
                confidence,
                source_doc_id,
                source_fact,
            ),
        )
        return int(new_id or 0)


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


class KnowledgeFact(NamedTuple):
    """One triple as :func:`kg_query` reports it."""

    id: int
    direction: str  # "outgoing" (the entity is the subject) | "incoming"
    subject: str
    subject_id: str
    predicate: str
    object: str
    object_id: str | None  # None for a literal object
    valid_from: str | None
    valid_to: str | None
    confidence: float
    current: bool
    source_doc_id: int | None

    def line(self) -> str:
        return f"{self.subject} {self.predicate} {self.object}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "direction": self.direction,
            "subject": self.subject,
            "subject_id": self.subject_id,
            "predicate": self.predicate,
            "object": self.object,
            "object_id": self.object_id,
            "object_literal": self.object if self.object_id is None else None,
            "valid_from": self.valid_from,
            "valid_to": self.valid_to,
            "confidence": self.confidence,
            "current": self.current,
            "source_doc_id": self.source_doc_id,
        }


class KnowledgeResult(NamedTuple):
    """What :func:`kg_query` found about one entity."""

    entity: str  # as asked
    entity_id: str | None  # the entity it resolved to (None: no such entity)
    name: str | None
    entity_type: str | None
    as_of: str | None
    direction: str
    facts: list[KnowledgeFact]

    def text(self) -> str:
        """A header naming the entity, then one fact a line with its window."""
        if self.entity_id is None:
            return f"No entity matches {self.entity[:80]!r}."
        when = f" as of {self.as_of[:10]}" if self.as_of else ""
        count = len(self.facts)
        lines = [
            f"{self.name} ({self.entity_id}){when}, {self.direction}: "
            f"{count} fact{'' if count == 1 else 's'}"
        ]
        for fact in self.facts:
            start = (fact.valid_from or "")[:10] or "always"
            end = (fact.valid_to or "")[:10] or "now"
            state = "current" if fact.current else "not current"
            lines.append(
                f"- {fact.line()}  [{start} -> {end}, {state}, confidence {fact.confidence:.2f}]"
            )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "entity": self.entity,
            "entity_id": self.entity_id,
            "name": self.name,
            "type": self.entity_type,
            "as_of": self.as_of,
            "direction": self.direction,
            "count": len(self.facts),
            "facts": [fact.to_dict() for fact in self.facts],
        }


def kg_query(
    connection: Connection,
    entity: str,
    *,
    as_of: str | None = None,
    direction: str = "both",
    now: datetime | None = None,
    limit: int = MAX_KG_FACTS,
) -> KnowledgeResult:
    """The facts about ``entity`` (a name or a ``vault:type:slug`` id): all of them, or
    those valid at ``as_of`` (a date means the end of that day); ``direction`` picks the
    facts where it is the subject (outgoing), the object (incoming) or either."""
    from memtrove.graph.entity_resolution import find_entity

    if direction not in DIRECTIONS:
        raise InvalidQueryError(
            f"direction must be one of {', '.join(DIRECTIONS)}, got {direction[:40]!r}"
        )
    asked = " ".join(str(entity).split())
    if not asked:
        raise InvalidQueryError("entity must not be empty")
    if len(asked) > 500:
        raise InvalidQueryError("entity is at most 500 characters")
    moment = check_as_of(as_of)
    found = find_entity(connection, asked)
    if found is None:
        return KnowledgeResult(asked, None, None, None, moment, direction, [])
    current_moment = to_iso(now or datetime.now(UTC))
    sides = {"outgoing": ["subject"], "incoming": ["object"], "both": ["subject", "object"]}
    facts: list[KnowledgeFact] = []
    for side in sides[direction]:
        column = "t.subject_entity_id" if side == "subject" else "t.object_entity_id"
        window = (
            ""
            if moment is None
            else (
                " AND (t.valid_from IS NULL OR t.valid_from <= :moment)"
                " AND (t.valid_to IS NULL OR t.valid_to > :moment)"
            )
        )
        rows = connection.execute(
            f"""
            SELECT t.id, s.name, t.subject_entity_id, t.predicate,
                   COALESCE(o.name, t.object_literal), t.object_entity_id, t.valid_from,
                   t.valid_to, t.confidence, t.source_doc_id
            FROM entity_triples t
            JOIN entity_nodes s ON s.entity_id = t.subject_entity_id
            LEFT JOIN entity_nodes o ON o.entity_id = t.object_entity_id
            WHERE {column} = :entity{window}
            ORDER BY t.predicate, COALESCE(t.valid_from, '') DESC, t.id DESC
            LIMIT :limit
            """,
            {"entity": found.entity_id, "moment": moment, "limit": limit},
        ).fetchall()
        for row in rows:
            valid_from, valid_to = row[6], row[7]
            current = (valid_from is None or valid_from <= current_moment) and (
                valid_to is None or valid_to > current_moment
            )
            facts.append(
                KnowledgeFact(
                    int(row[0]),
                    "outgoing" if side == "subject" else "incoming",
                    str(row[1]),
                    str(row[2]),
                    str(row[3]),
                    str(row[4]),
                    None if row[5] is None else str(row[5]),
                    valid_from,
                    valid_to,
                    float(row[8]),
                    bool(current),
                    None if row[9] is None else int(row[9]),
                )
            )
    return KnowledgeResult(
        asked, found.entity_id, found.name, found.entity_type, moment, direction, facts[:limit]
    )
