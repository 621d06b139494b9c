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
5. a forgotten document (``Vault.curation.forget``) stays inactive while its file keeps the
   body it had when forgotten, wherever the file moves; a new body brings it back.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from memtrove.db.connection import Connection, fewer_checkpoints, write_transaction
from memtrove.db.passages import drop_passages
from memtrove.index.scanner import Recorded, scan_collection
from memtrove.index.writing import LinkPass, StoredRow, _insert_fragments, write_batch
from memtrove.index.writing import _insert_document as _insert_document
from memtrove.index.writing import _store_content as _store_content
from memtrove.index.writing import _write_document as _write_document
from memtrove.index.writing import write_text_rows as write_text_rows
from memtrove.results import Collection, FileIssue, UpdateReport

if TYPE_CHECKING:
    # What only a write needs (parsing, classifying, the links, the reading helpers) loads
    # with the first file that changed: a no-change re-run never imports it.
    from memtrove.index.preparing import Prepared
    from memtrove.security.redaction import Redactor

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "ProgressCallback",
    "deactivate_collection",
    "deactivate_documents",
    "update_collections",
    "write_text_rows",
]

DEFAULT_BATCH_SIZE = 200
BULK_FILES = 1000  # files to read from which an update writes as a bulk load
SERVER_BATCHES = 5  # batches a bulk load on a database server writes in one transaction
ProgressCallback = Callable[[int, int, str], None]  # (files done, files total, current path)


def update_collections(
    connection: Connection,
    collections: Sequence[Collection],
    *,
    progress: ProgressCallback | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    redactor: Redactor | Callable[[], Redactor] | None = None,
) -> UpdateReport:
    """Bring every collection's documents in line with its folder; see the module doc.
    Bodies pass ``redactor`` before anything is stored, unless the collection says
    ``redact: false``. ``redactor`` may be what builds it (called when the first file is
    read: a run with nothing to read never loads the engine); None is the default one."""
    started = time.monotonic()
    report = UpdateReport()
    built: list[Redactor] = []

    def shared_redactor() -> Redactor:  # built once, for the first collection that reads
        if not built:
            built.append(_resolve_redactor(redactor))
        return built[0]

    for collection in collections:
        redacting = shared_redactor if collection.redact else None
        _update_one(connection, collection, report, progress, max(1, batch_size), redacting)
    _build_missing_fragments(connection)
    # deleted full-text rows (edits, removals, agent memories rewritten) can leave the
    # index's BM25 totals inflated: recount them when they drifted
    connection.text.settle_totals(("documents", "passages"))
    report.elapsed_seconds = round(time.monotonic() - started, 3)
    return report


def _resolve_redactor(redactor: Redactor | Callable[[], Redactor] | None) -> Redactor:
    if redactor is None:
        from memtrove.security.redaction import DEFAULT

        return DEFAULT
    return redactor() if callable(redactor) else redactor


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
    redactor: Callable[[], Redactor] | None,
) -> None:
    """One collection's pass (module docstring); ``redactor`` builds the engine bodies pass,
    None to store them verbatim."""
    recorded = _recorded_files(connection, collection.name)
    known = len(recorded)
    scan = scan_collection(collection.path, collection.pattern, collection.exclude, recorded)
    if scan.root_missing:
        report.warnings.append(
            f"collection {collection.name!r}: folder {collection.path} does not exist; "
            "its documents are kept as they were"
        )
        return
    for path, reason, detail in scan.skipped:
        report.skipped.append(FileIssue(collection.name, path, reason, detail))
    report.unchanged += scan.unchanged
    to_read = scan.files
    if not (to_read or recorded):
        return  # every file as recorded, every record's file found: nothing to do
    # What is left in ``recorded``: documents whose file changed, went, or could not be
    # stat'ed. Only they and the files to read need their rows.
    unmatched = set(recorded)
    kept = set(scan.unreadable_files)
    seen = {file.path for file in to_read} | kept  # found, and not unchanged
    existing = _existing_rows(connection, collection.name, unmatched | seen, known)
    kept_dirs = tuple(prefix + "/" for prefix in scan.unreadable_dirs if prefix)
    root_unreadable = "" in scan.unreadable_dirs

    def vanished(path: str) -> bool:
        return (
            path in unmatched
            and path not in seen
            and not root_unreadable
            and not path.startswith(kept_dirs)
        )

    missing: dict[str, StoredRow] = {
        path: row for path, row in existing.items() if row.active and vanished(path)
    }
    missing_by_hash: dict[str, list[str]] = {}
    for path, row in missing.items():
        missing_by_hash.setdefault(row.hash, []).append(path)
    # Forgotten documents whose file is gone: a file with the same body elsewhere is that
    # document moved, and stays forgotten.
    forgotten_by_hash: dict[str, list[int]] = {}
    for path, row in existing.items():
        if row.forgotten_hash is not None and not row.active and vanished(path):
            forgotten_by_hash.setdefault(row.forgotten_hash, []).append(row.id)

    if not (to_read or missing):
        return  # nothing changed, nothing left: nothing to read, write or resolve
    from memtrove.graph.links import links_stored, resolve_links
    from memtrove.index.workers import prepared_batches

    total = len(to_read)
    done = 0
    links = LinkPass(links_stored(connection))
    engine = redactor() if redactor is not None and to_read else None
    # A first index writes many batches in a row: checkpoint the WAL less often meanwhile.
    bulk = fewer_checkpoints(connection) if total >= BULK_FILES else contextlib.nullcontext()
    if total >= BULK_FILES and connection.dialect == "postgresql":
        # each transaction on a server is a round trip and a text-index segment (one row
        # per term): a bulk load writes fewer, larger ones
        batch_size *= SERVER_BATCHES
    with bulk:
        tokenize = connection.text.takes_tokens
        for batch, outcomes in prepared_batches(collection, to_read, batch_size, engine, tokenize):
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
                write_batch(
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


def _recorded_files(connection: Connection, collection: str) -> Recorded:
    """``(size, mtime_ns)`` by path of the collection's settled documents (active, or
    forgotten): a file found just so is unchanged, and is not read."""
    rows = connection.execute(
        "SELECT path, file_size, file_mtime_ns FROM documents "
        "WHERE collection = ? AND (active = 1 OR forgotten_hash IS NOT NULL)",
        (collection,),
    )
    return {path: (size, mtime_ns) for path, size, mtime_ns in rows}


_ROW_COLUMNS = "path, id, hash, file_size, file_mtime_ns, active, forgotten_hash"
_PATHS_PER_QUERY = 500


def _existing_rows(
    connection: Connection, collection: str, paths: set[str], known: int
) -> dict[str, StoredRow]:
    """The rows of the collection at ``paths``, inactive first, then by id (the order of the
    collection's index, which decides which of two vanished documents with one body a
    rename takes): looked up by path when they are under half of the ``known`` rows, else
    every row of the collection read."""
    if 2 * len(paths) >= known:
        rows = connection.execute(
            f"SELECT {_ROW_COLUMNS} FROM documents WHERE collection = ? ORDER BY active, id",
            (collection,),
        ).fetchall()
    else:
        listed = sorted(paths)
        rows = []
        for start in range(0, len(listed), _PATHS_PER_QUERY):
            chunk = listed[start : start + _PATHS_PER_QUERY]
            rows += connection.execute(
                f"SELECT {_ROW_COLUMNS} FROM documents "
                f"WHERE collection = ? AND path IN ({','.join('?' * len(chunk))})",
                (collection, *chunk),
            )
        rows.sort(key=lambda row: (row[5], row[1]))  # active, id
    # The columns are typed (NOT NULL id, hash, path; 0/1 active): no conversion per row.
    return {
        path: StoredRow(doc_id, body_hash, size, mtime_ns, active == 1, forgotten)
        for path, doc_id, body_hash, size, mtime_ns, active, forgotten in rows
    }


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
            connection.text.remove_documents((doc_id,))
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
