"""The rows of a ClawMem vault besides its documents (see :mod:`memtrove.mine.clawmem_import`):
graph, sessions and recall, each written once (by its key, or a natural key where ClawMem's
is a row number), with document ids mapped to this vault's."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from memtrove.db.connection import Connection
from memtrove.lifecycle.sessions import update_recall_stats
from memtrove.text import parse_iso_datetime

__all__ = [
    "import_tables",
    "not_mapped_tables",
    "plain",
    "quoted",
    "skipped_rows",
    "table_kinds",
    "when",
]

# Tables (and their reasons) that are not brought over; any other unknown table is named too.
NOT_MAPPED = {
    "content_vectors": "vectors of another model: `--embed` embeds here",
    "vectors_vec": "vectors of another model: `--embed` embeds here",
    "embed_canary": "ClawMem's embedding probe",
    "vault_flags": "ClawMem's own flags",
    "llm_cache": "a cache of model answers",
    "intent_classifications": "a cache",
    "consolidated_observations": "no consolidation store here",
    "maintenance_runs": "ClawMem's job journal",
    "beads_issues": "Beads issues come from `beads sync` on the project (bd is the source)",
    "beads_dependencies": "Beads issues come from `beads sync` on the project (bd is the source)",
    "worker_leases": "leases of ClawMem's processes",
    "entity_enrichment_state": "memtrove enriches on its own terms (`reindex --enrich`)",
}
_IMPORTED = {
    "content",
    "documents",
    "memory_relations",
    "memory_evolution",
    "entity_nodes",
    "entity_mentions",
    "entity_cooccurrences",
    "entity_triples",
    "session_log",
    "context_usage",
    "recall_events",
    "recall_stats",
    "co_activations",
    "hook_dedupe",
}
_REBUILT = ("documents_fts", "entities_fts", "sqlite_sequence", "sqlite_stat")


class _Tally:
    """Rows written per table, and rows left out because what they point at did not arrive
    (a relation to a document ClawMem no longer has, a mention of an unnamed entity)."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.added: dict[str, int] = {}
        self.skipped: dict[str, int] = {}

    def write(self, table: str, statement: str, values: tuple[Any, ...]) -> bool:
        done = self.connection.execute(statement, values).rowcount > 0
        self.added[table] = self.added.get(table, 0) + (1 if done else 0)
        return done

    def insert(self, table: str, statement: str, values: tuple[Any, ...]) -> int:
        """Write one row that always arrives (no conflict to skip it): its new id."""
        new_id = self.connection.insert(statement, values)
        if new_id is None:  # an INSERT without ON CONFLICT adds its row or raises
            raise ValueError(f"{table}: a row that did not arrive")
        self.added[table] = self.added.get(table, 0) + 1
        return new_id

    def skip(self, table: str) -> None:
        self.skipped[table] = self.skipped.get(table, 0) + 1


def quoted(name: str) -> str:
    """``name`` as an SQL identifier: a hostile file may name a table ``a"b``."""
    return '"' + name.replace('"', '""') + '"'


def plain(value: Any) -> Any:
    """A column's value, a BLOB read as UTF-8 text (ClawMem writes none where this import
    reads; a damaged or crafted file may, and ``b'...'`` is not a title)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", errors="replace")
    return value


def table_kinds(source: Connection, only: str | None = None) -> dict[str, str]:
    """Each table of the source: ``table`` (ordinary, read), ``virtual`` (its module may not
    exist here: never read; vec0's vectors are one) or ``computed`` (columns computed as
    they are read, which a crafted file can make as costly as it likes: never read). Views
    are not tables: a recursive one never ends. ``only``: that table alone."""
    kinds: dict[str, str] = {}
    for name, sql in source.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND (? IS NULL OR name = ?) "
        "ORDER BY name",
        (only, only),
    ).fetchall():
        name = str(name)
        if str(sql or "").lstrip()[:14].upper() == "CREATE VIRTUAL":
            kinds[name] = "virtual"
            continue
        hidden = [
            row[0] for row in source.execute("SELECT hidden FROM pragma_table_xinfo(?)", (name,))
        ]
        kinds[name] = "computed" if 2 in hidden else "table"
    return kinds


def not_mapped_tables(source: Connection) -> dict[str, dict[str, Any]]:
    """Every source table this import does not bring over, with its row count and why. A
    virtual table's own storage tables (``vectors_vec_rowids``...) are counted under it."""
    found: dict[str, dict[str, Any]] = {}
    kinds = table_kinds(source)
    virtual = [name for name, kind in kinds.items() if kind == "virtual"]
    for name, kind in kinds.items():
        if (name in _IMPORTED and kind == "table") or name.startswith(_REBUILT):
            continue
        if any(name.startswith(f"{owner}_") for owner in virtual):
            continue  # a virtual table's storage
        reason = NOT_MAPPED.get(name) or "unknown to this import"
        if kind == "table":
            rows = int(source.execute(f"SELECT COUNT(*) FROM {quoted(name)}").fetchone()[0])
        else:
            rows = _counted_in(source, kinds, f"{name}_rowids")
            if name not in NOT_MAPPED:
                reason = f"a {'virtual table' if kind == 'virtual' else 'table of computed columns'}: not read"
        found[name] = {"rows": rows, "reason": reason}
    return found


def _counted_in(source: Connection, kinds: dict[str, str], table: str) -> int:
    """The rows of ``table`` when it is an ordinary table (0 when there is none)."""
    if kinds.get(table) != "table":
        return 0
    return int(source.execute(f"SELECT COUNT(*) FROM {quoted(table)}").fetchone()[0])


def skipped_rows(skipped: dict[str, int]) -> dict[str, dict[str, Any]]:
    """Rows left out, as ``not_mapped`` entries."""
    return {
        f"{table} (rows pointing at what did not arrive)": {
            "rows": count,
            "reason": "their documents or entities are not in the source",
        }
        for table, count in skipped.items()
    }


def _rows(source: Connection, table: str) -> Iterator[dict[str, Any]]:
    if table_kinds(source, table).get(table) != "table":
        return
    cursor = source.execute(f"SELECT * FROM {quoted(table)}")
    columns = [str(description[0]) for description in cursor.description]
    for values in cursor:
        yield dict(zip(columns, map(plain, values), strict=True))


def when(value: Any) -> str | None:
    """A ClawMem timestamp (``2026-12-01T19:00:44.513Z``) as memtrove stores one."""
    if value is None:
        return None
    return parse_iso_datetime(value) or str(value)


def import_tables(
    connection: Connection,
    source: Connection,
    ids: dict[int, int],
    paths: dict[str, int],
    redact: Callable[[str], str],
) -> tuple[dict[str, int], dict[str, int]]:
    """Import every table but documents and content: rows added per table, and rows left
    out (see :func:`skipped_rows`)."""
    tally = _Tally(connection)
    write = tally.write

    for row in _rows(source, "memory_relations"):
        source_id, target_id = ids.get(row["source_id"]), ids.get(row["target_id"])
        if source_id is None or target_id is None or source_id == target_id:
            tally.skip("memory_relations")
            continue
        write(
            "memory_relations",
            "INSERT INTO memory_relations (source_id, target_id, relation_type, weight, "
            "metadata, created_at, contradict_confidence) VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (source_id, target_id, relation_type) DO NOTHING",
            (
                source_id,
                target_id,
                str(row["relation_type"]),
                float(row.get("weight") or 1.0),
                row.get("metadata"),
                when(row.get("created_at")) or "1970-01-01T00:00:00Z",
                row.get("contradict_confidence"),
            ),
        )
    for row in _rows(source, "memory_evolution"):
        memory_id = ids.get(row["memory_id"])
        if memory_id is None:
            tally.skip("memory_evolution")
            continue
        write(
            "memory_evolution",
            "INSERT INTO memory_evolution (memory_id, triggered_by, version, "
            "previous_keywords, new_keywords, previous_context, new_context, reasoning, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (memory_id, version) DO NOTHING",
            (
                memory_id,
                ids.get(row.get("triggered_by") or -1),
                int(row.get("version") or 1),
                row.get("previous_keywords"),
                row.get("new_keywords"),
                _text(redact, row.get("previous_context")),
                _text(redact, row.get("new_context")),
                _text(redact, row.get("reasoning")),
                when(row.get("created_at")) or "1970-01-01T00:00:00Z",
            ),
        )
    _entities(connection, source, ids, redact, tally)
    _sessions(connection, source, ids, paths, redact, tally)
    return tally.added, tally.skipped


def _or_zero(value: Any) -> Any:
    """A count or score of a NOT NULL column: 0 (its default) for a missing or NULL one."""
    return 0 if value is None else value


def _text(redact: Callable[[str], str], value: Any) -> Any:
    return redact(value) if isinstance(value, str) else value


def _entities(
    connection: Connection,
    source: Connection,
    ids: dict[int, int],
    redact: Callable[[str], str],
    tally: _Tally,
) -> None:
    for row in _rows(source, "entity_nodes"):
        if not row.get("entity_id") or not row.get("name"):
            tally.skip("entity_nodes")
            continue
        entity_type = str(row.get("entity_type") or "concept")
        if tally.write(
            "entity_nodes",
            "INSERT INTO entity_nodes (entity_id, entity_type, name, description, "
            "mention_count, last_seen, canonical_id, vault) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (entity_id) DO NOTHING",
            (
                str(row["entity_id"]),
                entity_type,
                str(row["name"]),
                _text(redact, row.get("description")),
                int(row.get("mention_count") or 0),
                when(row.get("last_seen")),
                row.get("canonical_id"),
                str(row.get("vault") or "default"),
            ),
        ):
            connection.text.add_entity(str(row["entity_id"]), str(row["name"]), entity_type)
    known = {str(r[0]) for r in connection.execute("SELECT entity_id FROM entity_nodes")}
    for row in _rows(source, "entity_mentions"):
        doc_id = ids.get(row["doc_id"])
        if doc_id is None or str(row["entity_id"]) not in known:
            tally.skip("entity_mentions")
            continue
        tally.write(
            "entity_mentions",
            "INSERT INTO entity_mentions (entity_id, doc_id, mention_text) VALUES (?, ?, ?) "
            "ON CONFLICT (entity_id, doc_id) DO NOTHING",
            (str(row["entity_id"]), doc_id, row.get("mention_text")),
        )
    for row in _rows(source, "entity_cooccurrences"):
        a, b = sorted((str(row["entity_a"]), str(row["entity_b"])))
        if a == b or a not in known or b not in known:
            tally.skip("entity_cooccurrences")
            continue
        tally.write(
            "entity_cooccurrences",
            "INSERT INTO entity_cooccurrences (entity_a, entity_b, count, last_cooccurred) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (entity_a, entity_b) DO NOTHING",
            (a, b, int(row.get("count") or 1), when(row.get("last_cooccurred"))),
        )
    for row in _rows(source, "entity_triples"):
        subject, target = str(row["subject_entity_id"]), row.get("object_entity_id")
        literal = _text(redact, row.get("object_literal"))
        if subject not in known or (target is not None and str(target) not in known):
            tally.skip("entity_triples")
            continue
        if (target is None) == (literal is None):
            tally.skip("entity_triples")
            continue
        values = (
            subject,
            str(row["predicate"]),
            target,
            literal,
            when(row.get("valid_from")),
            when(row.get("valid_to")),
            ids.get(row.get("source_doc_id") or -1),
        )
        seen = connection.execute(
            "SELECT 1 FROM entity_triples WHERE subject_entity_id = ? AND predicate = ? AND "
            "object_entity_id IS NOT DISTINCT FROM ? AND object_literal IS NOT DISTINCT FROM ? "
            "AND valid_from IS NOT DISTINCT FROM ? AND valid_to IS NOT DISTINCT FROM ? "
            "AND source_doc_id IS NOT DISTINCT FROM ?",
            values,
        ).fetchone()
        if seen is not None:
            continue
        tally.write(
            "entity_triples",
            "INSERT INTO entity_triples (subject_entity_id, predicate, object_entity_id, "
            "object_literal, valid_from, valid_to, source_doc_id, confidence, source_fact) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*values, float(row.get("confidence") or 1.0), _text(redact, row.get("source_fact"))),
        )


def _display_path(value: Any) -> str:
    text = str(value)
    return "_memtrove/" + text.removeprefix("_clawmem/") if text.startswith("_clawmem/") else text


def _sessions(
    connection: Connection,
    source: Connection,
    ids: dict[int, int],
    paths: dict[str, int],
    redact: Callable[[str], str],
    tally: _Tally,
) -> None:
    for row in _rows(source, "session_log"):
        started = when(row.get("started_at")) or "1970-01-01T00:00:00Z"
        tally.write(
            "session_log",
            "INSERT INTO session_log (session_id, started_at, last_seen_at, ended_at, "
            "handoff_path, machine, files_changed, summary) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (session_id) DO NOTHING",
            (
                str(row["session_id"]),
                started,
                when(row.get("ended_at")) or started,
                when(row.get("ended_at")),
                row.get("handoff_path"),
                row.get("machine"),
                row.get("files_changed"),
                _text(redact, row.get("summary")),
            ),
        )
    usage_ids: dict[int, int] = {}
    for row in _rows(source, "context_usage"):
        key = (
            str(row.get("session_id") or ""),
            when(row["timestamp"]),
            str(row["hook_name"]),
            int(row.get("turn_index") or 0),
        )
        found = connection.execute(
            "SELECT id FROM context_usage WHERE session_id = ? AND timestamp = ? AND "
            "hook_name = ? AND turn_index = ?",
            key,
        ).fetchone()
        if found is None:
            try:
                injected = [_display_path(p) for p in json.loads(row.get("injected_paths") or "[]")]
            except (TypeError, ValueError, RecursionError):
                injected = []
            usage_id = tally.insert(
                "context_usage",
                "INSERT INTO context_usage (session_id, timestamp, hook_name, turn_index, "
                "injected_paths, estimated_tokens, was_referenced, query_text) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    *key,
                    json.dumps(injected, ensure_ascii=False),
                    int(row.get("estimated_tokens") or 0),
                    int(row.get("was_referenced") or 0),
                    _text(redact, row.get("query_text")),
                ),
            )
        else:
            usage_id = int(found[0])
        usage_ids[int(row["id"])] = usage_id
    stats_in_source = {int(r["doc_id"]) for r in _rows(source, "recall_stats")}
    for row in _rows(source, "recall_events"):
        doc_id = ids.get(row["doc_id"])
        if doc_id is None:
            tally.skip("recall_events")
            continue
        surfaced = when(row.get("surfaced_at")) or "1970-01-01T00:00:00Z"
        event = (doc_id, str(row["session_id"]), surfaced, str(row.get("query_hash") or ""))
        seen = connection.execute(
            "SELECT 1 FROM recall_events WHERE doc_id = ? AND session_id = ? AND "
            "surfaced_at = ? AND query_hash = ?",
            event,
        ).fetchone()
        if seen is not None:
            continue
        score = float(row.get("search_score") or 0.0)
        tally.write(
            "recall_events",
            "INSERT INTO recall_events (doc_id, session_id, surfaced_at, query_hash, "
            "search_score, usage_id, turn_index, was_referenced) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                *event,
                score,
                usage_ids.get(row.get("usage_id") or -1),
                int(row.get("turn_index") or 0),
                int(row.get("was_referenced") or 0),
            ),
        )
        if int(row["doc_id"]) not in stats_in_source:  # kept current here as a hook would
            update_recall_stats(connection, doc_id, score, surfaced)
    for row in _rows(source, "recall_stats"):
        doc_id = ids.get(row["doc_id"])
        if doc_id is None:
            tally.skip("recall_stats")
            continue
        columns = (
            "recall_count", "unique_queries", "recall_days", "total_score", "max_score",
            "first_recalled_at", "last_recalled_at", "diversity_score", "spacing_score",
            "negative_count",
        )  # fmt: skip
        tally.write(
            "recall_stats",
            f"INSERT INTO recall_stats (doc_id, {', '.join(columns)}) "
            f"VALUES (?{', ?' * len(columns)}) ON CONFLICT (doc_id) DO NOTHING",
            (
                doc_id,
                *(when(row.get(c)) if c.endswith("_at") else _or_zero(row.get(c)) for c in columns),
            ),
        )
    _co_activations(connection, source, paths, tally)
    _logged_sessions(connection, tally)
    for row in _rows(source, "hook_dedupe"):
        tally.write(
            "hook_dedupe",
            "INSERT INTO hook_dedupe (hook_name, prompt_hash, prompt_preview, last_seen_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (hook_name, prompt_hash) DO NOTHING",
            (
                str(row["hook_name"]),
                str(row["prompt_hash"]),
                _text(redact, row.get("prompt_preview")) or "",
                when(row.get("last_seen_at")) or "1970-01-01T00:00:00Z",
            ),
        )


def _co_activations(
    connection: Connection,
    source: Connection,
    paths: dict[str, int],
    tally: _Tally,
) -> None:
    for row in _rows(source, "co_activations"):
        a, b = (
            paths.get(str(row[k])) or paths.get(_display_path(row[k])) for k in ("doc_a", "doc_b")
        )
        if a is None or b is None or a == b:
            tally.skip("co_activations")
            continue
        low, high = min(a, b), max(a, b)
        tally.write(
            "co_activations",
            "INSERT INTO co_activations (doc_a, doc_b, count, last_seen) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (doc_a, doc_b) DO NOTHING",
            (
                low,
                high,
                int(row.get("count") or 1),
                when(row.get("last_seen")) or "1970-01-01T00:00:00Z",
            ),
        )


def _logged_sessions(connection: Connection, tally: _Tally) -> None:
    """A ``session_log`` row for each session ClawMem recorded only in ``context_usage``."""
    rows = connection.execute(
        "SELECT u.session_id, MIN(u.timestamp), MAX(u.timestamp), COUNT(*), "
        "SUM(u.estimated_tokens), (SELECT COUNT(*) FROM recall_events r "
        "WHERE r.session_id = u.session_id) FROM context_usage u "
        "WHERE u.session_id != '' AND NOT EXISTS "
        "(SELECT 1 FROM session_log s WHERE s.session_id = u.session_id) GROUP BY u.session_id"
    ).fetchall()
    for session_id, first, last, turns, tokens, injected in rows:
        tally.write(
            "session_log",
            "INSERT INTO session_log (session_id, started_at, last_seen_at, turns, "
            "injected_documents, estimated_tokens) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (session_id) DO NOTHING",
            (session_id, first, last, int(turns), int(injected), int(tokens or 0)),
        )
