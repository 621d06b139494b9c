"""Canonical entities: resolving a name to the entity it means, and recording mentions.

A name is resolved within its type's compatibility bucket (:data:`BUCKETS`): candidates come
from the entity name index (``connection.text``) and the exact lowercase name, and the
closest by Levenshtein similarity wins when it reaches 0.75 (0.65 for people). A person
named by first name only is the one person of that first name, when there is exactly one.
Names whose numbers differ (``Python 2``, ``Python 3``) never merge, and neither do names
other than people's whose words differ (``ECONNRESET`` and ``ECONNREFUSED``, two files of
one folder), however close as strings; a word's plural, a longer form of it (``PostgreSQL``)
or a typo in a long word still merges. A new entity's id is ``vault:type:slug``.

A bulk run records mentions through one :class:`Resolver`: a surface form that resolved to
an entity of exactly its name (case aside) is not looked up again in the run, mention
counts are added up and written before the next lookup that reads them, and a batch's
co-occurrences are counted in one statement. Documents that share an entity are linked by
``entity`` edges (:mod:`memtrove.graph.entity_links`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from itertools import combinations
from typing import TYPE_CHECKING, NamedTuple

from memtrove.db.connection import Connection, write_step
from memtrove.graph.entity_links import (
    ENTITY_EDGE_THRESHOLD,
    MAX_ENTITY_EDGES,
    MAX_LINKED_DOCUMENTS,
    LinkCache,
    active_documents,
    link_shared_entities,
    specificity,
)
from memtrove.graph.entity_names import names_differ, similarity
from memtrove.text import to_iso

if TYPE_CHECKING:
    from memtrove.graph.extracted import ExtractedEntity

__all__ = [
    "BUCKETS",
    "ENTITY_EDGE_THRESHOLD",
    "MAX_ENTITY_EDGES",
    "MAX_LINKED_DOCUMENTS",
    "PERSON_SIMILARITY",
    "SIMILARITY",
    "Entity",
    "LinkCache",
    "Resolver",
    "active_documents",
    "bucket_of",
    "cooccurrences_pending",
    "ensure_entity",
    "find_entity",
    "link_shared_entities",
    "record_mentions",
    "repair_cooccurrences",
    "resolve_entity",
    "specificity",
]

SIMILARITY = 0.75
PERSON_SIMILARITY = 0.65
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


class Entity(NamedTuple):
    entity_id: str
    entity_type: str
    name: str
    mention_count: int


def bucket_of(entity_type: str) -> str:
    """The compatibility bucket of a type; an unknown type is a bucket of its own."""
    return BUCKETS.get(entity_type, "type:" + entity_type)


def _prefixes(name: str) -> list[str]:
    """The word prefixes the entity index is searched for (any of them matches)."""
    tokens = [token for token in _NON_WORD.split(name.lower()) if token][:8]
    # a prefix short of the last letters: plurals, "Postgres"/"PostgreSQL"
    return [token[: max(4, len(token) - 3)] for token in tokens]


def _candidates(
    connection: Connection, name: str, vault: str, bucket: str | None = None
) -> list[Entity]:
    """Entities of exactly this name (case aside) and the :data:`MAX_CANDIDATES` best FTS
    matches of its words; when ``bucket`` holds an exact match, that is the answer and FTS
    is not asked. With a ``bucket`` the order of the answer does not matter (resolution
    sorts it), so when FTS has no more matches than that they are taken unranked: the same
    set, without scoring each match."""
    rows = connection.execute(
        "SELECT entity_id, entity_type, name, mention_count FROM entity_nodes"
        " WHERE LOWER(name) = LOWER(?) AND vault = ?",
        (name, vault),
    ).fetchall()
    exact = bucket is not None and any(bucket_of(str(row[1])) == bucket for row in rows)
    prefixes = [] if exact else _prefixes(name)
    if prefixes and bucket is not None:
        matches = connection.text.match_entities(prefixes, MAX_CANDIDATES + 1)
        if len(matches) <= MAX_CANDIDATES:
            rows += [row[:4] for row in matches if row[4] == vault]
            prefixes = []
    if prefixes:
        rows += connection.text.best_entities(prefixes, MAX_CANDIDATES, vault)
    unique = {
        str(row[0]): Entity(str(row[0]), str(row[1]), str(row[2]), int(row[3])) for row in rows
    }
    return list(unique.values())


def resolve_entity(
    connection: Connection,
    name: str,
    entity_type: str,
    vault: str = "default",
    *,
    pending: Mapping[str, int] | None = None,
) -> Entity | None:
    """The existing entity ``name`` means within ``entity_type``'s bucket, or None.
    ``pending``: mentions counted but not yet written (entity id -> count), added to the
    stored counts that break ties."""
    bucket = bucket_of(entity_type)
    candidates = [
        entity
        for entity in _candidates(connection, name, vault, bucket)
        if bucket_of(entity.entity_type) == bucket
        and not names_differ(name, entity.name, person=bucket == "person")
    ]
    if pending:
        candidates = [
            entity
            if (extra := pending.get(entity.entity_id)) is None
            else entity._replace(mention_count=entity.mention_count + extra)
            for entity in candidates
        ]
    if not candidates:
        return None
    threshold = PERSON_SIMILARITY if bucket == "person" else SIMILARITY
    scored = sorted(
        ((similarity(name, entity.name), entity.mention_count, entity) for entity in candidates),
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
    pending: Mapping[str, int] | None = None,
) -> Entity:
    """The canonical entity for ``name`` (resolved, or created as ``vault:type:slug``),
    its mention count raised when ``count`` (``pending``: see :func:`resolve_entity`).
    Runs inside the caller's transaction."""
    from memtrove.graph.entity_names import entity_id, slug

    moment = now or to_iso(datetime.now(UTC))
    step = 1 if count else 0
    found = resolve_entity(connection, name, entity_type, vault, pending=pending)
    if found is not None:
        if step:
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
    connection.text.add_entity(identifier, name, slug(entity_type))
    return Entity(identifier, slug(entity_type), name, step)


def _rename(connection: Connection, identifier: str, name: str) -> None:
    connection.execute("UPDATE entity_nodes SET name = ? WHERE entity_id = ?", (name, identifier))
    connection.text.rename_entity(identifier, name)


def find_entity(connection: Connection, reference: str, vault: str = "default") -> Entity | None:
    """The entity a user means by ``reference``: a ``vault:type:slug`` id, an exact name,
    the best FTS + similarity match in any bucket, or a name of the same slug."""
    from memtrove.graph.entity_names import slug

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
            (similarity(text, entity.name), entity)
            for entity in _candidates(connection, text, vault)
        ),
        key=lambda item: (item[0], item[1].mention_count),
        default=None,
    )
    if (
        best is not None
        and best[0] >= SIMILARITY
        and not names_differ(text, best[1].name, person=bucket_of(best[1].entity_type) == "person")
    ):
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
    resolver: Resolver | None = None,
) -> list[tuple[str, str, str]]:
    """Replace document ``doc_id``'s mentions and co-occurrences with ``entities``, and drop
    its ``entity`` edges (one transaction; :func:`link_shared_entities` writes them anew);
    returns ``(entity_id, name, type)`` per distinct entity. With a bulk run's ``resolver``
    (whose vault is used), mention counts and co-occurrences wait for
    :meth:`Resolver.flush`, which the run calls before it commits."""
    with write_step(connection):
        if resolver is not None:
            return resolver.record(doc_id, entities)
        own = Resolver(connection, vault)
        recorded = own.record(doc_id, entities)
        own.flush()
    return recorded


# The pairs of entities document ? names, each once (``a < b``, as entity_cooccurrences).
_PAIRS = """
    SELECT a.entity_id, b.entity_id FROM entity_mentions a
    JOIN entity_mentions b ON b.doc_id = a.doc_id AND b.entity_id > a.entity_id
    WHERE a.doc_id = ?
"""
_CHUNK = 500  # documents per IN (...) list


class Resolver:
    """Resolves and records the mentions of many documents in one run (see the module doc):
    the results are those of :func:`ensure_entity` and :func:`record_mentions` one
    document at a time, with far fewer statements."""

    def __init__(
        self, connection: Connection, vault: str = "default", *, deferred: bool = False
    ) -> None:
        self._connection = connection
        self.vault = vault
        self.moment = to_iso(datetime.now(UTC))
        self._exact: dict[tuple[str, str], Entity] = {}  # (lowercase name, bucket) -> entity
        self._pending: dict[str, int] = {}  # entity id -> mentions not yet in mention_count
        self._documents: dict[int, None] = {}  # co-occurrences not yet counted
        self._mentions: list[tuple[str, int, str]] = []  # mention rows not yet written
        self._unlinked: dict[int, None] = {}  # documents whose entity edges are to delete
        # deferred: co-occurrences counted here for the whole run and written by finish()
        self._deferred = deferred
        self._pairs: Counter[tuple[str, str]] = Counter()
        self._marked = False

    def resolve(self, name: str, entity_type: str) -> Entity:
        """The canonical entity for ``name``, as :func:`ensure_entity` finds or creates it
        (its mention not counted: :meth:`record` counts)."""
        bucket = bucket_of(entity_type)
        key = (name.lower(), bucket)
        found = self._exact.get(key)
        if found is not None:
            return found
        # Resolution prefers the most mentioned of equal matches: the counts not yet
        # written are added to the stored ones.
        found = ensure_entity(
            self._connection,
            name,
            entity_type,
            vault=self.vault,
            now=self.moment,
            count=False,
            pending=self._pending,
        )
        if bucket != "person" and found.name.lower() == key[0]:
            # An exact match stays the answer: a later entity of that name would have
            # resolved to it. (People are looked up each time: a first name may grow.)
            self._exact[key] = found
        return found

    def record(
        self, doc_id: int, entities: Sequence[ExtractedEntity]
    ) -> list[tuple[str, str, str]]:
        """Replace ``doc_id``'s mentions (inside the caller's transaction; the rows are
        written by :meth:`flush`)."""
        connection = self._connection
        if doc_id in self._documents or doc_id in self._unlinked:
            self._write_mentions()  # the same document twice in one batch
            self._write_cooccurrences()
        old = [
            str(row[0])
            for row in connection.execute(
                "SELECT entity_id FROM entity_mentions WHERE doc_id = ?", (doc_id,)
            )
        ]
        if old:
            # Its old entities' counts first (as one document at a time decrements them).
            self._write_counts([identifier for identifier in old if identifier in self._pending])
            connection.executemany(
                "UPDATE entity_nodes SET mention_count = "
                "CASE WHEN mention_count - 1 > 0 THEN mention_count - 1 ELSE 0 END"
                " WHERE entity_id = ?",
                [(identifier,) for identifier in old],
            )
            connection.execute(
                "UPDATE entity_cooccurrences SET count = count - 1"
                f" WHERE (entity_a, entity_b) IN ({_PAIRS})",
                (doc_id,),
            )
            connection.execute(
                "DELETE FROM entity_cooccurrences"
                f" WHERE count <= 0 AND (entity_a, entity_b) IN ({_PAIRS})",
                (doc_id,),
            )
            connection.execute("DELETE FROM entity_mentions WHERE doc_id = ?", (doc_id,))
        # Its entity edges go with its mentions; linking writes the ones still shared.
        self._unlinked[doc_id] = None
        resolved: dict[str, tuple[str, str, str]] = {}
        mentions = []
        for entity in entities:
            found = self.resolve(entity.name, entity.entity_type)
            if found.entity_id in resolved:
                continue
            resolved[found.entity_id] = (found.entity_id, found.name, found.entity_type)
            self._pending[found.entity_id] = self._pending.get(found.entity_id, 0) + 1
            mentions.append((found.entity_id, doc_id, entity.name))
        self._mentions += mentions
        if len(mentions) > 1:
            self._documents[doc_id] = None
            if self._deferred:
                if not self._marked:
                    mark_cooccurrences_pending(connection, self.moment)
                    self._marked = True
                self._pairs.update(combinations(sorted(resolved), 2))
        return list(resolved.values())

    def flush(self) -> None:
        """Write the mention counts and co-occurrences recorded so far (inside the caller's
        transaction, before it commits); a deferred run keeps its co-occurrences for
        :meth:`finish`."""
        self._write_mentions()
        self._write_counts()
        if not self._deferred:
            self._write_cooccurrences()

    def _write_mentions(self) -> None:
        """Delete the entity edges of the documents recorded since the last write, and
        write their mention rows (in key order: one pass down the table's B-tree)."""
        from memtrove.graph.relations import delete_relations

        if self._unlinked:
            delete_relations(self._connection, list(self._unlinked), relation_type="entity")
            self._unlinked = {}
        if self._mentions:
            rows, self._mentions = self._mentions, []
            rows.sort()
            self._connection.executemany(
                "INSERT INTO entity_mentions (entity_id, doc_id, mention_text) VALUES (?, ?, ?)",
                rows,
            )

    def _write_counts(self, identifiers: Sequence[str] | None = None) -> None:
        """Write the pending mention counts (of ``identifiers`` only, when given)."""
        pending = self._pending
        if identifiers is None:
            due, self._pending = list(pending.items()), {}
        else:
            due = [(identifier, pending.pop(identifier)) for identifier in identifiers]
        if due:
            self._connection.executemany(
                "UPDATE entity_nodes SET mention_count = mention_count + ?, last_seen = ?"
                " WHERE entity_id = ?",
                [(count, self.moment, identifier) for identifier, count in due],
            )

    def finish(self) -> None:
        """Write what :meth:`flush` leaves to the end of a deferred run: the run's
        co-occurrences, in key order, and the end of its ``pending`` mark (inside the
        caller's transaction)."""
        self.flush()
        self._write_pairs()
        if self._marked:
            self._connection.execute("DELETE FROM vault_state WHERE key = ?", (_PENDING_KEY,))
            self._marked = False

    def _write_pairs(self) -> None:
        pairs, self._pairs = self._pairs, Counter()
        if not pairs:
            return
        self._connection.executemany(
            """
            INSERT INTO entity_cooccurrences (entity_a, entity_b, count, last_cooccurred)
            VALUES (?, ?, ?, ?)
            ON CONFLICT (entity_a, entity_b) DO UPDATE
            SET count = entity_cooccurrences.count + excluded.count,
                last_cooccurred = excluded.last_cooccurred
            """,
            [(a, b, count, self.moment) for (a, b), count in sorted(pairs.items())],
        )

    def _write_cooccurrences(self) -> None:
        """Every pair of entities each pending document names, counted in one statement
        (deferred: the run's pairs so far, as :meth:`finish` writes them)."""
        if self._deferred:
            self._documents.clear()
            self._write_pairs()
            return
        if not self._documents:
            return
        ids = list(self._documents)
        for start in range(0, len(ids), _CHUNK):  # counts of later chunks add up
            chunk = ids[start : start + _CHUNK]
            self._connection.execute(
                f"""
                INSERT INTO entity_cooccurrences (entity_a, entity_b, count, last_cooccurred)
                SELECT a.entity_id, b.entity_id, COUNT(*), ? FROM entity_mentions a
                JOIN entity_mentions b ON b.doc_id = a.doc_id AND b.entity_id > a.entity_id
                WHERE a.doc_id IN ({",".join("?" * len(chunk))})
                GROUP BY a.entity_id, b.entity_id
                ON CONFLICT (entity_a, entity_b) DO UPDATE
                SET count = entity_cooccurrences.count + excluded.count,
                    last_cooccurred = excluded.last_cooccurred
                """,
                (self.moment, *chunk),
            )
        self._documents.clear()


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


_PENDING_KEY = "entity_cooccurrences"


def mark_cooccurrences_pending(connection: Connection, moment: str) -> None:
    """Note in the caller's transaction that co-occurrences are being counted in memory."""
    connection.execute(
        "INSERT INTO vault_state (key, value, updated_at) VALUES (?, 'pending', ?)"
        " ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        (_PENDING_KEY, moment),
    )


def cooccurrences_pending(connection: Connection) -> bool:
    """Whether a deferred run's co-occurrences are pending (running, or interrupted)."""
    row = connection.execute("SELECT 1 FROM vault_state WHERE key = ?", (_PENDING_KEY,))
    return row.fetchone() is not None


def repair_cooccurrences(connection: Connection) -> bool:
    """Recount every co-occurrence from the mentions when a deferred run was interrupted
    before writing its own (see ``m017_vault_state``); returns whether it did. One write
    transaction."""
    with write_step(connection):
        if (
            connection.execute(
                "SELECT 1 FROM vault_state WHERE key = ?", (_PENDING_KEY,)
            ).fetchone()
            is None
        ):
            return False
        moment = to_iso(datetime.now(UTC))
        connection.execute("DELETE FROM entity_cooccurrences")
        connection.execute(
            """
            INSERT INTO entity_cooccurrences (entity_a, entity_b, count, last_cooccurred)
            SELECT a.entity_id, b.entity_id, COUNT(*), ? FROM entity_mentions a
            JOIN entity_mentions b ON b.doc_id = a.doc_id AND b.entity_id > a.entity_id
            GROUP BY a.entity_id, b.entity_id
            """,
            (moment,),
        )
        connection.execute("DELETE FROM vault_state WHERE key = ?", (_PENDING_KEY,))
    return True
