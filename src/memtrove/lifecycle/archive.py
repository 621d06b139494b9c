"""Archiving documents, finding archived ones, restoring them, and purging them for good.

An archived document is inactive (``active = 0``, ``archived_at`` set, ``forgotten_hash`` =
its body so ``update`` keeps an unchanged file archived) and its full-text row lives in
the ``archived`` text index instead of ``documents``: every search, the graph and the hooks read
active documents only, so it leaves all of them, while its body, fragments, vectors (keyed
by body), relations, pin and counters stay untouched for :func:`restore_documents`.

An archived document whose file is edited is indexed again by ``update`` (it is in use);
:func:`settle` then drops its stale archive marks. Writes go in batches of
:data:`BATCH` documents, one ``BEGIN IMMEDIATE`` transaction each.

The text index may not take a deleted row out of its BM25 totals (its row count and tokens
per column; SQLite's FTS5 does not): left alone, a sweep and a restore of 7,000 documents
would leave the index counting 17,000 rows and every score shifted. After each operation
one more short transaction recounts the totals of the indexes it changed
(``connection.text.recount_totals``), so a restored vault ranks as before its sweep. It
must run after the transactions that wrote the rows: FTS5 writes the totals it holds in
memory when such a transaction commits.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from memtrove.db.connection import Connection, OperationalError, write_transaction
from memtrove.db.passages import drop_passages, write_passages
from memtrove.errors import InvalidQueryError
from memtrove.index.markdown import parse_markdown
from memtrove.results.lifecycle import ArchivedDocument, PurgeReport, RestoreReport
from memtrove.text import to_iso

__all__ = [
    "ARCHIVED",
    "BATCH",
    "archive_documents",
    "archived_ids",
    "drop_archive_marks",
    "purge_documents",
    "restore_documents",
    "search_archived",
    "settle",
]

BATCH = 500
ARCHIVED = "active = 0 AND archived_at IS NOT NULL"


def _fts_row(connection: Connection, doc_id: int) -> tuple[str, str, str] | None:
    """The full-text columns of a document, as the indexer writes them."""
    row = connection.execute(
        "SELECT d.collection || '/' || d.path, d.title, c.doc FROM documents d "
        "JOIN content c ON c.hash = d.hash WHERE d.id = ?",
        (doc_id,),
    ).fetchone()
    if row is None:
        return None
    body = parse_markdown(str(row[2])).body
    return str(row[0]), str(row[1]), body


def archive_documents(
    connection: Connection, reasons: Sequence[tuple[int, str]], now: datetime
) -> int:
    """Archive the active documents of ``reasons`` (id, why); how many were archived."""
    stamp = to_iso(now)
    archived = 0
    for start in range(0, len(reasons), BATCH):
        with write_transaction(connection):
            for doc_id, reason in reasons[start : start + BATCH]:
                text = _fts_row(connection, doc_id)
                changed = connection.execute(
                    "UPDATE documents SET active = 0, archived_at = ?, archive_reason = ?, "
                    "forgotten_hash = hash WHERE id = ? AND active = 1",
                    (stamp, reason, doc_id),
                ).rowcount
                if not changed or text is None:
                    continue
                connection.text.remove_documents((doc_id,))
                drop_passages(connection, doc_id)
                connection.text.remove_documents((doc_id,), index="archived")
                connection.text.add_documents(((doc_id, *text),), index="archived")
                archived += 1
    if archived:
        connection.text.recount_totals(("documents", "passages"))
    return archived


def drop_archive_marks(connection: Connection, doc_id: int) -> bool:
    """Make an archived document plain inactive (call inside a transaction); whether it was
    archived. Forgetting wins over archiving: a forgotten document must not come back with
    ``lifecycle restore``, so its archive marks and ``archived`` text row go. The caller
    recounts the ``archived`` index's totals after its transaction commits."""
    changed = connection.execute(
        "UPDATE documents SET archived_at = NULL, archive_reason = NULL "
        f"WHERE id = ? AND {ARCHIVED}",
        (doc_id,),
    ).rowcount
    if changed:
        connection.text.remove_documents((doc_id,), index="archived")
    return bool(changed)


def settle(connection: Connection) -> None:
    """Drop the archive marks of documents ``update`` brought back (their files changed)."""
    stale = connection.execute(
        "SELECT 1 FROM documents WHERE active = 1 AND archived_at IS NOT NULL LIMIT 1"
    ).fetchone()
    if stale is None:
        return
    with write_transaction(connection):
        brought_back = connection.execute(
            "SELECT id FROM documents WHERE active = 1 AND archived_at IS NOT NULL"
        ).fetchall()
        connection.text.remove_documents((int(row[0]) for row in brought_back), index="archived")
        connection.execute(
            "UPDATE documents SET archived_at = NULL, archive_reason = NULL "
            "WHERE active = 1 AND archived_at IS NOT NULL"
        )
    connection.text.recount_totals(("archived",))


def archived_ids(
    connection: Connection,
    *,
    collection: str | None = None,
    query: str | None = None,
    older_than: str | None = None,
) -> list[int]:
    """Ids of archived documents: all, or those of ``collection``, matching ``query`` (as
    :func:`search_archived`, every match) or archived before ``older_than`` (ISO time)."""
    where = [ARCHIVED]
    parameters: list[object] = []
    if collection is not None:
        where.append("collection = ?")
        parameters.append(collection)
    if older_than is not None:
        where.append("archived_at < ?")
        parameters.append(older_than)
    if query is not None:
        matched = [hit for hit, _ in _match(connection, query, None)]
        if not matched:
            return []
        where.append(f"id IN ({','.join('?' * len(matched))})")
        parameters.extend(matched)
    rows = connection.execute(
        f"SELECT id FROM documents WHERE {' AND '.join(where)} ORDER BY id", parameters
    ).fetchall()
    return [int(row[0]) for row in rows]


def _match(connection: Connection, query: str, limit: int | None) -> list[tuple[int, float]]:
    from memtrove.retrieval.fts import normalize_bm25, parse_query

    parsed = parse_query(query)
    if parsed.empty:
        raise InvalidQueryError(f"nothing to search for in {query!r}")
    try:
        rows = connection.text.search(
            parsed,
            limit,
            index="archived",
            conditions=("d.active = 0", "d.archived_at IS NOT NULL"),
        )
    except (InvalidQueryError, OperationalError) as error:
        raise InvalidQueryError(f"cannot search for {query!r}: {error}") from None
    from memtrove.lifecycle.archive_scores import vault_scores

    # The archive's own IDF is clamped to ~0 for any term most archived documents share
    # (every score read 0.00): score with the vault's IDF instead (see archive_scores).
    scores = vault_scores(connection, parsed, (int(doc) for doc, _ in rows))
    ranked = sorted(rows, key=lambda row: -scores[int(row[0])])  # stable: ties keep order
    return [(int(doc), normalize_bm25(scores[int(doc)])) for doc, _ in ranked]


def search_archived(connection: Connection, query: str, limit: int) -> list[ArchivedDocument]:
    """Archived documents matching ``query`` (the search syntax), best BM25 first."""
    hits = _match(connection, query, limit)
    if not hits:
        return []
    scores = dict(hits)
    rows = connection.execute(
        "SELECT id, docid, collection, path, title, content_type, archived_at, archive_reason "
        f"FROM documents WHERE id IN ({','.join('?' * len(scores))})",
        list(scores),
    ).fetchall()
    by_id = {int(row[0]): row for row in rows}
    return [
        ArchivedDocument(
            docid=str(row[1]),
            collection=str(row[2]),
            path=str(row[3]),
            title=str(row[4]),
            content_type=str(row[5]),
            archived_at=str(row[6]),
            reason=None if row[7] is None else str(row[7]),
            score=round(scores[doc_id], 4),
        )
        for doc_id, _ in hits
        if (row := by_id.get(doc_id)) is not None
    ]


def restore_documents(connection: Connection, ids: Sequence[int]) -> RestoreReport:
    """Make archived documents active again, their full-text rows back in search."""
    restored: list[str] = []
    for start in range(0, len(ids), BATCH):
        with write_transaction(connection):
            for doc_id in ids[start : start + BATCH]:
                row = connection.execute(
                    f"SELECT collection || '/' || path FROM documents WHERE id = ? AND {ARCHIVED}",
                    (doc_id,),
                ).fetchone()
                text = None if row is None else _fts_row(connection, doc_id)
                if row is None or text is None:
                    continue
                connection.execute(
                    "UPDATE documents SET active = 1, archived_at = NULL, archive_reason = NULL, "
                    "forgotten_hash = NULL WHERE id = ?",
                    (doc_id,),
                )
                connection.text.remove_documents((doc_id,), index="archived")
                connection.text.remove_documents((doc_id,))
                connection.text.add_documents(((doc_id, *text),))
                drop_passages(connection, doc_id)
                body = connection.execute("SELECT hash FROM documents WHERE id = ?", (doc_id,))
                write_passages(connection, doc_id, str(body.fetchone()[0]))
                restored.append(str(row[0]))
    if restored:
        connection.text.recount_totals(("documents", "archived", "passages"))
    return RestoreReport(restored=len(restored), documents=restored)


def purge_documents(connection: Connection, ids: Sequence[int]) -> PurgeReport:
    """Delete archived documents for good; a body no other document shares goes too, with
    its fragments and vectors. Ids that are not archived are left alone."""
    from memtrove.retrieval.vectors import delete_vectors

    purged: list[str] = []
    bodies = 0
    for start in range(0, len(ids), BATCH):
        with write_transaction(connection):
            hashes: set[str] = set()
            for doc_id in ids[start : start + BATCH]:
                row = connection.execute(
                    f"SELECT collection || '/' || path, hash FROM documents WHERE id = ? "
                    f"AND {ARCHIVED} AND NOT EXISTS "
                    "(SELECT 1 FROM memory_entries e WHERE e.doc_id = documents.id)",
                    (doc_id,),
                ).fetchone()
                if row is None:
                    continue
                connection.text.remove_documents((doc_id,), index="archived")
                connection.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
                purged.append(str(row[0]))
                hashes.add(str(row[1]))
            for body_hash in sorted(hashes):
                shared = connection.execute(
                    "SELECT 1 FROM documents WHERE hash = ? LIMIT 1", (body_hash,)
                ).fetchone()
                if shared is not None:
                    continue
                delete_vectors(connection, body_hash)
                connection.execute("DELETE FROM fragments WHERE hash = ?", (body_hash,))
                connection.execute("DELETE FROM content WHERE hash = ?", (body_hash,))
                bodies += 1
    if purged:
        connection.text.recount_totals(("archived",))
    return PurgeReport(purged=len(purged), bodies=bodies, documents=purged)
