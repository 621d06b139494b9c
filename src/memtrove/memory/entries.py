"""Labelled entries of the agent's memory store, and their earlier versions.

An entry is a row of ``memory_entries`` plus a document of the internal collection
``_memtrove`` at ``entries/<store>/<slug>.md`` (title = label, body = content), so keyword,
vector and hybrid search find entries like any note. Writing a label that exists is refused
unless overwriting; an overwrite or a forget first copies the text it replaces into
``memory_entry_versions``, and clears the store's dedup verdicts on that slug.

Every function here runs its own ``BEGIN IMMEDIATE`` transaction (or none, for reads).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memtrove.db.connection import Connection, write_transaction
from memtrove.errors import EntryExistsError, EntryNotFoundError, InvalidQueryError
from memtrove.index.internal import MEMORY_COLLECTION, deactivate_internal, write_internal
from memtrove.memory.slugs import slugify, store_name
from memtrove.results import EntryVersion, MemoryEntry

__all__ = [
    "ENTRY_CONTENT_TYPE",
    "MAX_CONTENT_CHARS",
    "EntryWrite",
    "entry_ids",
    "entry_path",
    "forget_entry",
    "get_entry",
    "list_entries",
    "set_archived",
    "stamp_recalled",
    "stored_vectors",
    "versions",
    "write_entry",
]

ENTRY_CONTENT_TYPE = "memory"
MAX_CONTENT_CHARS = 100_000

_COLUMNS = (
    "e.store, e.slug, e.label, c.doc, e.branch, e.confidence, e.archived, e.created_at, "
    "e.updated_at, e.recall_count, e.last_recalled_at, d.docid, e.doc_id"
)
_FROM = (
    "FROM memory_entries e JOIN documents d ON d.id = e.doc_id JOIN content c ON c.hash = d.hash"
)


@dataclass(frozen=True)
class EntryWrite:
    """What ``write_entry`` stored: the entry, its document id, whether it is new."""

    entry: MemoryEntry
    doc_id: int
    created: bool


def entry_path(store: str, slug: str) -> str:
    return f"entries/{store}/{slug}.md"


def _document_text(label: str, content: str, store: str, branch: str | None) -> str:
    import yaml  # only writers pay for it: the vault's import stays light for hooks

    meta: dict[str, Any] = {"title": label, "store": store}
    if branch:
        meta["branch"] = branch
    header = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, width=1_000_000)
    return f"---\n{header}---\n\n{content.strip()}\n"


def _body(text: str) -> str:
    """The content back out of an entry document (what follows the frontmatter)."""
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end != -1:
            return text[end + 5 :].strip("\n")
    return text.strip("\n")


def _entry(row: Sequence[Any]) -> MemoryEntry:
    return MemoryEntry(
        store=str(row[0]),
        slug=str(row[1]),
        label=str(row[2]),
        content=_body(str(row[3])),
        branch=row[4],
        confidence=None if row[5] is None else int(row[5]),
        archived=bool(row[6]),
        created_at=str(row[7]),
        updated_at=str(row[8]),
        recall_count=int(row[9]),
        last_recalled_at=row[10],
        docid=str(row[11]),
    )


def check_confidence(confidence: int | None) -> int | None:
    if confidence is None:
        return None
    if isinstance(confidence, bool) or not isinstance(confidence, int) or not 1 <= confidence <= 10:
        raise InvalidQueryError(
            f"confidence must be a whole number from 1 to 10, got {confidence!r}"
        )
    return confidence


def write_entry(
    connection: Connection,
    store: str,
    label: str,
    content: str,
    *,
    branch: str | None,
    confidence: int | None,
    overwrite: bool,
    embedding: bytes | None,
    model: str | None,
    now: str,
) -> EntryWrite:
    """Create the entry, or replace it when ``overwrite`` (keeping the old text as a
    version); a label that exists without ``overwrite`` raises :class:`EntryExistsError`."""
    store = store_name(store)
    slug = slugify(label)
    label = " ".join(label.split())
    if not content.strip():
        raise InvalidQueryError("an entry needs some content")
    if len(content) > MAX_CONTENT_CHARS:
        raise InvalidQueryError(f"an entry's content is at most {MAX_CONTENT_CHARS:,} characters")
    confidence = check_confidence(confidence)
    branch = branch.strip() or None if branch else None
    with write_transaction(connection):
        connection.execute(
            "INSERT INTO memory_stores (name, created_at) VALUES (?, ?) "
            "ON CONFLICT (name) DO NOTHING",
            (store, now),
        )
        old = _row(connection, store, slug)
        if old is not None and not overwrite:
            raise EntryExistsError(
                f"store {store!r} already has an entry {old[2]!r} (slug {slug!r}); pass "
                "overwrite to replace it (the current text is kept as an earlier version)"
            )
        text = _document_text(label, content, store, branch)
        doc_id = write_internal(
            connection, MEMORY_COLLECTION, entry_path(store, slug), text, ENTRY_CONTENT_TYPE, now
        )
        if old is None:
            connection.execute(
                "INSERT INTO memory_entries (doc_id, store, slug, label, branch, confidence, "
                "embedding, model, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (doc_id, store, slug, label, branch, confidence, embedding, model, now, now),
            )
        else:
            _keep_version(connection, _entry(old), "overwrite", now)
            connection.execute(
                "UPDATE memory_entries SET doc_id = ?, label = ?, branch = ?, confidence = ?, "
                "embedding = ?, model = ?, updated_at = ?, archived = 0 "
                "WHERE store = ? AND slug = ?",
                (doc_id, label, branch, confidence, embedding, model, now, store, slug),
            )
            _clear_verdicts(connection, store, slug)
        row = _row(connection, store, slug)
    return EntryWrite(_entry(row), doc_id, old is None)


def _keep_version(connection: Connection, entry: MemoryEntry, reason: str, now: str) -> None:
    connection.execute(
        "INSERT INTO memory_entry_versions (store, slug, label, content, branch, confidence, "
        "written_at, replaced_at, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            entry.store,
            entry.slug,
            entry.label,
            entry.content,
            entry.branch,
            entry.confidence,
            entry.updated_at,
            now,
            reason,
        ),
    )


def _clear_verdicts(connection: Connection, store: str, slug: str) -> None:
    connection.execute(
        "DELETE FROM dedup_pairs WHERE store = ? AND (slug_a = ? OR slug_b = ?)",
        (store, slug, slug),
    )


def _row(connection: Connection, store: str, slug: str) -> Any:
    """The entry's row (``_COLUMNS``), None when the store has no such slug."""
    return connection.execute(
        f"SELECT {_COLUMNS} {_FROM} WHERE e.store = ? AND e.slug = ?", (store, slug)
    ).fetchone()


def _found_row(connection: Connection, store: str, slug: str, label: str) -> Any:
    """The entry's row; EntryNotFoundError when the store has no such slug."""
    row = _row(connection, store, slug)
    if row is None:
        raise EntryNotFoundError(f"no entry {label!r} (slug {slug!r}) in store {store!r}")
    return row


def get_entry(connection: Connection, store: str, label: str) -> MemoryEntry:
    store, slug = store_name(store), slugify(label)
    return _entry(_found_row(connection, store, slug, label))


def forget_entry(connection: Connection, store: str, label: str, now: str) -> MemoryEntry:
    """Remove the entry (its text is kept as a version; its document leaves search)."""
    store, slug = store_name(store), slugify(label)
    with write_transaction(connection):
        row = _found_row(connection, store, slug, label)
        entry = _entry(row)
        _keep_version(connection, entry, "forget", now)
        deactivate_internal(connection, int(row[12]))
        connection.execute("DELETE FROM memory_entries WHERE store = ? AND slug = ?", (store, slug))
        _clear_verdicts(connection, store, slug)
    return entry


def set_archived(
    connection: Connection, store: str, label: str, archived: bool, now: str
) -> MemoryEntry:
    """Archive (or restore) an entry: archived entries stay, but recall, duplicates and
    staleness leave them out, and their document leaves search."""
    store, slug = store_name(store), slugify(label)
    with write_transaction(connection):
        row = _found_row(connection, store, slug, label)
        connection.execute(
            "UPDATE memory_entries SET archived = ?, updated_at = ? WHERE store = ? AND slug = ?",
            (1 if archived else 0, now, store, slug),
        )
        if archived:
            deactivate_internal(connection, int(row[12]))
        else:
            entry = _entry(row)
            text = _document_text(entry.label, entry.content, store, entry.branch)
            write_internal(
                connection,
                MEMORY_COLLECTION,
                entry_path(store, slug),
                text,
                ENTRY_CONTENT_TYPE,
                now,
            )
        row = _row(connection, store, slug)
    return _entry(row)


def _where(
    stores: Sequence[str], branch: str | None, include_archived: bool
) -> tuple[str, list[Any]]:
    where = [f"e.store IN ({','.join('?' * len(stores))})"]
    parameters: list[Any] = [store_name(store) for store in stores]
    if branch is not None:
        where.append("(e.branch IS NULL OR e.branch = ?)")
        parameters.append(branch)
    if not include_archived:
        where.append("e.archived = 0")
    return " AND ".join(where), parameters


def list_entries(
    connection: Connection,
    stores: Sequence[str],
    *,
    branch: str | None = None,
    include_archived: bool = False,
    doc_ids: Sequence[int] | None = None,
) -> list[tuple[int, MemoryEntry]]:
    """(doc id, entry) of the stores (only ``doc_ids`` when given), newest first; ``branch``
    keeps unscoped entries and those of that branch."""
    where, parameters = _where(stores, branch, include_archived)
    if doc_ids is not None:
        where += f" AND e.doc_id IN ({','.join('?' * len(doc_ids))})"
        parameters.extend(doc_ids)
    rows = connection.execute(
        f"SELECT {_COLUMNS} {_FROM} WHERE {where} ORDER BY e.updated_at DESC", parameters
    ).fetchall()
    return [(int(row[12]), _entry(row)) for row in rows]


def entry_ids(connection: Connection, stores: Sequence[str], branch: str | None = None) -> set[int]:
    """Document ids of the live entries of the stores (no text read)."""
    where, parameters = _where(stores, branch, include_archived=False)
    rows = connection.execute(f"SELECT e.doc_id FROM memory_entries e WHERE {where}", parameters)
    return {int(row[0]) for row in rows}


def stored_vectors(
    connection: Connection, stores: Sequence[str], model: str
) -> list[tuple[int, str, str, str, bytes]]:
    """(doc id, store, slug, label, embedding) of live entries embedded by ``model``."""
    rows = connection.execute(
        f"SELECT doc_id, store, slug, label, embedding FROM memory_entries "
        f"WHERE store IN ({','.join('?' * len(stores))}) AND archived = 0 "
        "AND embedding IS NOT NULL AND model = ?",
        [*(store_name(store) for store in stores), model],
    ).fetchall()
    return [(int(a), str(b), str(c), str(d), bytes(e)) for a, b, c, d, e in rows]


def stamp_recalled(connection: Connection, doc_ids: Sequence[int], now: str) -> None:
    """Count a recall of each entry (``search`` never does)."""
    if not doc_ids:
        return
    with write_transaction(connection):
        connection.executemany(
            "UPDATE memory_entries SET recall_count = recall_count + 1, last_recalled_at = ? "
            "WHERE doc_id = ?",
            [(now, doc_id) for doc_id in doc_ids],
        )


def versions(connection: Connection, store: str, label: str) -> list[EntryVersion]:
    """Earlier texts of the entry, newest first."""
    store, slug = store_name(store), slugify(label)
    rows = connection.execute(
        "SELECT store, slug, label, content, branch, confidence, written_at, replaced_at, "
        "reason FROM memory_entry_versions WHERE store = ? AND slug = ? ORDER BY id DESC",
        (store, slug),
    ).fetchall()
    return [
        EntryVersion(
            store=str(r[0]),
            slug=str(r[1]),
            label=str(r[2]),
            content=str(r[3]),
            branch=r[4],
            confidence=None if r[5] is None else int(r[5]),
            written_at=str(r[6]),
            replaced_at=str(r[7]),
            reason=str(r[8]),
        )
        for r in rows
    ]
