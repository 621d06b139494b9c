"""Canonical entities: resolving a name to the entity it means, and recording mentions.

A name is resolved within its type's compatibility bucket (:data:`BUCKETS`): candidates come
from ``entities_fts`` (and the exact lowercase name), and the closest by Levenshtein
similarity wins when it reaches 0.75 (0.65 for people). A person named by first name only
is the one person of that first name, when there is exactly one. Names whose numbers differ
(``Python 2``, ``Python 3``) never merge. A new entity's id is ``vault:type:slug``.

Documents that share an entity are linked by ``entity`` edges weighted by the entity's
specificity, ``log(1 + N/df) / log(1 + N)`` (N active documents, df of them naming it): an
entity named nearly everywhere falls below :data:`ENTITY_EDGE_THRESHOLD` and links nothing.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, NamedTuple

from memtrove.db.connection import Connection, write_transaction
from memtrove.text import to_iso

if TYPE_CHECKING:
    from memtrove.graph.entities import ExtractedEntity

__all__ = [
    "BUCKETS",
    "ENTITY_EDGE_THRESHOLD",
    "PERSON_SIMILARITY",
    "SIMILARITY",
    "Entity",
    "active_documents",
    "bucket_of",
    "ensure_entity",
    "find_entity",
    "link_shared_entities",
    "record_mentions",
    "resolve_entity",
]

SIMILARITY = 0.75
PERSON_SIMILARITY = 0.65
ENTITY_EDGE_THRESHOLD = 0.3
MAX_LINKED_DOCUMENTS = 50  # per entity and document: the most recent ones sharing it
MAX_ENTITY_EDGES = 20  # per document: the strongest links (most specific, most shared)
MAX_CANDIDATES = 50
BUCKETS = {
    "person": "person",
    "org": "org",
    "location": "location",
    "project": "tech",
    "service": "tech",
    "tool": "tech",
    "concept": "tech",
}
_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)
_DIGITS = re.compile(r"\d+")


@contextlib.contextmanager
def _transaction(connection: Connection) -> Iterator[None]:
    """The caller's transaction when one is open (a bulk run, or enrichment writing more in
    the same one), else a write transaction of its own."""
    if connection.in_transaction:
        yield
        return
    with write_transaction(connection):
        yield


class Entity(NamedTuple):
    entity_id: str
    entity_type: str
    name: str
    mention_count: int


def bucket_of(entity_type: str) -> str:
    """The compatibility bucket of a type; an unknown type is a bucket of its own."""
    return BUCKETS.get(entity_type, "type:" + entity_type)


def _similarity(a: str, b: str) -> float:
    from rapidfuzz.distance import Levenshtein

    return float(Levenshtein.normalized_similarity(a.lower(), b.lower()))


def _fts_query(name: str) -> str | None:
    tokens = [token for token in _NON_WORD.split(name.lower()) if token][:8]
    terms: list[str] = []
    for token in tokens:  # a prefix short of the last letters: plurals, "Postgres"/"PostgreSQL"
        terms.append(f'"{token[: max(4, len(token) - 3)]}"*')
    return " OR ".join(terms) or None


def _candidates(
    connection: Connection, name: str, vault: str, bucket: str | None = None
) -> list[Entity]:
    """Entities of exactly this name (case aside) and FTS matches of its words; when
    ``bucket`` holds an exact match, that is the answer and FTS is not asked."""
    rows = connection.execute(
        "SELECT entity_id, entity_type, name, mention_count FROM entity_nodes"
        " WHERE LOWER(name) = LOWER(?) AND vault = ?",
        (name, vault),
    ).fetchall()
    exact = bucket is not None and any(bucket_of(str(row[1])) == bucket for row in rows)
    query = None if exact else _fts_query(name)
    if query is not None:
        rows += connection.execute(
            """
            SELECT n.entity_id, n.entity_type, n.name, n.mention_count
            FROM (SELECT entity_id, rank FROM entities_fts WHERE entities_fts MATCH ?
                  ORDER BY rank LIMIT ?) AS f
            CROSS JOIN entity_nodes n ON n.entity_id = f.entity_id
            WHERE n.vault = ?
            ORDER BY f.rank
            """,
            (query, MAX_CANDIDATES, vault),
        ).fetchall()
    unique = {
        str(row[0]): Entity(str(row[0]), str(row[1]), str(row[2]), int(row[3])) for row in rows
    }
    return list(unique.values())


def _numbers_differ(a: str, b: str) -> bool:
    return _DIGITS.findall(a) != _DIGITS.findall(b)


def resolve_entity(
    connection: Connection, name: str, entity_type: str, vault: str = "default"
) -> Entity | None:
    """The existing entity ``name`` means within ``entity_type``'s bucket, or None."""
    bucket = bucket_of(entity_type)
    candidates = [
        entity
        for entity in _candidates(connection, name, vault, bucket)
        if bucket_of(entity.entity_type) == bucket and not _numbers_differ(name, entity.name)
    ]
    if not candidates:
        return None
    threshold = PERSON_SIMILARITY if bucket == "person" else SIMILARITY
    scored = sorted(
        ((_similarity(name, entity.name), entity.mention_count, entity) for entity in candidates),
        key=lambda item: (-item[0], -item[1], item[2].entity_id),
    )
    if scored[0][0] >= threshold:
        return scored[0][2]
    if bucket == "person":  # "Russ" and "Russ Cox": the same person when only one fits
        first = name.lower().split()
        fitting = [
            entity
            for entity in candidates
            if (other := entity.name.lower().split())
            and (len(first) == 1) != (len(other) == 1)
            and first[0] == other[0]
        ]
        if len(fitting) == 1:
            return fitting[0]
    return None


def ensure_entity(
    connection: Connection,
    name: str,
    entity_type: str,
    *,
    vault: str = "default",
    now: str | None = None,
    count: bool = True,
) -> Entity:
    """The canonical entity for ``name`` (resolved, or created as ``vault:type:slug``),
    its mention count raised when ``count``. Runs inside the caller's transaction."""
    from memtrove.graph.triples import entity_id, slug

    moment = now or to_iso(datetime.now(UTC))
    step = 1 if count else 0
    found = resolve_entity(connection, name, entity_type, vault)
    if found is not None:
        connection.execute(
            "UPDATE entity_nodes SET mention_count = mention_count + ?, last_seen = ?"
            " WHERE entity_id = ?",
            (step, moment, found.entity_id),
        )
        if (
            bucket_of(entity_type) == "person"
            and len(name) > len(found.name)
            and found.name.lower().split()[0] == name.lower().split()[0]
        ):
            _rename(connection, found.entity_id, name)  # a first name grows into the full name
            found = found._replace(name=name)
        return found._replace(mention_count=found.mention_count + step)
    identifier = entity_id(name, entity_type, vault)
    existing = connection.execute(
        "SELECT entity_type, name, mention_count FROM entity_nodes WHERE entity_id = ?",
        (identifier,),
    ).fetchone()
    if existing is not None:  # the same slug under another spelling ("C++" and "C")
        connection.execute(
            "UPDATE entity_nodes SET mention_count = mention_count + ?, last_seen = ?"
            " WHERE entity_id = ?",
            (step, moment, identifier),
        )
        return Entity(identifier, str(existing[0]), str(existing[1]), int(existing[2]) + step)
    connection.execute(
        "INSERT INTO entity_nodes (entity_id, entity_type, name, mention_count, last_seen, vault)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (identifier, slug(entity_type), name, step, moment, vault),
    )
    connection.execute(
        "INSERT INTO entities_fts (entity_id, name, entity_type) VALUES (?, ?, ?)",
        (identifier, name, slug(entity_type)),
    )
    return Entity(identifier, slug(entity_type), name, step)


def _rename(connection: Connection, identifier: str, name: str) -> None:
    connection.execute("UPDATE entity_nodes SET name = ? WHERE entity_id = ?", (name, identifier))
    connection.execute("UPDATE entities_fts SET name = ? WHERE entity_id = ?", (name, identifier))


def find_entity(connection: Connection, reference: str, vault: str = "default") -> Entity | None:
    """The entity a user means by ``reference``: a ``vault:type:slug`` id, an exact name,
    the best FTS + similarity match in any bucket, or a name of the same slug."""
    from memtrove.graph.triples import slug

    text = " ".join(reference.split())
    if not text:
        return None
    row = connection.execute(
        "SELECT entity_id, entity_type, name, mention_count FROM entity_nodes"
        " WHERE entity_id = ? OR (LOWER(name) = LOWER(?) AND vault = ?)"
        " ORDER BY entity_id = ? DESC, mention_count DESC LIMIT 1",
        (text, text, vault, text),
    ).fetchone()
    if row is not None:
        return Entity(str(row[0]), str(row[1]), str(row[2]), int(row[3]))
    best = max(
        (
            (_similarity(text, entity.name), entity)
            for entity in _candidates(connection, text, vault)
        ),
        key=lambda item: (item[0], item[1].mention_count),
        default=None,
    )
    if best is not None and best[0] >= SIMILARITY and not _numbers_differ(text, best[1].name):
        return best[1]
    wanted = slug(text)
    row = connection.execute(
        "SELECT entity_id, entity_type, name, mention_count FROM entity_nodes"
        " WHERE entity_id LIKE ? ESCAPE '\\' AND vault = ? ORDER BY mention_count DESC LIMIT 1",
        (
            f"{vault}:%:" + wanted.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_"),
            vault,
        ),
    ).fetchone()
    return None if row is None else Entity(str(row[0]), str(row[1]), str(row[2]), int(row[3]))


def record_mentions(
    connection: Connection,
    doc_id: int,
    entities: Sequence[ExtractedEntity],
    *,
    vault: str = "default",
) -> list[tuple[str, str, str]]:
    """Replace document ``doc_id``'s mentions and co-occurrences with ``entities``, and drop
    its ``entity`` edges (one transaction; :func:`link_shared_entities` writes them anew);
    returns ``(entity_id, name, type)`` per distinct entity."""
    from memtrove.graph.relations import delete_relations

    moment = to_iso(datetime.now(UTC))
    with _transaction(connection):
        old = [
            str(row[0])
            for row in connection.execute(
                "SELECT entity_id FROM entity_mentions WHERE doc_id = ?", (doc_id,)
            )
        ]
        connection.executemany(
            "UPDATE entity_nodes SET mention_count = MAX(mention_count - 1, 0) WHERE entity_id = ?",
            [(identifier,) for identifier in old],
        )
        old_pairs = _pairs(old)
        connection.executemany(
            "UPDATE entity_cooccurrences SET count = count - 1 WHERE entity_a = ? AND entity_b = ?",
            old_pairs,
        )
        connection.executemany(
            "DELETE FROM entity_cooccurrences WHERE entity_a = ? AND entity_b = ? AND count <= 0",
            old_pairs,
        )
        connection.execute("DELETE FROM entity_mentions WHERE doc_id = ?", (doc_id,))
        # Its entity edges go with its mentions; linking writes the ones still shared.
        delete_relations(connection, [doc_id], relation_type="entity")
        resolved: dict[str, tuple[str, str, str]] = {}
        for entity in entities:
            found = ensure_entity(
                connection, entity.name, entity.entity_type, vault=vault, now=moment
            )
            if found.entity_id in resolved:
                connection.execute(
                    "UPDATE entity_nodes SET mention_count = mention_count - 1 WHERE entity_id = ?",
                    (found.entity_id,),
                )
                continue
            resolved[found.entity_id] = (found.entity_id, found.name, found.entity_type)
            connection.execute(
                "INSERT INTO entity_mentions (entity_id, doc_id, mention_text) VALUES (?, ?, ?)",
                (found.entity_id, doc_id, entity.name),
            )
        connection.executemany(
            """
            INSERT INTO entity_cooccurrences (entity_a, entity_b, count, last_cooccurred)
            VALUES (?, ?, 1, ?)
            ON CONFLICT (entity_a, entity_b)
            DO UPDATE SET count = count + 1, last_cooccurred = excluded.last_cooccurred
            """,
            [(a, b, moment) for a, b in _pairs(list(resolved))],
        )
    return list(resolved.values())


def _pairs(identifiers: Sequence[str]) -> list[tuple[str, str]]:
    ordered = sorted(set(identifiers))
    return [(a, b) for index, a in enumerate(ordered) for b in ordered[index + 1 :]]


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
    cache: dict[str, tuple[int, list[int]]] | None = None,
) -> int:
    """Write ``entity`` edges both ways between ``doc_id`` and the documents sharing its
    specific entities (weight: the most specific shared entity), at most
    :data:`MAX_ENTITY_EDGES` of them, strongest first; returns how many documents it was
    linked to. A bulk run, linking once every mention is in, passes ``documents`` (the
    active count) and a ``cache`` (per entity: how many active documents name it, and the
    most recent of them), so each entity is looked up once, not once per document."""
    if not entity_ids:
        return 0
    if documents is None:
        documents = active_documents(connection)
    weights: dict[int, tuple[float, list[str]]] = {}
    for identifier in dict.fromkeys(entity_ids):
        known = cache.get(identifier) if cache is not None else None
        if known is None:
            known = _naming(connection, identifier)
            if cache is not None:
                cache[identifier] = known
        naming, recent = known
        weight = specificity(documents, naming)
        if naming < 2 or weight < ENTITY_EDGE_THRESHOLD:
            continue
        others = [other for other in recent if other != doc_id][:MAX_LINKED_DOCUMENTS]
        for other in others:
            best, shared = weights.get(int(other), (0.0, []))
            weights[int(other)] = (max(best, weight), [*shared, identifier])
    strongest = sorted(weights.items(), key=lambda item: (-item[1][0], -len(item[1][1])))
    chosen = strongest[:MAX_ENTITY_EDGES]
    _write_entity_edges(connection, doc_id, [(other, w, shared) for other, (w, shared) in chosen])
    return len(chosen)


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


def _write_entity_edges(
    connection: Connection, doc_id: int, links: Sequence[tuple[int, float, list[str]]]
) -> None:
    """Both directions of each link in one transaction (weight-monotonic, as
    :func:`memtrove.graph.relations.upsert_relation` writes one edge: a bulk run would
    otherwise pay a transaction per edge)."""
    import json

    if not links:
        return
    moment = to_iso(datetime.now(UTC))
    rows = []
    for other, weight, shared in links:
        metadata = json.dumps({"entities": shared[:10]})
        value = round(min(max(weight, 0.0), 1.0), 4)
        rows += [(doc_id, other, value, metadata, moment), (other, doc_id, value, metadata, moment)]
    with _transaction(connection):
        connection.executemany(
            """
            INSERT INTO memory_relations
                (source_id, target_id, relation_type, weight, metadata, created_at)
            VALUES (?, ?, 'entity', ?, ?, ?)
            ON CONFLICT (source_id, target_id, relation_type)
            DO UPDATE SET weight = MAX(weight, excluded.weight)
            """,
            rows,
        )


def documents_to_extract(connection: Connection, *, everything: bool = False) -> list[int]:
    """Active documents with no entity mentions yet (all active ones with ``everything``)."""
    condition = (
        ""
        if everything
        else " AND NOT EXISTS (SELECT 1 FROM entity_mentions m WHERE m.doc_id = d.id)"
    )
    return [
        int(row[0])
        for row in connection.execute(
            f"SELECT d.id FROM documents d WHERE d.active = 1{condition} ORDER BY d.id"
        )
    ]


def document_text(connection: Connection, doc_id: int) -> tuple[str, str] | None:
    """An active document's title and body."""
    row = connection.execute(
        "SELECT d.title, c.doc FROM documents d JOIN content c ON c.hash = d.hash"
        " WHERE d.id = ? AND d.active = 1",
        (doc_id,),
    ).fetchone()
    return None if row is None else (str(row[0]), str(row[1]))
