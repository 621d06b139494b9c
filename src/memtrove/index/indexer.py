"""Incremental indexing of collections into the vault.

One pass per collection:

1. walk the folder (stat only) and compare each file's size and mtime with what the vault
   recorded: an unchanged file costs a stat, never a read;
2. read, parse and classify the changed and new files outside any transaction, then write
   them in batches, one short ``BEGIN IMMEDIATE`` transaction each, re-reading each row
   inside the transaction so two concurrent updates never trip over each other;
3. a new path whose body matches a document that disappeared in the same pass is a rename:
   the row moves, keeping its id, history, pin and counters;
4. documents whose files are gone, or now excluded by the collection's ``exclude`` globs,
   are deactivated (never deleted), except those under a folder that could not be listed or
   whose file could not be read;
5. a forgotten document (``Vault.forget``) stays inactive while its file keeps the body it
   had when forgotten, wherever the file moves; a new body brings it back.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from memtrove.db.connection import Connection, write_transaction
from memtrove.db.fts_totals import settle_fts_totals
from memtrove.db.passages import drop_passages, write_passages
from memtrove.index.documents import free_docid
from memtrove.index.scanner import FileEntry, scan_collection
from memtrove.results import Collection, FileIssue, UpdateReport
from memtrove.security.redaction import DEFAULT as DEFAULT_REDACTOR
from memtrove.security.redaction import Redactor
from memtrove.text import iso_from_timestamp, now_iso, segment_cjk

if TYPE_CHECKING:
    # What only a write needs (parsing, classifying, the links, the reading helpers) loads
    # with the first file that changed: a no-change re-run never imports it.
    from memtrove.graph.links import WrittenDocument
    from memtrove.index.markdown import ParsedMarkdown
    from memtrove.index.preparing import FragmentRow, Prepared

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "ProgressCallback",
    "deactivate_collection",
    "deactivate_documents",
    "update_collections",
    "write_text_rows",
]

DEFAULT_BATCH_SIZE = 200
ProgressCallback = Callable[[int, int, str], None]  # (files done, files total, current path)


class _LinkPass:
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


class _Row(NamedTuple):
    id: int
    hash: str
    size: int | None
    mtime_ns: int | None
    active: bool
    forgotten_hash: str | None = None


def update_collections(
    connection: Connection,
    collections: Sequence[Collection],
    *,
    progress: ProgressCallback | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    redactor: Redactor = DEFAULT_REDACTOR,
) -> UpdateReport:
    """Bring every collection's documents in line with its folder; see the module doc.
    Bodies pass ``redactor`` before anything is stored, unless the collection says
    ``redact: false``."""
    started = time.monotonic()
    report = UpdateReport()
    for collection in collections:
        engine = redactor if collection.redact else None
        _update_one(connection, collection, report, progress, max(1, batch_size), engine)
    _build_missing_fragments(connection)
    # deleted full-text rows (edits, removals, agent memories rewritten) leave FTS5's BM25
    # totals inflated: recount them when they drifted
    settle_fts_totals(connection, ("documents_fts", "passages_fts"))
    report.elapsed_seconds = round(time.monotonic() - started, 3)
    return report


def deactivate_collection(connection: Connection, name: str) -> int:
    """Deactivate every document of a collection (used when it is removed)."""
    with write_transaction(connection):
        ids = [
            int(row[0])
            for row in connection.execute(
                "SELECT id FROM documents WHERE collection = ? AND active = 1", (name,)
            )
        ]
        deactivate_documents(connection, ids)
    return len(ids)


def _update_one(
    connection: Connection,
    collection: Collection,
    report: UpdateReport,
    progress: ProgressCallback | None,
    batch_size: int,
    redactor: Redactor | None,
) -> None:
    scan = scan_collection(collection.path, collection.pattern, collection.exclude)
    if scan.root_missing:
        report.warnings.append(
            f"collection {collection.name!r}: folder {collection.path} does not exist; "
            "its documents are kept as they were"
        )
        return
    for path, reason, detail in scan.skipped:
        report.skipped.append(FileIssue(collection.name, path, reason, detail))
    existing = _existing_rows(connection, collection.name)
    kept = set(scan.unreadable_files)
    seen = {file.path for file in scan.files} | kept
    kept_dirs = tuple(prefix + "/" for prefix in scan.unreadable_dirs if prefix)
    root_unreadable = "" in scan.unreadable_dirs

    to_read: list[FileEntry] = []
    for file in scan.files:
        row = existing.get(file.path)
        settled = row is not None and (row.active or row.forgotten_hash is not None)
        if row and settled and row.size == file.size and row.mtime_ns == file.mtime_ns:
            report.unchanged += 1
        else:
            to_read.append(file)
    missing: dict[str, _Row] = {
        path: row
        for path, row in existing.items()
        if row.active
        and path not in seen
        and not root_unreadable
        and not path.startswith(kept_dirs)
    }
    missing_by_hash: dict[str, list[str]] = {}
    for path, row in missing.items():
        missing_by_hash.setdefault(row.hash, []).append(path)
    # Forgotten documents whose file is gone: a file with the same body elsewhere is that
    # document moved, and stays forgotten.
    forgotten_by_hash: dict[str, list[int]] = {}
    for path, row in existing.items():
        if (
            row.forgotten_hash is not None
            and not row.active
            and path not in seen
            and not root_unreadable
            and not path.startswith(kept_dirs)
        ):
            forgotten_by_hash.setdefault(row.forgotten_hash, []).append(row.id)

    if not (to_read or missing):
        return  # nothing changed, nothing left: nothing to read, write or resolve
    from memtrove.graph.links import links_stored, resolve_links
    from memtrove.index.workers import prepared_batches

    total = len(to_read)
    done = 0
    links = _LinkPass(links_stored(connection))
    for batch, outcomes in prepared_batches(collection, to_read, batch_size, redactor):
        prepared: list[Prepared] = []
        for file, outcome in zip(batch, outcomes, strict=True):
            report.skipped.extend(outcome.skipped)
            report.notices.extend(outcome.notices)
            if outcome.unreadable:
                kept.add(file.path)
            if outcome.item is not None:
                prepared.append(outcome.item)
            elif file.path not in kept and file.path in existing:
                missing[file.path] = existing[file.path]  # now binary or too large
        if prepared:
            _write_batch(
                connection,
                collection.name,
                prepared,
                (missing, missing_by_hash, forgotten_by_hash),
                report,
                links,
            )
        done += len(batch)
        if progress is not None:
            progress(done, total, batch[-1].path)
    # Files skipped by policy (excluded, too large, binary, now a symlink) leave the index;
    # files that could not be read keep their documents.
    gone = [row.id for path, row in missing.items() if path not in kept and row.active]
    if gone:
        with write_transaction(connection):
            report.removed += deactivate_documents(connection, gone)
        links.moved.update(gone)
    if links.enabled and (links.wrote_any or links.moved):
        with write_transaction(connection):
            resolve_links(connection, collection.name, links.moved)


def _existing_rows(connection: Connection, collection: str) -> dict[str, _Row]:
    rows = connection.execute(
        "SELECT path, id, hash, file_size, file_mtime_ns, active, forgotten_hash FROM documents "
        "WHERE collection = ?",
        (collection,),
    )
    # The columns are typed (NOT NULL id, hash, path; 0/1 active): no conversion per row.
    return {
        path: _Row(doc_id, body_hash, size, mtime_ns, active == 1, forgotten)
        for path, doc_id, body_hash, size, mtime_ns, active, forgotten in rows
    }


def _write_batch(
    connection: Connection,
    collection: str,
    prepared: list[Prepared],
    vanished: tuple[dict[str, _Row], dict[str, list[str]], dict[str, list[int]]],
    report: UpdateReport,
    links: _LinkPass,
) -> None:
    missing, missing_by_hash, forgotten_by_hash = vanished
    now = now_iso()
    with write_transaction(connection):
        for item in prepared:
            row = connection.execute(
                "SELECT id, hash, active, forgotten_hash FROM documents "
                "WHERE collection = ? AND path = ?",
                (collection, item.file.path),
            ).fetchone()
            _store_content(connection, item, now)
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
                    links.wrote(
                        _insert_document(connection, collection, item, now), item, moved=True
                    )
                    report.added += 1
                continue
            doc_id, old_hash, active = int(row[0]), str(row[1]), bool(row[2])
            if not active and row[3] == item.hash:  # forgotten, and the body is unchanged
                connection.execute(
                    "UPDATE documents SET file_size = ?, file_mtime_ns = ? WHERE id = ?",
                    (item.file.size, item.file.mtime_ns, doc_id),
                )
                report.unchanged += 1
                continue
            if old_hash == item.hash and active:
                connection.execute(
                    "UPDATE documents SET file_size = ?, file_mtime_ns = ? WHERE id = ?",
                    (item.file.size, item.file.mtime_ns, doc_id),
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
        links.flush(connection)


def _take_renamed(
    connection: Connection,
    collection: str,
    body_hash: str,
    missing: dict[str, _Row],
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

    inserted = connection.execute(
        "INSERT OR IGNORE INTO content (hash, doc, created_at) VALUES (?, ?, ?)",
        (item.hash, item.text, now),
    ).rowcount
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
    connection.executemany(
        "INSERT INTO fragments (hash, seq, fragment_type, label, start_offset, end_offset) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [(body_hash, *row) for row in rows],
    )


def _insert_document(connection: Connection, collection: str, item: Prepared, now: str) -> int:
    from memtrove.index.classify import confidence_baseline

    cursor = connection.execute(
        "INSERT INTO documents (collection, path, title, hash, docid, content_type, "
        "quality_score, confidence, created_at, modified_at, authored_at, active, tags, "
        "body_length, file_size, file_mtime_ns) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)",
        (
            collection,
            item.file.path,
            item.title,
            item.hash,
            free_docid(connection, item.hash),
            item.content_type,
            item.quality,
            confidence_baseline(item.content_type),
            now,
            iso_from_timestamp(item.file.mtime_ns / 1e9),
            item.authored_at,
            item.tags,
            len(item.parsed.body),
            item.file.size,
            item.file.mtime_ns,
        ),
    )
    doc_id = int(cursor.lastrowid or 0)
    _index_text(connection, doc_id, collection, item)
    return doc_id


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
        "forgotten_hash = NULL, tags = ?, body_length = ?, file_size = ?, file_mtime_ns = ?, "
        "revision_count = revision_count + ? WHERE id = ?",
        (
            item.file.path,
            item.title,
            item.hash,
            item.content_type,
            item.quality,
            confidence,
            iso_from_timestamp(item.file.mtime_ns / 1e9),
            item.authored_at,
            item.tags,
            len(item.parsed.body),
            item.file.size,
            item.file.mtime_ns,
            1 if revision else 0,
            doc_id,
        ),
    )
    connection.execute("DELETE FROM documents_fts WHERE rowid = ?", (doc_id,))
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
    )


def write_text_rows(
    connection: Connection,
    doc_id: int,
    filepath: str,
    title: str,
    body: str,
    body_hash: str,
    text: str,
) -> None:
    """Document ``doc_id``'s full-text row and passages (``body`` without its frontmatter,
    ``text`` the stored body whose hash is ``body_hash``); inside the caller's transaction."""
    connection.execute(
        "INSERT INTO documents_fts (rowid, filepath, title, body) VALUES (?, ?, ?, ?)",
        (doc_id, filepath, segment_cjk(title), segment_cjk(body)),
    )
    write_passages(connection, doc_id, body_hash, text)


def deactivate_documents(connection: Connection, ids: Sequence[int]) -> int:
    """Take documents out of search (their rows and text stay); call inside a transaction.

    Their ``reference`` edges and link rows go with them (:func:`forget_links`).
    Returns how many were active.
    """
    from memtrove.graph.links import forget_links, links_stored

    count = 0
    for doc_id in ids:
        changed = connection.execute(
            "UPDATE documents SET active = 0 WHERE id = ? AND active = 1", (doc_id,)
        ).rowcount
        if changed:
            connection.execute("DELETE FROM documents_fts WHERE rowid = ?", (doc_id,))
            drop_passages(connection, doc_id)
            count += 1
    if ids and links_stored(connection):
        forget_links(connection, ids)
    return count


def _build_missing_fragments(connection: Connection) -> None:
    """Give fragments to bodies that have none (vaults indexed before fragments existed)."""
    # One index probe per body first (a few ms at 10k bodies): the join below costs several
    # times that, and a vault almost never has a body without fragments.
    bare = connection.execute(
        "SELECT 1 FROM content c "
        "WHERE NOT EXISTS (SELECT 1 FROM fragments f WHERE f.hash = c.hash) LIMIT 1"
    ).fetchone()
    if bare is None:
        return
    from memtrove.index.markdown import parse_markdown

    rows = connection.execute(
        "SELECT c.hash, c.doc, MIN(d.title) FROM content c JOIN documents d ON d.hash = c.hash "
        "WHERE d.active = 1 AND NOT EXISTS (SELECT 1 FROM fragments f WHERE f.hash = c.hash) "
        "GROUP BY c.hash"
    ).fetchall()
    for start in range(0, len(rows), DEFAULT_BATCH_SIZE):
        with write_transaction(connection):
            for body_hash, text, title in rows[start : start + DEFAULT_BATCH_SIZE]:
                _insert_fragments(connection, str(body_hash), parse_markdown(str(text)), str(title))
