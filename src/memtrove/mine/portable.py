"""memtrove's own vault as JSON lines: ``memtrove export FILE`` and ``GET /export``.

The file is one JSON object per line::

    {"format": "memtrove-export", "version": 1, "memtrove": "0.x", "exported_at": "...",
     "schema": ["m001_core", ...], "embedding_space": {...} | null,
     "collections": [{name, path, pattern, exclude, surface, stale_after_days, redact}],
     "counts": {"content": 42, "documents": 40, ...}}
    {"type": "content", "hash": "...", "doc": "...", "created_at": "...",
     "fragments": [[seq, type, label, start, end], ...]}
    {"type": "documents", "id": 1, "collection": "notes", "path": "a.md", "docid": "...", ...}
    {"type": "memory_entries", ...}   ... one line per row of every stored table ...
    {"type": "end", "records": 1234}

Every table of the vault is written, row by row, parents before the tables that refer to
them (by their foreign keys), with every column as stored: documents keep their id, docid,
hash, dates, pins, snoozes, confidence, counters and forgotten/invalidated state, and every
other row keeps the ids that point at them. Blobs (entry and rule vectors) are
``{"$b64": "..."}``. What is left out is what belongs to one machine or is rebuilt on import:
the full-text indexes (rebuilt from the rows), model caches, leases and the migration
record (the header names the migrations instead), and, unless asked for (``export
--vectors``: ``{"type": "vectors", "hash", "seq", ..., "vector": {"$b64": ...}}`` records,
last), the fragment vectors (``import --embed`` re-embeds; see the README for the trade). ``end`` carries the number of
records, so a cut file is told from a whole one.

The file is the same whichever engine holds the vault (SQLite or PostgreSQL), and either
imports it: the header's ``schema`` is the vault's level as SQLite's migration names (a
PostgreSQL baseline stands for those it replaces, :func:`schema_level`), each table's rows
come in its primary key's order with text compared byte by byte, and the full-text totals
are the same record on both engines.

The export reads one snapshot on its own connection (a read transaction in WAL mode), so it
streams a vault of any size in constant memory while other callers keep writing.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from memtrove.db.connection import Connection, open_connection

__all__ = [
    "FORMAT",
    "LEFT_OUT",
    "VECTORS",
    "VERSION",
    "decode_value",
    "export_lines",
    "known_migrations",
    "schema_level",
    "stored_tables",
    "table_columns",
]

FORMAT = "memtrove-export"
VERSION = 1
VECTORS = "vectors"  # the record type of a fragment vector (``export --vectors``)

# Tables never written: machine-local state, caches, vectors and the indexes import rebuilds.
LEFT_OUT = frozenset(
    {
        "schema_migrations",
        "vector_version",
        "embedding_space",
        "content_vectors",
        "worker_leases",
        "llm_cache",
        "intent_classifications",
        "fragments",  # written inside their body's ``content`` record
        "vault_state",
        "import_runs",  # this vault's own history of moving in
        "embed_canary",  # this machine's embedder, as it answered here (calibrated anew)
        "vault_flags",  # the health of this vault's vectors, which do not travel
    }
)
# The full-text index's entity names travel as records of their own (the other indexes are
# rebuilt from rows): their record type and row-number field, as version 1 of the format
# names them.
ENTITIES = "entities_fts"
ENTITY_ROW = "rowid"
_ENTITY_FIELDS = (ENTITY_ROW, "entity_id", "name", "entity_type")
# Columns describing this vault's vectors, which do not travel (re-embedded on import).
_COLUMNS_LEFT_OUT: Mapping[str, frozenset[str]] = {
    "documents": frozenset({"embed_state", "embed_attempts", "embed_error"}),
}
_FIRST = ("content", "documents")  # then every other table, parents first


def _baselines() -> dict[str, tuple[str, ...]]:
    """Each engine's baseline migration -> the SQLite migrations it stands for."""
    from memtrove.db.schema.postgres import p001_baseline

    return {p001_baseline.NAME: p001_baseline.REPLACES}


def schema_level(applied: Iterable[str]) -> list[str]:
    """The schema level of a vault whose applied migrations are ``applied``, engine-neutral
    (what an export's header names): each baseline (PostgreSQL's ``p001_baseline``) as the
    SQLite migrations it stands for, sorted, once each."""
    baselines = _baselines()
    return sorted({level for name in applied for level in baselines.get(name, (name,))})


def known_migrations(applied: Iterable[str]) -> set[str]:
    """Every migration name, of either engine, at or below the level of a vault whose
    applied migrations are ``applied``: what an export's header may name for it to import
    here (an export from either engine, or from an older memtrove)."""
    level = set(schema_level(applied))
    return level | {name for name, stands in _baselines().items() if set(stands) <= level}


def table_columns(connection: Connection, table: str) -> list[str]:
    """The columns of ``table`` (empty when there is no such table)."""
    return connection.catalog.columns(table)


def stored_tables(connection: Connection) -> list[str]:
    """Every table an export writes, parents before the tables that refer to them, then the
    entity names of the full-text index (:data:`ENTITIES`)."""
    plain = [name for name in connection.catalog.tables() if name not in LEFT_OUT]
    parents: dict[str, set[str]] = {
        table: {
            key.target
            for key in connection.catalog.foreign_keys(table)
            if key.target != table and key.target in plain
        }
        for table in plain
    }
    ordered: list[str] = []
    placed: set[str] = set()
    pending = [t for t in _FIRST if t in parents] + sorted(t for t in plain if t not in _FIRST)
    while pending:  # a topological order, stable: each table once all its parents are out
        for table in pending:
            if parents[table] <= placed:
                ordered.append(table)
                placed.add(table)
                pending.remove(table)
                break
        else:  # a cycle (none in the schema today): keep the remaining order
            ordered.extend(pending)
            break
    return [*ordered, ENTITIES]


def _encode(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return {"$b64": base64.b64encode(bytes(value)).decode("ascii")}
    return value


def decode_value(value: Any) -> Any:
    """A JSON value back as SQLite stores it (``{"$b64": ...}`` -> bytes); ValueError when
    it is neither a scalar nor an encoded blob."""
    if value is None or isinstance(value, str | int | float):
        return value
    if isinstance(value, dict) and set(value) == {"$b64"} and isinstance(value["$b64"], str):
        try:
            return base64.b64decode(value["$b64"], validate=True)
        except ValueError:
            raise ValueError("a blob that is not base64") from None
    raise ValueError(f"a value that is not a column value ({type(value).__name__})")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _line(record: Mapping[str, Any]) -> str:
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    if not line.isascii() and _SURROGATE.search(line):  # not encodable as UTF-8: escape it
        line = json.dumps(record, separators=(",", ":"))
    return line + "\n"


def _header(
    connection: Connection,
    tables: list[str],
    collections: Iterable[Mapping[str, Any]],
    version: str,
    exported_at: str,
) -> dict[str, Any]:
    space = connection.execute("SELECT identity, dimensions FROM embedding_space").fetchone()
    schema = schema_level(
        str(row[0]) for row in connection.execute("SELECT name FROM schema_migrations")
    )
    counts = {
        table: sum(1 for _ in connection.text.entity_rows())
        if table == ENTITIES
        else int(connection.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0])
        for table in tables
    }
    averages = connection.text.totals_record()
    return {
        "format": FORMAT,
        "version": VERSION,
        "memtrove": version,
        "exported_at": exported_at,
        "schema": schema,
        "embedding_space": None
        if space is None
        else {"identity": str(space[0]), "dimensions": int(space[1])},
        "collections": list(collections),
        "counts": counts,
        # The full-text index's row and token totals, which BM25 reads. Rebuilt from the rows
        # they can differ (a deleted row is not subtracted from them in a contentless
        # index); the import puts the source's back, so that scores come out the same.
        "fts_averages": None if averages is None else _encode(averages),
    }


def _rows(connection: Connection, table: str) -> Iterator[dict[str, Any]]:
    if table == ENTITIES:
        for row in connection.text.entity_rows():
            yield {"type": table, **dict(zip(_ENTITY_FIELDS, row, strict=True))}
        return
    left_out = _COLUMNS_LEFT_OUT.get(table, frozenset())
    columns = [c for c in table_columns(connection, table) if c not in left_out]
    names = ", ".join(f'"{c}"' for c in columns)
    cursor = connection.execute(
        f'SELECT {names} FROM "{table}" ORDER BY {_order(connection, table)}'
    )
    for row in cursor:
        yield {"type": table, **{c: _encode(v) for c, v in zip(columns, row, strict=True)}}


def _order(connection: Connection, table: str) -> str:
    """The order of ``table``'s rows in an export, the same on every engine: by its primary
    key (the first column when it has none), text compared byte by byte (SQLite's BINARY;
    PostgreSQL's database collation may differ, so its rows say ``COLLATE "C"``)."""
    info = connection.catalog.column_info(table)
    key = sorted((c for c in info if c.key), key=lambda c: c.key) or info[:1]
    binary = ' COLLATE "C"' if connection.dialect == "postgresql" else ""
    return ", ".join(f'"{c.name}"' + (binary if c.declared == "TEXT" else "") for c in key)


def _content(connection: Connection) -> Iterator[dict[str, Any]]:
    for record in _rows(connection, "content"):
        record["fragments"] = [
            list(row)
            for row in connection.execute(
                "SELECT seq, fragment_type, label, start_offset, end_offset FROM fragments "
                "WHERE hash = ? ORDER BY seq",
                (record["hash"],),
            )
        ]
        yield record


def _has_vectors(connection: Connection) -> bool:
    return (
        connection.vectors.exists()
        and connection.execute("SELECT 1 FROM embedding_space").fetchone() is not None
    )


def _vectors(connection: Connection) -> Iterator[dict[str, Any]]:
    """Each fragment vector with its row of ``content_vectors``, in id order (one lookup by
    id each: the vector index answers those in microseconds, a long ``IN`` list far
    slower)."""
    columns = ("hash", "seq", "model", "fragment_type", "fragment_label", "embed_input_fp")
    vectors = connection.vectors
    for row in connection.execute(
        f"SELECT id, {', '.join(columns)}, embedded_at FROM content_vectors ORDER BY id"
    ):
        found = vectors.embedding(int(row[0]))
        if found is not None:
            yield {
                "type": VECTORS,
                **dict(zip((*columns, "embedded_at"), row[1:], strict=True)),
                "vector": _encode(found),
            }


def export_lines(
    vault_path: Path | str,
    collections: Iterable[Mapping[str, Any]],
    *,
    version: str,
    exported_at: str,
    vectors: bool = False,
    busy_timeout_ms: int = 5000,
) -> Iterator[str]:
    """The export of the vault at ``vault_path`` (a file, or a server's URL), line by line
    (each ends in a newline); ``vectors`` adds every fragment vector (``{"type": "vectors",
    ...}`` records).

    Reads one consistent snapshot on a connection of its own, closed when the iterator is
    exhausted or closed."""
    connection = open_connection(vault_path, busy_timeout_ms)
    try:
        with connection.read_snapshot():  # one snapshot for the header's counts and every row
            tables = stored_tables(connection)
            header = _header(connection, tables, collections, version, exported_at)
            vectors = vectors and _has_vectors(connection)
            if vectors:
                header["counts"][VECTORS] = connection.vectors.recorded_count()
            yield _line(header)
            records = 0
            for table in tables:
                rows = _content(connection) if table == "content" else _rows(connection, table)
                for record in rows:
                    records += 1
                    yield _line(record)
            for record in _vectors(connection) if vectors else ():
                records += 1
                yield _line(record)
            yield _line({"type": "end", "records": records})
    finally:
        connection.close()
