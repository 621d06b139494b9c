"""Documents written by memtrove itself (agent memories), not read from a folder.

They live in internal collections (names starting with ``_``, which users cannot take), are
indexed exactly like files (content, fragments, full-text, vectors by the embed job) and are
never touched by ``update``: no folder backs them. The caller holds the write transaction.

:func:`write_bulk` writes many documents of a collection memtrove owns (a mined collection's
exchanges) at once: the rows the indexer would write one by one, with one statement per
table (``executemany``) for the new ones and one lookup per batch for the rows already there.

:func:`save_memory` is ClawMem's ``saveMemory``: :func:`write_internal` behind the dedupe
window. A memory whose body (lowercased, whitespace collapsed: :func:`normalized_hash`)
was already saved in the same collection with the same content type within the last
:data:`DEDUPE_WINDOW_MINUTES` minutes is not written again under a new path: the first
one's ``duplicate_count`` goes up (and ``last_seen_at``), which the frequency boost of
composite scoring reads.
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import NamedTuple

from memtrove.db.connection import Connection
from memtrove.db.passages import write_passages
from memtrove.index.classify import confidence_baseline, quality_score
from memtrove.index.indexer import deactivate_documents
from memtrove.index.markdown import ParsedMarkdown, document_title, parse_markdown
from memtrove.index.preparing import Prepared, fragment_rows
from memtrove.index.scanner import FileEntry
from memtrove.index.writing import (
    CHUNK,
    DocidPool,
    _insert_document,
    _store_content,
    _write_document,
    stored_hashes,
)
from memtrove.security.redaction import redact_text
from memtrove.text import iso_from_timestamp, to_iso

__all__ = [
    "DEDUPE_WINDOW_MINUTES",
    "MEMORY_COLLECTION",
    "BulkDocument",
    "BulkWrite",
    "ExistingRow",
    "Saved",
    "count_duplicate",
    "deactivate_internal",
    "existing_rows",
    "normalized_hash",
    "save_memory",
    "write_bulk",
    "write_internal",
]

MEMORY_COLLECTION = "_memtrove"
DEDUPE_WINDOW_MINUTES = 30


class Saved(NamedTuple):
    """What :func:`save_memory` did: the document id and ``inserted``, ``updated``,
    ``unchanged`` or ``deduplicated`` (an earlier copy counted instead)."""

    doc_id: int
    action: str


def normalized_hash(body: str) -> str:
    """SHA-256 of ``body`` lowercased with its whitespace collapsed: two saves of one memory
    that differ only in case or spacing share it."""
    text = " ".join(body.lower().split())
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


def count_duplicate(connection: Connection, doc_id: int, now: str) -> None:
    """Count one more save of the memory ``doc_id`` (``duplicate_count`` + 1)."""
    connection.execute(
        "UPDATE documents SET duplicate_count = duplicate_count + 1, last_seen_at = ? WHERE id = ?",
        (now, doc_id),
    )


def save_memory(
    connection: Connection, collection: str, path: str, text: str, content_type: str, now: str
) -> Saved:
    """Save an agent memory as ClawMem's ``saveMemory`` does (module docstring): a body
    already saved as another active, valid document of ``collection`` and ``content_type``
    in the last 30 minutes is counted on that one (``deduplicated``); otherwise
    :func:`write_internal`. The caller holds the write transaction."""
    row = connection.execute(
        "SELECT id, hash FROM documents WHERE collection = ? AND path = ?", (collection, path)
    ).fetchone()
    if row is None:
        digest = normalized_hash(parse_markdown(redact_text(text)).body)
        since = to_iso(
            datetime.fromisoformat(now.replace("Z", "+00:00"))
            - timedelta(minutes=DEDUPE_WINDOW_MINUTES)
        )
        twin = connection.execute(
            "SELECT id FROM documents WHERE collection = ? AND content_type = ? "
            "AND normalized_hash = ? AND created_at >= ? AND active = 1 "
            "AND invalidated_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 1",
            (collection, content_type, digest, since),
        ).fetchone()
        if twin is not None:
            count_duplicate(connection, int(twin[0]), now)
            return Saved(int(twin[0]), "deduplicated")
    doc_id = write_internal(connection, collection, path, text, content_type, now)
    if row is None:
        return Saved(doc_id, "inserted")
    changed = connection.execute("SELECT hash FROM documents WHERE id = ?", (doc_id,)).fetchone()
    return Saved(doc_id, "unchanged" if str(changed[0]) == str(row[1]) else "updated")


def write_internal(
    connection: Connection, collection: str, path: str, text: str, content_type: str, now: str
) -> int:
    """Create or replace (and reactivate) ``collection/path`` with ``text``; its doc id.
    Secrets are redacted here too, whatever the caller did."""
    if not collection.startswith("_"):
        raise ValueError(f"{collection!r} is not an internal collection")
    text = redact_text(text)
    parsed = parse_markdown(text)
    data = text.encode("utf-8", errors="surrogatepass")
    item = Prepared(
        file=FileEntry(path=path, absolute="", size=len(data), mtime_ns=time.time_ns()),
        text=text,
        hash=hashlib.sha256(data).hexdigest(),
        parsed=parsed,
        title=document_title(parsed, path),
        content_type=content_type,
        quality=quality_score(parsed.body, bool(parsed.frontmatter_span)),
        authored_at=None,
        tags=None,
    )
    _store_content(connection, item, now)
    row = connection.execute(
        "SELECT id, hash, active FROM documents WHERE collection = ? AND path = ?",
        (collection, path),
    ).fetchone()
    if row is None:
        _insert_document(connection, collection, item, now)
        found = connection.execute(
            "SELECT id FROM documents WHERE collection = ? AND path = ?", (collection, path)
        ).fetchone()
        doc_id = int(found[0])
    else:
        doc_id = int(row[0])
        if str(row[1]) != item.hash or not row[2]:
            _write_document(
                connection, doc_id, item, collection, now, revision=str(row[1]) != item.hash
            )
    connection.execute(
        "UPDATE documents SET normalized_hash = ? WHERE id = ?",
        (normalized_hash(parsed.body), doc_id),
    )
    return doc_id


def deactivate_internal(connection: Connection, doc_id: int) -> None:
    """Take an internal document out of search (its text stays in the vault)."""
    deactivate_documents(connection, [doc_id])


class BulkDocument(NamedTuple):
    """One document for :func:`write_bulk`: text already redacted, hashed and parsed."""

    path: str
    text: str
    hash: str
    parsed: ParsedMarkdown
    title: str
    content_type: str
    authored_at: str | None
    size: int
    mtime_ns: int


class BulkWrite(NamedTuple):
    """What :func:`write_bulk` did: the ids written (in order), and the rows left alone."""

    ids: list[int]
    unchanged: int
    rewritten: int
    """Existing rows given a new body or brought back (their old full-text rows deleted)."""


class ExistingRow(NamedTuple):
    id: int
    hash: str
    settled: bool
    """Active, or forgotten or archived: a rerun with the same body leaves it alone."""


def existing_rows(
    connection: Connection, collection: str, paths: Iterable[str]
) -> dict[str, ExistingRow]:
    """The rows of ``collection`` at ``paths``, one query per 500 paths."""
    unique = list(dict.fromkeys(paths))
    found: dict[str, ExistingRow] = {}
    for start in range(0, len(unique), _CHUNK):
        chunk = unique[start : start + _CHUNK]
        rows = connection.execute(
            "SELECT path, id, hash, active, forgotten_hash FROM documents "
            f"WHERE collection = ? AND path IN ({','.join('?' * len(chunk))})",
            (collection, *chunk),
        )
        for path, doc_id, body_hash, active, forgotten in rows:
            found[path] = ExistingRow(doc_id, body_hash, active == 1 or forgotten is not None)
    return found


def write_bulk(
    connection: Connection, collection: str, documents: Sequence[BulkDocument], now: str
) -> BulkWrite:
    """Write ``documents`` into ``collection`` as the indexer would one by one (same rows,
    ids, docids, fragments and full-text rows), with one statement per table for the new
    ones. A document whose row is settled with the same body is left alone; a changed or
    inactive one is rewritten in place (and reactivated). The caller holds the write
    transaction. Bodies are stored as given: redact them first."""
    existing = existing_rows(connection, collection, (d.path for d in documents))
    stored = stored_hashes(connection, (d.hash for d in documents))
    ids: list[int] = []
    unchanged = rewritten = 0
    inserts: list[tuple[BulkDocument, float]] = []
    pending: set[str] = set()
    next_id = _max_id(connection)
    docids = DocidPool(connection, (d.hash for d in documents if d.path not in existing))
    bodies: list[tuple[str, str, str]] = []
    fragments: list[_FragmentRow] = []

    def store(document: BulkDocument) -> float:
        """The document's quality; its body (and fragments) queued when the vault lacks it."""
        quality = quality_score(document.parsed.body, bool(document.parsed.frontmatter_span))
        if document.hash not in stored:
            stored.add(document.hash)
            bodies.append((document.hash, document.text, now))
            rows = fragment_rows(document.parsed, document.title)
            fragments.extend((document.hash, *row) for row in rows)
        return quality

    def flush_inserts() -> None:
        nonlocal next_id
        _insert_bodies(connection, bodies, fragments)
        rows: list[tuple[object, ...]] = []
        texts: list[tuple[int, str, str, str]] = []
        first_id = next_id + 1
        for document, quality in inserts:
            next_id += 1
            rows.append(_document_row(next_id, collection, document, quality, docids, now))
            texts.append(_fts_row(next_id, collection, document))
        connection.executemany(_INSERT_DOCUMENT, rows)
        connection.text.add_documents(texts)
        for doc_id, (document, _) in enumerate(inserts, start=first_id):
            write_passages(connection, doc_id, document.hash, document.text)
        inserts.clear()
        pending.clear()

    for document in documents:
        if document.path in pending:  # the same path twice in one batch: the first is a row
            flush_inserts()
            existing.update(existing_rows(connection, collection, [document.path]))
        row = existing.get(document.path)
        if row is not None and row.hash == document.hash and row.settled:
            unchanged += 1
            continue
        quality = store(document)
        if row is None:
            inserts.append((document, quality))
            pending.add(document.path)
            ids.append(next_id + len(inserts))
            continue
        _insert_bodies(connection, bodies, fragments)
        _write_document(
            connection,
            row.id,
            _prepared(document, quality),
            collection,
            now,
            revision=row.hash != document.hash,
        )
        existing[document.path] = ExistingRow(row.id, document.hash, True)
        rewritten += 1
        ids.append(row.id)
    flush_inserts()
    return BulkWrite(ids, unchanged, rewritten)


_CHUNK = CHUNK  # paths per query
_FragmentRow = tuple[str, int, str, str, int, int]  # hash, seq, type, label, start, end
_INSERT_DOCUMENT = (
    "INSERT INTO documents (id, collection, path, title, hash, docid, content_type, "
    "quality_score, confidence, created_at, modified_at, authored_at, active, tags, "
    "body_length, file_size, file_mtime_ns) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, NULL, ?, ?, ?)"
)


def _max_id(connection: Connection) -> int:
    # A new row without an id gets one more than the largest (no AUTOINCREMENT): giving it
    # explicitly keeps the ids the one-by-one path would give, and names the full-text row.
    return int(connection.execute("SELECT COALESCE(MAX(id), 0) FROM documents").fetchone()[0])


def _insert_bodies(
    connection: Connection, bodies: list[tuple[str, str, str]], fragments: list[_FragmentRow]
) -> None:
    if bodies:
        # In key order: both tables are keyed by the hash, and sorted inserts walk the
        # B-tree in order instead of landing on a random page for each row.
        connection.executemany(
            "INSERT INTO content (hash, doc, created_at) VALUES (?, ?, ?) "
            "ON CONFLICT (hash) DO NOTHING",
            sorted(bodies),
        )
        connection.executemany(
            "INSERT INTO fragments (hash, seq, fragment_type, label, start_offset, end_offset) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            sorted(fragments),  # (hash, seq) is unique: nothing past it is compared
        )
    bodies.clear()
    fragments.clear()


def _document_row(
    doc_id: int,
    collection: str,
    document: BulkDocument,
    quality: float,
    docids: DocidPool,
    now: str,
) -> tuple[object, ...]:
    return (
        doc_id,
        collection,
        document.path,
        document.title,
        document.hash,
        docids.take(document.hash),
        document.content_type,
        quality,
        confidence_baseline(document.content_type),
        now,
        _modified_at(document.mtime_ns),
        document.authored_at,
        len(document.parsed.body),
        document.size,
        document.mtime_ns,
    )


def _fts_row(doc_id: int, collection: str, document: BulkDocument) -> tuple[int, str, str, str]:
    return (doc_id, f"{collection}/{document.path}", document.title, document.parsed.body)


@functools.lru_cache(maxsize=64)
def _modified_at(mtime_ns: int) -> str:
    return iso_from_timestamp(mtime_ns / 1e9)  # one value per source file


def _prepared(document: BulkDocument, quality: float) -> Prepared:
    return Prepared(
        file=FileEntry(
            path=document.path, absolute="", size=document.size, mtime_ns=document.mtime_ns
        ),
        text=document.text,
        hash=document.hash,
        parsed=document.parsed,
        title=document.title,
        content_type=document.content_type,
        quality=quality,
        authored_at=document.authored_at,
        tags=None,
        fragments=[],  # stored (or already there) by write_bulk
    )
