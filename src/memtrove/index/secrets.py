"""Secrets already stored in a vault: found for ``doctor``, rewritten by ``memtrove redact``.

Vaults written before redaction existed (or with a collection that was verbatim, or before
a pattern was added) can hold secrets. :func:`stored_secrets` reads every stored body and
every other stored text column and counts what the redaction engine finds; with
``apply=True`` it rewrites them in place:

- a body is redacted where it is stored (its hash stays its name), then its fragments are
  split again, its vectors dropped (the next ``embed`` makes them from the redacted text),
  and its documents' titles and full-text rows rewritten;
- an old body no document points at any more is deleted;
- other text (memory entry versions, rules and their matchers and provenance, hook prompts,
  session summaries, graph literals) is rewritten; cached model answers holding one are
  deleted;
- deleted and rewritten pages are zeroed (``secure_delete``), the full-text index is merged
  so no old segment keeps a secret as a term, and the WAL is checkpointed: the secret is
  gone from the file, not only from what queries return.

Collections set ``redact: false`` are left as they are. Work is done in batches, one short
write transaction each.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterable

from memtrove.db.connection import Connection, write_transaction
from memtrove.db.passages import drop_passages
from memtrove.index.markdown import document_title, parse_markdown
from memtrove.index.preparing import Prepared
from memtrove.index.scanner import FileEntry
from memtrove.index.writing import _index_text, _insert_fragments
from memtrove.results import SecretsReport
from memtrove.security.redaction import Finding, Redactor

__all__ = ["TEXT_COLUMNS", "stored_secrets"]

BATCH = 200
MAX_REFS = 50
# Stored text other than bodies: (table, columns). Cached answers are deleted, not rewritten.
TEXT_COLUMNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("memory_entries", ("label",)),
    ("memory_entry_versions", ("label", "content")),
    ("predictions", ("statement", "rationale")),
    ("behaviors", ("statement", "rationale")),
    ("prediction_matchers", ("description",)),
    ("behavior_matchers", ("description",)),
    ("prediction_provenance", ("detail",)),
    ("behavior_provenance", ("detail",)),
    ("context_usage", ("query_text",)),
    ("hook_dedupe", ("prompt_preview",)),
    ("session_log", ("summary", "files_changed")),
    ("entity_nodes", ("name", "description")),
    ("entity_triples", ("object_literal", "source_fact")),
    ("memory_relations", ("metadata",)),
    ("documents", ("amem_keywords", "amem_tags", "amem_context")),
    (
        "memory_evolution",
        ("previous_keywords", "new_keywords", "previous_context", "new_context", "reasoning"),
    ),
    ("document_links", ("link_text",)),
)
ENTITY_NAMES = "entities_fts"  # the entity names of the text index, reported under this name
CACHE_TABLE = ("llm_cache", "result")


def stored_secrets(
    connection: Connection,
    engine: Redactor,
    *,
    verbatim: Collection[str] = (),
    apply: bool = False,
) -> SecretsReport:
    """Count (and with ``apply`` rewrite) the secrets stored in the vault; see the module
    doc. ``verbatim``: collections whose bodies are kept as they are."""
    report = SecretsReport(applied=apply)
    with connection.catalog.secure_delete() if apply else contextlib.nullcontext():
        _bodies(connection, engine, set(verbatim), report, apply)
        for table, columns in TEXT_COLUMNS:
            for column in columns:
                _column(connection, engine, table, column, report, apply)
        _entity_names(connection, engine, report, apply)
        _cache(connection, engine, report, apply)
        if apply and report.total:
            with write_transaction(connection):
                # old segments of the index still hold the text
                connection.text.compact(("documents", "passages"))
            connection.catalog.checkpoint(truncate=True)
    return report


def _count(report: SecretsReport, findings: Iterable[Finding]) -> int:
    found = 0
    for finding in findings:
        report.kinds[finding.kind] = report.kinds.get(finding.kind, 0) + 1
        found += 1
    return found


def _bodies(
    connection: Connection,
    engine: Redactor,
    verbatim: set[str],
    report: SecretsReport,
    apply: bool,
) -> None:
    # A body every referencing document of which is verbatim stays as it is.
    kept = (
        {
            str(row[0])
            for row in connection.execute(
                "SELECT hash FROM documents GROUP BY hash "
                f"HAVING SUM(CASE WHEN collection IN ({','.join('?' * len(verbatim))}) "
                "THEN 0 ELSE 1 END) = 0",
                tuple(verbatim),
            )
        }
        if verbatim
        else set()
    )
    found: list[tuple[str, str]] = []
    for body_hash, text in connection.execute("SELECT hash, doc FROM content"):
        if str(body_hash) not in kept and _count(report, engine.findings(str(text))):
            found.append((str(body_hash), str(text)))
    for body_hash, _text in found:
        refs = connection.execute(
            "SELECT collection, path FROM documents WHERE hash = ? ORDER BY id", (body_hash,)
        ).fetchall()
        if refs:
            report.documents += 1
            room = MAX_REFS - len(report.refs)
            report.refs.extend(f"{c}/{p}" for c, p in refs[: max(0, room)])
        else:
            report.rows["content (old bodies)"] = report.rows.get("content (old bodies)", 0) + 1
    if apply:
        for start in range(0, len(found), BATCH):
            with write_transaction(connection):
                for body_hash, text in found[start : start + BATCH]:
                    _rewrite_body(connection, engine, body_hash, text)


def _rewrite_body(connection: Connection, engine: Redactor, body_hash: str, text: str) -> None:
    from memtrove.retrieval.vectors import delete_vectors

    delete_vectors(connection, body_hash)
    documents = connection.execute(
        "SELECT id, collection, path, active FROM documents WHERE hash = ?", (body_hash,)
    ).fetchall()
    if not documents:
        connection.execute("DELETE FROM content WHERE hash = ?", (body_hash,))
        return
    redacted = engine.redact(text)
    parsed = parse_markdown(redacted)
    connection.execute("UPDATE content SET doc = ? WHERE hash = ?", (redacted, body_hash))
    # The fragments first: the passages of each document are cut along them.
    _insert_fragments(connection, body_hash, parsed, document_title(parsed, str(documents[0][2])))
    for doc_id, collection, path, active in documents:
        title = document_title(parsed, str(path))
        connection.execute(
            "UPDATE documents SET title = ?, body_length = ?, embed_state = 'pending', "
            "embed_attempts = 0, embed_error = NULL WHERE id = ?",
            (title, len(parsed.body), doc_id),
        )
        connection.text.remove_documents((doc_id,))
        drop_passages(connection, int(doc_id))
        if active:
            item = Prepared(
                file=FileEntry(path=str(path), absolute="", size=0, mtime_ns=0),
                text=redacted,
                hash=body_hash,
                parsed=parsed,
                title=title,
                content_type="",
                quality=0.0,
                authored_at=None,
                tags=None,
            )
            _index_text(connection, int(doc_id), str(collection), item)


def _column(
    connection: Connection,
    engine: Redactor,
    table: str,
    column: str,
    report: SecretsReport,
    apply: bool,
) -> None:
    if not _has_table(connection, table):
        return
    keys = _keys(connection, table)
    where = " AND ".join(f"{key} = ?" for key in keys)
    changes: list[tuple[object, ...]] = []
    for row in connection.execute(
        f"SELECT {', '.join(keys)}, {column} FROM {table} "
        f"WHERE {column} IS NOT NULL AND {column} != ''"
    ):
        text = row[-1]
        if isinstance(text, str) and _count(report, engine.findings(text)):
            report.rows[table] = report.rows.get(table, 0) + 1
            changes.append((engine.redact(text), *row[:-1]))
    if apply:
        for start in range(0, len(changes), BATCH):
            with write_transaction(connection):
                connection.executemany(
                    f"UPDATE {table} SET {column} = ? WHERE {where}", changes[start : start + BATCH]
                )


def _keys(connection: Connection, table: str) -> list[str]:
    """How rows of ``table`` are named: its primary key (every vault table has one)."""
    return connection.catalog.primary_key(table)


def _entity_names(
    connection: Connection, engine: Redactor, report: SecretsReport, apply: bool
) -> None:
    changes = [
        (str(entity_id), engine.redact(str(name)))
        for _, entity_id, name, _ in connection.text.entity_rows()
        if isinstance(name, str) and _count(report, engine.findings(name))
    ]
    if changes:
        report.rows[ENTITY_NAMES] = len(changes)
    if apply:
        for start in range(0, len(changes), BATCH):
            with write_transaction(connection):
                for entity_id, name in changes[start : start + BATCH]:
                    connection.text.rename_entity(entity_id, name)


def _cache(connection: Connection, engine: Redactor, report: SecretsReport, apply: bool) -> None:
    table, column = CACHE_TABLE
    if not _has_table(connection, table):
        return
    doomed = [
        str(key)
        for key, text in connection.execute(f"SELECT hash, {column} FROM {table}")
        if isinstance(text, str) and _count(report, engine.findings(text))
    ]
    if doomed:
        report.rows[table] = len(doomed)
    if apply and doomed:
        with write_transaction(connection):
            connection.executemany(f"DELETE FROM {table} WHERE hash = ?", [(k,) for k in doomed])


def _has_table(connection: Connection, table: str) -> bool:
    return connection.catalog.has_table(table)
