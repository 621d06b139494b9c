"""Writing documents: a body's rows (``content``, ``fragments``) and a document's (its row,
full-text row and passages).

:func:`write_batch` writes one batch of the files an update read
(:mod:`memtrove.index.indexer`) in a write transaction of its own: the rows its paths hold
now, the bodies the vault lacks (with their fragments) and the docids its new documents
can take are each read or written once for the batch; then each file becomes a new,
updated, renamed or untouched document, in order, as if written one by one. The other
functions write one document inside the caller's transaction; :mod:`memtrove.index.internal`
and the importers use them too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from memtrove.db.connection import Connection, write_transaction
from memtrove.db.passages import drop_passages, write_passages
from memtrove.index.documents import DOCID_LENGTH, free_docid
from memtrove.text import iso_from_timestamp, now_iso

if TYPE_CHECKING:
    from memtrove.db.text_tokens import Tokenized
    from memtrove.graph.links import WrittenDocument
    from memtrove.index.markdown import ParsedMarkdown
    from memtrove.index.preparing import FragmentRow, Prepared
    from memtrove.results import UpdateReport

__all__ = [
    "CHUNK",
    "DocidPool",
    "LinkPass",
    "StoredRow",
    "stored_hashes",
    "write_batch",
    "write_text_rows",
]

CHUNK = 500  # values per IN (...) list
_INSERT_BODY = (
    "INSERT INTO content (hash, doc, created_at) VALUES (?, ?, ?) ON CONFLICT (hash) DO NOTHING"
)
_FRAGMENT_COLUMNS = ("hash", "seq", "fragment_type", "label", "start_offset", "end_offset")
_INSERT_FRAGMENT = (
    "INSERT INTO fragments (hash, seq, fragment_type, label, start_offset, end_offset) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)


class LinkPass:
    """The links of one collection pass (:mod:`memtrove.graph.links`): stored with each
    batch, resolved once at the end."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled  # False on a schema older than document_links
        self.batch: list[WrittenDocument] = []
        self.wrote_any = False
        self.moved: set[int] = set()  # appeared, moved or left: the set of paths changed

    def wrote(self, doc_id: int, item: Prepared, *, moved: bool) -> None:
        if not self.enabled:
            return
        from memtrove.graph.links import WrittenDocument, extract_links

        links = tuple(extract_links(item.parsed.body, item.file.path))
        self.batch.append(WrittenDocument(doc_id, item.file.path, links))
        self.wrote_any = True
        if moved:
            self.moved.add(doc_id)

    def flush(self, connection: Connection) -> None:
        """Store the batch's links; inside the batch's transaction."""
        from memtrove.graph.links import write_links

        write_links(connection, self.batch)
        self.batch = []


class StoredRow(NamedTuple):
    """A document row as an update pass reads it before writing."""

    id: int
    hash: str
    size: int | None
    mtime_ns: int | None
    active: bool
    forgotten_hash: str | None = None


def write_batch(
    connection: Connection,
    collection: str,
    prepared: list[Prepared],
    vanished: tuple[dict[str, StoredRow], dict[str, list[str]], dict[str, list[int]]],
    report: UpdateReport,
    links: LinkPass,
) -> None:
    """Write ``prepared`` (read files of ``collection``, distinct paths) in one transaction;
    ``vanished`` holds the documents whose file went (by path and by body hash) and the
    forgotten ones (by body hash), which a new path with the same body takes over."""
    missing, missing_by_hash, forgotten_by_hash = vanished
    now = now_iso()
    with write_transaction(connection):
        # Read again inside the transaction, so a concurrent update is never overwritten;
        # a batch's paths are distinct, so one read serves every item.
        rows = _rows_at(connection, collection, [item.file.path for item in prepared])
        _store_bodies(connection, prepared, now)
        docids = DocidPool(
            connection, (item.hash for item in prepared if item.file.path not in rows)
        )
        fresh: list[tuple[Prepared, str]] = []  # inserted together after the loop, in order
        for item in prepared:
            row = rows.get(item.file.path)
            if row is None:
                moved = _take_renamed(connection, collection, item.hash, missing, missing_by_hash)
                if moved is not None:
                    _write_document(connection, moved, item, collection, now, revision=False)
                    links.wrote(moved, item, moved=True)
                    report.renamed += 1
                elif forgotten_by_hash.get(item.hash):
                    _move_forgotten(connection, forgotten_by_hash[item.hash].pop(), item)
                    report.renamed += 1
                else:
                    fresh.append((item, docids.take(item.hash)))
                continue
            doc_id, old_hash, active = int(row[0]), str(row[1]), bool(row[2])
            if not active and row[3] == item.hash:  # forgotten, and the body is unchanged
                connection.execute(
                    "UPDATE documents SET file_size = ?, file_mtime_ns = ? WHERE id = ?",
                    (item.file.size, item.file.mtime_ns, doc_id),
                )
                report.unchanged += 1
                continue
            if old_hash == item.hash and active:  # the review fields: filled after m027
                connection.execute(
                    "UPDATE documents SET file_size = ?, file_mtime_ns = ?, review_by = ?, "
                    "domain = ?, workstream = ? WHERE id = ?",
                    (
                        item.file.size,
                        item.file.mtime_ns,
                        item.review_by,
                        item.domain,
                        item.workstream,
                        doc_id,
                    ),
                )
                report.unchanged += 1
                continue
            _write_document(
                connection, doc_id, item, collection, now, revision=old_hash != item.hash
            )
            links.wrote(doc_id, item, moved=not active)
            if active:
                report.updated += 1
            else:
                report.added += 1
        for doc_id, (item, _) in zip(
            _insert_documents(connection, collection, fresh, now), fresh, strict=True
        ):
            links.wrote(doc_id, item, moved=True)
            report.added += 1
        links.flush(connection)


def _rows_at(
    connection: Connection, collection: str, paths: list[str]
) -> dict[str, tuple[int, str, int, str | None]]:
    """``(id, hash, active, forgotten_hash)`` of the collection's rows at ``paths``."""
    found: dict[str, tuple[int, str, int, str | None]] = {}
    for start in range(0, len(paths), CHUNK):
        chunk = paths[start : start + CHUNK]
        for row in connection.execute(
            "SELECT path, id, hash, active, forgotten_hash FROM documents "
            f"WHERE collection = ? AND path IN ({','.join('?' * len(chunk))})",
            (collection, *chunk),
        ):
            found[row[0]] = row[1:]
    return found


def stored_hashes(connection: Connection, hashes: Iterable[str]) -> set[str]:
    """Which of ``hashes`` the vault holds a body for."""
    listed = sorted(set(hashes))
    found: set[str] = set()
    for start in range(0, len(listed), CHUNK):
        chunk = listed[start : start + CHUNK]
        found.update(
            row[0]
            for row in connection.execute(
                f"SELECT hash FROM content WHERE hash IN ({','.join('?' * len(chunk))})", chunk
            )
        )
    return found


def _store_bodies(connection: Connection, prepared: list[Prepared], now: str) -> None:
    """The bodies of ``prepared`` the vault lacks, with their fragments, as
    :func:`_store_content` would store them one by one (in the same order, so with the same
    row ids), before any document row: the rows refer to them, and a long document's
    passages are cut along its fragments."""
    from memtrove.index.preparing import fragment_rows

    stored = stored_hashes(connection, (item.hash for item in prepared))
    bodies: list[tuple[str, str, str]] = []
    fragments: list[tuple[str, int, str, str, int, int]] = []
    for item in prepared:
        if item.hash in stored:
            continue
        stored.add(item.hash)
        bodies.append((item.hash, item.text, now))
        rows = item.fragments
        if rows is None:
            rows = fragment_rows(item.parsed, item.title)
        fragments.extend((item.hash, *row) for row in rows)
    # New bodies only (read above, inside this write transaction), so plain inserts
    connection.insert_rows("content", ("hash", "doc", "created_at"), bodies)
    # in key order: (hash, seq) is unique, so nothing past it is compared
    connection.insert_rows("fragments", _FRAGMENT_COLUMNS, sorted(fragments))


class DocidPool:
    """Free docids for new rows (:func:`memtrove.index.documents.free_docid`'s rule), the
    taken ones read in one query for the whole batch, and the ones given in it counted."""

    def __init__(self, connection: Connection, hashes: Iterable[str]) -> None:
        bases = sorted({body_hash[:DOCID_LENGTH].lower() for body_hash in hashes})
        self._taken: dict[str, set[str]] = {base: set() for base in bases}
        for start in range(0, len(bases), CHUNK):
            chunk = bases[start : start + CHUNK]
            # one range probe of the docid index per prefix ("g" sorts after every hex digit)
            rows = connection.execute(
                f"SELECT p.column1, d.docid FROM (VALUES {','.join(['(?)'] * len(chunk))}) "
                "AS p JOIN documents AS d ON d.docid >= p.column1 AND d.docid < p.column1 || 'g'",
                chunk,
            )
            for base, docid in rows:
                self._taken[str(base)].add(str(docid))

    def take(self, body_hash: str) -> str:
        base = body_hash[:DOCID_LENGTH].lower()
        taken = self._taken.setdefault(base, set())
        docid = base
        place = 0
        while docid in taken:
            place += 1
            docid = f"{base}{place:02x}"
        taken.add(docid)
        return docid


def _take_renamed(
    connection: Connection,
    collection: str,
    body_hash: str,
    missing: dict[str, StoredRow],
    missing_by_hash: dict[str, list[str]],
) -> int | None:
    """The id of a vanished document with this body, claimed for its new path."""
    candidates = missing_by_hash.get(body_hash)
    while candidates:
        old_path = candidates.pop()
        row = missing.pop(old_path, None)
        if row is None:
            continue
        still_there = connection.execute(
            "SELECT 1 FROM documents WHERE id = ? AND hash = ? AND active = 1", (row.id, body_hash)
        ).fetchone()
        if still_there:
            return row.id
    return None


def _move_forgotten(connection: Connection, doc_id: int, item: Prepared) -> None:
    """A forgotten document's file moved: follow it, and keep the document forgotten."""
    connection.execute(
        "UPDATE documents SET path = ?, file_size = ?, file_mtime_ns = ? WHERE id = ?",
        (item.file.path, item.file.size, item.file.mtime_ns, doc_id),
    )


def _store_content(connection: Connection, item: Prepared, now: str) -> None:
    from memtrove.index.preparing import fragment_rows

    inserted = connection.execute(_INSERT_BODY, (item.hash, item.text, now)).rowcount
    if inserted:  # a new body: no fragment can refer to it yet
        rows = item.fragments
        if rows is None:
            rows = fragment_rows(item.parsed, item.title)
        _insert_fragment_rows(connection, item.hash, rows)


def _insert_fragments(
    connection: Connection, body_hash: str, parsed: ParsedMarkdown, title: str
) -> None:
    """(Re)build the fragments of a stored body."""
    from memtrove.index.preparing import fragment_rows

    connection.execute("DELETE FROM fragments WHERE hash = ?", (body_hash,))
    _insert_fragment_rows(connection, body_hash, fragment_rows(parsed, title))


def _insert_fragment_rows(connection: Connection, body_hash: str, rows: list[FragmentRow]) -> None:
    connection.executemany(_INSERT_FRAGMENT, [(body_hash, *row) for row in rows])


_DOCUMENT_COLUMNS = (
    "id",
    "collection",
    "path",
    "title",
    "hash",
    "docid",
    "content_type",
    "quality_score",
    "confidence",
    "created_at",
    "active",
    "modified_at",  # from here on: _file_values
    "authored_at",
    "tags",
    "review_by",
    "domain",
    "workstream",
    "body_length",
    "file_size",
    "file_mtime_ns",
)


def _insert_document(
    connection: Connection, collection: str, item: Prepared, now: str, docid: str | None = None
) -> int:
    """A new document row (with the free ``docid`` when the caller holds one) and its
    full-text rows; its id."""
    docid = free_docid(connection, item.hash) if docid is None else docid
    [doc_id] = _insert_documents(connection, collection, [(item, docid)], now)
    return doc_id


def _insert_documents(
    connection: Connection, collection: str, items: Sequence[tuple[Prepared, str]], now: str
) -> list[int]:
    """New document rows (each with its free docid), inserted together, and their
    full-text rows; their ids, in order."""
    from memtrove.index.classify import confidence_baseline

    # Their ids as the database would give them one by one (the largest + 1: SQLite's
    # rowid rule, which the PostgreSQL schema follows), so that they go in together with
    # the fastest insert the engine has; the write transaction keeps other writers out.
    row = connection.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM documents").fetchone()
    doc_ids = list(range(int(row[0]), int(row[0]) + len(items)))
    connection.insert_rows(
        "documents",
        _DOCUMENT_COLUMNS,
        [
            (
                doc_id,
                collection,
                item.file.path,
                item.title,
                item.hash,
                docid,
                item.content_type,
                item.quality,
                confidence_baseline(item.content_type),
                now,
                1,
                *_file_values(item),
            )
            for doc_id, (item, docid) in zip(doc_ids, items, strict=True)
        ],
    )
    for doc_id, (item, _) in zip(doc_ids, items, strict=True):
        _index_text(connection, doc_id, collection, item)
    return doc_ids


def _file_values(item: Prepared) -> tuple[object, ...]:
    """What both statements set from the item's file: ``modified_at, authored_at, tags,
    review_by, domain, workstream, body_length, file_size, file_mtime_ns``."""
    return (
        iso_from_timestamp(item.file.mtime_ns / 1e9),
        item.authored_at,
        item.tags,
        item.review_by,
        item.domain,
        item.workstream,
        len(item.parsed.body),
        item.file.size,
        item.file.mtime_ns,
    )


def _write_document(
    connection: Connection,
    doc_id: int,
    item: Prepared,
    collection: str,
    now: str,
    *,
    revision: bool,
) -> None:
    """Point an existing row (same path, or a renamed file) at the item's body.

    The row keeps its docid: one given at insert stays for the document's life (see
    :mod:`memtrove.index.documents`), so a docid an agent holds survives edits and renames.
    """
    from memtrove.index.classify import confidence_baseline

    old = connection.execute(
        "SELECT content_type, confidence FROM documents WHERE id = ?", (doc_id,)
    ).fetchone()
    confidence = float(old[1])
    if str(old[0]) != item.content_type:
        confidence = confidence_baseline(item.content_type)
    connection.execute(
        "UPDATE documents SET path = ?, title = ?, hash = ?, content_type = ?, "
        "quality_score = ?, confidence = ?, modified_at = ?, authored_at = ?, active = 1, "
        "forgotten_hash = NULL, tags = ?, review_by = ?, domain = ?, workstream = ?, "
        "body_length = ?, file_size = ?, file_mtime_ns = ?, "
        "revision_count = revision_count + ? WHERE id = ?",
        (
            item.file.path,
            item.title,
            item.hash,
            item.content_type,
            item.quality,
            confidence,
            *_file_values(item),
            1 if revision else 0,
            doc_id,
        ),
    )
    connection.text.remove_documents((doc_id,))
    drop_passages(connection, doc_id)
    _index_text(connection, doc_id, collection, item)


def _index_text(connection: Connection, doc_id: int, collection: str, item: Prepared) -> None:
    write_text_rows(
        connection,
        doc_id,
        f"{collection}/{item.file.path}",
        item.title,
        item.parsed.body,
        item.hash,
        item.text,
        tokens=item.tokens,
    )


def write_text_rows(
    connection: Connection,
    doc_id: int,
    filepath: str,
    title: str,
    body: str,
    body_hash: str,
    text: str,
    *,
    tokens: Tokenized | None = None,
) -> None:
    """Document ``doc_id``'s full-text row and passages (``body`` without its frontmatter,
    ``text`` the stored body whose hash is ``body_hash``; ``tokens`` its row tokenized
    beforehand, if it was); inside the caller's transaction."""
    connection.text.add_documents(((doc_id, filepath, title, body),), tokens=(tokens,))
    write_passages(connection, doc_id, body_hash, text)
