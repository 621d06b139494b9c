"""The PostgreSQL migrations (the baseline p001, then m025 on) build what SQLite's build: the
same tables, columns, keys, foreign keys, unique constraints, named indexes, CHECKs, defaults,
triggers and seeded rows, compared catalogue against catalogue with a freshly migrated SQLite vault;
and each trigger does what its SQLite twin does, run side by side on both engines.

The baseline runs in a schema of its own (dropped at the end) of the PostgreSQL 15 server at
127.0.0.1:5432. Without that server the tests fail, saying how to start it, unless
``MEMTROVE_TEST_POSTGRES=off`` (then they are skipped).
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest

from memtrove.db.connection import Connection, DatabaseError, open_connection
from memtrove.db.migration_names import NAMES
from memtrove.db.migrations import migrate
from memtrove.db.postgres import text_entities, text_store
from memtrove.db.schema.postgres import MIGRATIONS, p001_baseline

SERVER = "127.0.0.1:5432"
URLS = (f"postgresql://root@{SERVER}/test", f"postgresql://postgres@{SERVER}/test")
# Read at import: tests/conftest.py clears every MEMTROVE_* variable around each test.
POSTGRES_SETTING = os.environ.get("MEMTROVE_TEST_POSTGRES", "").strip().lower()

VIRTUAL_TABLES = {
    "documents_fts",
    "passages_fts",
    "archived_fts",
    "entities_fts",
    "documents_vocab",
}
# The PostgreSQL text index's own tables, standing for the virtual ones.
TEXT_TABLES = set(text_store.TABLES) | {
    match.group(1)
    for statement in text_entities.SCHEMA
    if (match := re.match(r"CREATE TABLE IF NOT EXISTS (\w+)", statement))
}
RUNNER_TABLES = {"schema_migrations"}  # the migration runner creates it, on either engine
TYPE_CLASS = {"INTEGER": "bigint", "REAL": "double precision", "TEXT": "text", "BLOB": "bytea"}
# Rowid aliases that take another row's id or are always 1: plain BIGINT keys, no identity.
PLAIN_KEYS = {
    ("embedding_space", "id"),
    ("vector_version", "id"),
    ("second_space", "id"),
    ("recall_stats", "doc_id"),
    ("utility_signals", "doc_id"),
    ("memory_entries", "doc_id"),
    ("entity_enrichment_state", "doc_id"),
}
STAMPS = {("vector_version", "version")}  # random on both engines: checked, not compared
ACTIONS = {"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"}
CHECK = re.compile(r"\bCHECK\s*\(", re.IGNORECASE)
PG = psycopg.Connection[tuple[Any, ...]]


def _connect() -> PG:
    errors: list[str] = []
    for url in URLS:  # root, else the postgres role
        try:
            return psycopg.connect(url, autocommit=True, connect_timeout=5)
        except psycopg.OperationalError as error:
            errors.append((str(error).strip().splitlines() or [type(error).__name__])[0])
    if POSTGRES_SETTING == "off":
        pytest.skip(f"PostgreSQL server at {SERVER} not reachable (MEMTROVE_TEST_POSTGRES=off)")
    pytest.fail(
        f"the PostgreSQL server at {SERVER} is not reachable ({errors[-1]}): start it with "
        "`pg_ctlcluster --skip-systemctl-redirect 15 main start` "
        "(or set MEMTROVE_TEST_POSTGRES=off to skip these tests)",
        pytrace=False,
    )


@pytest.fixture(scope="module")
def postgres() -> Iterator[PG]:
    """A connection whose search_path is a new schema holding the baseline."""
    connection = _connect()
    schema = f"memtrove_schema_{os.getpid()}_{secrets.token_hex(4)}"
    try:
        connection.execute(f"CREATE SCHEMA {schema}")
        connection.execute(f"SET search_path TO {schema}")
        for _, statements in MIGRATIONS:  # the baseline, then every later migration
            with connection.transaction():  # one transaction, as the runner applies each
                for statement in statements:
                    connection.execute(statement)
        # The text index's own tables stand for SQLite's virtual ones; its tests check them.
        assert set(_pg_tables(connection)) >= TEXT_TABLES
        for table in TEXT_TABLES:
            connection.execute(f"DROP TABLE {table}")
        yield connection
    finally:
        connection.rollback()
        connection.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        connection.close()


@pytest.fixture(scope="module")
def sqlite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Connection]:
    connection = open_connection(tmp_path_factory.mktemp("pg-schema") / "v.sqlite")
    migrate(connection)
    yield connection
    connection.close()


# --- the SQLite side ----------------------------------------------------------------------


def _sqlite_kinds(db: Connection) -> dict[str, str]:
    rows = db.execute("SELECT name, type FROM pragma_table_list WHERE schema = 'main'")
    return {str(name): str(kind) for name, kind in rows if not str(name).startswith("sqlite_")}


def _sqlite_tables(db: Connection) -> list[str]:
    kinds = _sqlite_kinds(db)
    return sorted(n for n, kind in kinds.items() if kind == "table" and n not in RUNNER_TABLES)


def _sqlite_sql(db: Connection, kind: str, name: str) -> str:
    row = db.execute("SELECT sql FROM sqlite_master WHERE type = ? AND name = ?", (kind, name))
    return str(row.fetchone()[0])


def _split_top(text: str) -> list[str]:
    """``text`` split at the commas outside parentheses."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", text).replace('"', "").lower()


def _sqlite_index_terms(sql: str) -> tuple[tuple[str, ...], str | None]:
    """The key terms (columns or expressions) and WHERE of a CREATE INDEX statement."""
    on = re.search(r"\bON\s+\w+\s*\(", sql, re.IGNORECASE)
    assert on is not None, sql
    start, depth = on.end() - 1, 0
    for end in range(start, len(sql)):
        depth += {"(": 1, ")": -1}.get(sql[end], 0)
        if depth == 0:
            break
    where = re.search(r"\bWHERE\b(.*)$", sql[end + 1 :], re.IGNORECASE | re.DOTALL)
    terms = tuple(_norm(term) for term in _split_top(sql[start + 1 : end]))
    return terms, _norm(where.group(1)).strip("()") if where else None


def _sqlite_indexes(db: Connection, table: str) -> list[tuple[str, str, bool, bool]]:
    """(name, origin, unique, partial) of every index of ``table``."""
    rows = db.execute(f"PRAGMA index_list({table})").fetchall()
    return [(str(r[1]), str(r[3]), bool(r[2]), bool(r[4])) for r in rows]


def _sqlite_index_columns(db: Connection, index: str) -> tuple[str, ...]:
    rows = db.execute(f"PRAGMA index_xinfo({index})").fetchall()
    return tuple(str(r[2]) for r in sorted(rows, key=lambda r: r[0]) if r[5])  # key columns


# --- the PostgreSQL side ------------------------------------------------------------------

_PG_COLUMNS = """
SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
       pg_get_expr(d.adbin, d.adrelid), a.attidentity
FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE n.nspname = current_schema() AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY c.relname, a.attnum
"""

_PG_INDEXES = """
SELECT c.relname, i.relname, ix.indisunique, ix.indisprimary,
       pg_get_expr(ix.indpred, ix.indrelid),
       ARRAY(SELECT pg_get_indexdef(ix.indexrelid, k, true)
             FROM generate_series(1, ix.indnkeyatts) AS k ORDER BY k),
       EXISTS (SELECT 1 FROM pg_constraint con
               WHERE con.conindid = ix.indexrelid AND con.contype IN ('p', 'u', 'x'))
FROM pg_index ix
JOIN pg_class i ON i.oid = ix.indexrelid
JOIN pg_class c ON c.oid = ix.indrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema()
"""

_PG_CONSTRAINTS = """
SELECT c.relname, con.contype, f.relname, con.confupdtype, con.confdeltype,
       ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, n)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
             ORDER BY k.n),
       ARRAY(SELECT a.attname FROM unnest(con.confkey) WITH ORDINALITY AS k(attnum, n)
             JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum
             ORDER BY k.n)
FROM pg_constraint con
JOIN pg_class c ON c.oid = con.conrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_class f ON f.oid = con.confrelid
WHERE n.nspname = current_schema()
"""


def _pg_tables(pg: PG) -> list[str]:
    rows = pg.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = current_schema() AND c.relkind = 'r' ORDER BY c.relname"
    )
    return [str(row[0]) for row in rows]


def _pg_constraints(pg: PG, kind: str) -> list[tuple[Any, ...]]:
    return [row for row in pg.execute(_PG_CONSTRAINTS).fetchall() if row[1] == kind]


# --- the catalogue, compared --------------------------------------------------------------


def test_the_baseline_stands_for_the_24_sqlite_migrations() -> None:
    assert p001_baseline.NAME == "p001_baseline"
    assert NAMES[: NAMES.index("m024_vector_version_random") + 1] == p001_baseline.REPLACES
    assert len(p001_baseline.REPLACES) == 24
    assert MIGRATIONS[0] == (p001_baseline.NAME, p001_baseline.STATEMENTS)
    # Every later migration is written for both engines, under the same name, in one order.
    assert [name for name, _ in MIGRATIONS[1:]] == list(NAMES[24:])
    assert all(isinstance(step, str) for _, steps in MIGRATIONS for step in steps)


def test_same_tables_without_sqlites_virtual_ones(postgres: PG, sqlite: Connection) -> None:
    kinds = _sqlite_kinds(sqlite)
    assert {name for name, kind in kinds.items() if kind == "virtual"} == VIRTUAL_TABLES
    assert all(
        any(name.startswith(f"{virtual}_") for virtual in VIRTUAL_TABLES)
        for name, kind in kinds.items()
        if kind == "shadow"
    )
    assert _pg_tables(postgres) == _sqlite_tables(sqlite)


def test_same_columns_types_not_nulls_and_keys(postgres: PG, sqlite: Connection) -> None:
    expected: dict[str, list[tuple[str, str, bool]]] = {}
    expected_keys: dict[str, tuple[str, ...]] = {}
    rowid_aliases: set[tuple[str, str]] = set()
    for table in _sqlite_tables(sqlite):
        rows = sqlite.execute(f"PRAGMA table_xinfo({table})").fetchall()
        # A key column is NOT NULL in PostgreSQL; SQLite's rowid tables leave a TEXT key
        # nullable (an old quirk the vault never relies on).
        expected[table] = [
            (str(r[1]), TYPE_CLASS[str(r[2]).upper()], bool(r[3] or r[5])) for r in rows
        ]
        keys = sorted((r for r in rows if r[5]), key=lambda r: r[5])
        expected_keys[table] = tuple(str(r[1]) for r in keys)
        without_rowid = "WITHOUT ROWID" in _sqlite_sql(sqlite, "table", table).upper()
        if len(keys) == 1 and str(keys[0][2]).upper() == "INTEGER" and not without_rowid:
            rowid_aliases.add((table, str(keys[0][1])))
    actual: dict[str, list[tuple[str, str, bool]]] = {}
    identities: set[tuple[str, str]] = set()
    for table, column, kind, not_null, _default, identity in postgres.execute(_PG_COLUMNS):
        if identity:
            identities.add((table, column))
            continue  # row_seq: the engine's insertion order, not a column of the vault
        actual.setdefault(table, []).append((column, kind, not_null))
    assert actual == expected
    primary = {row[0]: tuple(row[5]) for row in _pg_constraints(postgres, "p")}
    assert primary == {table: keys for table, keys in expected_keys.items() if keys}
    assert identities == {(table, "row_seq") for table in p001_baseline.INSERTION_ORDER_TABLES}
    assert {(table, "id") for table in p001_baseline.NEXT_ID_TABLES} == rowid_aliases - PLAIN_KEYS
    assert rowid_aliases >= PLAIN_KEYS


def test_same_foreign_keys(postgres: PG, sqlite: Connection) -> None:
    expected: set[tuple[Any, ...]] = set()
    for table in _sqlite_tables(sqlite):
        keys: dict[int, list[Any]] = {}
        for row in sqlite.execute(f"PRAGMA foreign_key_list({table})").fetchall():
            keys.setdefault(row[0], []).append(row)
        for rows in keys.values():
            rows.sort(key=lambda r: r[1])
            expected.add(
                (
                    table,
                    tuple(str(r[3]) for r in rows),
                    str(rows[0][2]),
                    tuple(str(r[4]) for r in rows),
                    str(rows[0][5]),
                    str(rows[0][6]),
                )
            )
    actual = {
        (table, tuple(columns), target, tuple(targets), ACTIONS[update], ACTIONS[delete])
        for table, _kind, target, update, delete, columns, targets in _pg_constraints(postgres, "f")
    }
    assert actual == expected


def test_same_unique_constraints_and_named_indexes(postgres: PG, sqlite: Connection) -> None:
    unique: set[tuple[str, tuple[str, ...]]] = set()
    named: dict[str, tuple[str, tuple[str, ...], bool, str | None]] = {}
    for table in _sqlite_tables(sqlite):
        for name, origin, is_unique, _partial in _sqlite_indexes(sqlite, table):
            if origin == "pk":
                continue
            if origin == "c":
                terms, where = _sqlite_index_terms(_sqlite_sql(sqlite, "index", name))
                named[name] = (table, terms, is_unique, where)
            else:
                terms = _sqlite_index_columns(sqlite, name)
            if is_unique:
                unique.add((table, terms))
    pg_unique: set[tuple[str, tuple[str, ...]]] = set()
    pg_named: dict[str, tuple[str, tuple[str, ...], bool, str | None]] = {}
    for table, name, is_unique, primary, where, terms, constraint in postgres.execute(_PG_INDEXES):
        normalised = tuple(_norm(term) for term in terms)
        if is_unique and not primary:
            pg_unique.add((table, normalised))
        if not constraint:
            predicate = _norm(where).strip("()") if where else None
            pg_named[name] = (table, normalised, is_unique, predicate)
    assert pg_unique == unique
    assert pg_named == named
    assert {name for name, (_t, _c, _u, where) in named.items() if where} == {
        "documents_timeline",
        "documents_archived",
    }


def test_same_number_of_checks_per_table(postgres: PG, sqlite: Connection) -> None:
    expected = {
        table: n
        for table in _sqlite_tables(sqlite)
        if (n := len(CHECK.findall(_sqlite_sql(sqlite, "table", table))))
    }
    actual: dict[str, int] = {}
    for row in _pg_constraints(postgres, "c"):
        actual[row[0]] = actual.get(row[0], 0) + 1
    assert actual == expected


def _typed(value: Any, kind: str) -> Any:
    if value is None:
        return None
    return {"bigint": int, "double precision": float, "text": str}[kind](value)


def test_defaults_give_the_same_values(postgres: PG, sqlite: Connection) -> None:
    expected: dict[tuple[str, str], Any] = {}
    for table in _sqlite_tables(sqlite):
        for row in sqlite.execute(f"PRAGMA table_xinfo({table})").fetchall():
            if row[4] is not None:
                value = sqlite.execute(f"SELECT {row[4]}").fetchone()[0]
                expected[(table, str(row[1]))] = _typed(value, TYPE_CLASS[str(row[2]).upper()])
    actual: dict[tuple[str, str], Any] = {}
    for table, column, kind, _not_null, default, _identity in postgres.execute(_PG_COLUMNS):
        if default is not None:
            value = postgres.execute(f"SELECT {default}").fetchone()
            actual[(table, column)] = _typed(value[0] if value else None, kind)
    assert actual == expected


def test_same_triggers(postgres: PG, sqlite: Connection) -> None:
    expected = {
        str(name): str(table)
        for name, table in sqlite.execute(
            "SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger'"
        )
    }
    actual = {
        str(name): str(table)
        for name, table in postgres.execute(
            "SELECT t.tgname, c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = current_schema() AND NOT t.tgisinternal"
        )
    }
    next_ids = {f"{table}_next_id": table for table in p001_baseline.NEXT_ID_TABLES}
    assert actual == expected | next_ids
    assert len(expected) == 7


def _rows(execute: Any, table: str) -> list[tuple[str | None, ...]]:
    cursor = execute(f"SELECT * FROM {table}")
    columns = [str(column[0]) for column in cursor.description]
    rows = []
    for row in cursor.fetchall():
        values: list[str | None] = []
        for column, value in zip(columns, row, strict=True):
            if (table, column) in STAMPS:
                assert isinstance(value, int) and 0 <= value < 2**63
                value = "<stamp>"
            values.append(None if value is None else str(value))
        rows.append(tuple(values))
    return sorted(rows, key=repr)


def test_same_seeded_rows(postgres: PG, sqlite: Connection) -> None:
    tables = _sqlite_tables(sqlite)
    expected = {table: _rows(sqlite.execute, table) for table in tables}
    actual = {table: _rows(postgres.execute, table) for table in tables}
    assert actual == expected
    seeded = {table for table, rows in expected.items() if rows}
    assert seeded == {"memory_stores", "vector_version"}


# --- the triggers, side by side -----------------------------------------------------------


class _Engine:
    """Runs the same statements (``?`` placeholders) on either engine."""

    def __init__(self, sqlite: Connection | None = None, pg: PG | None = None) -> None:
        self.sqlite, self.pg = sqlite, pg

    def run(self, sql: str, parameters: tuple[Any, ...] = ()) -> None:
        if self.pg is not None:
            self.pg.execute(sql.replace("?", "%s"), parameters)  # type: ignore[arg-type]
        else:
            assert self.sqlite is not None
            self.sqlite.execute(sql, parameters)

    def one(self, sql: str) -> tuple[Any, ...]:
        source: Any = self.pg if self.pg is not None else self.sqlite
        row = source.execute(sql).fetchone()
        assert row is not None
        return tuple(row)

    def accepts(self, sql: str, parameters: tuple[Any, ...] = ()) -> bool:
        """Whether the statement passes the constraints (and then it stays written)."""
        try:
            if self.pg is not None:
                with self.pg.transaction():  # a savepoint: the outer transaction goes on
                    self.run(sql, parameters)
            else:
                self.run(sql, parameters)
        except (psycopg.errors.IntegrityError, DatabaseError):
            return False
        return True


@contextmanager
def _engines(postgres: PG, sqlite: Connection) -> Iterator[tuple[_Engine, _Engine]]:
    """Both engines, each in a transaction rolled back at the end."""
    sqlite.execute("BEGIN")
    try:
        with postgres.transaction(force_rollback=True):
            yield _Engine(sqlite=sqlite), _Engine(pg=postgres)
    finally:
        sqlite.execute("ROLLBACK")


def _document(engine: _Engine) -> None:
    engine.run(
        "INSERT INTO content (hash, doc, created_at) VALUES ('h1', 'one', 't'), ('h2', 'two', 't')"
    )
    engine.run(
        "INSERT INTO documents (id, collection, path, title, hash, docid, created_at, "
        "modified_at, embed_state, embed_attempts, embed_error) "
        "VALUES (7, 'notes', 'a.md', 'A', 'h1', 'abc123', 't', 't', 'synced', 3, 'boom')"
    )


def test_a_new_body_resets_the_embed_state(postgres: PG, sqlite: Connection) -> None:
    state = "SELECT embed_state, embed_attempts, embed_error FROM documents WHERE id = 7"
    seen = []
    with _engines(postgres, sqlite) as engines:
        for engine in engines:
            _document(engine)
            steps = []
            for update in (
                "UPDATE documents SET title = 'B' WHERE id = 7",  # not the body
                "UPDATE documents SET hash = 'h1' WHERE id = 7",  # the same body
                "UPDATE documents SET hash = 'h2', embed_state = 'synced' WHERE id = 7",
            ):
                engine.run(update)
                steps.append(engine.one(state))
            seen.append(steps)
    assert seen[0] == [("synced", 3, "boom"), ("synced", 3, "boom"), ("pending", 0, None)]
    assert seen[1] == seen[0]


def test_every_change_of_content_vectors_draws_a_new_stamp(
    postgres: PG, sqlite: Connection
) -> None:
    stamp = "SELECT version FROM vector_version WHERE id = 1"
    seen = []
    with _engines(postgres, sqlite) as engines:
        for engine in engines:
            _document(engine)
            moved = []
            before = engine.one(stamp)[0]
            for change in (
                "INSERT INTO content_vectors (id, hash, seq, model, fragment_type, "
                "embed_input_fp, embedded_at) VALUES (1, 'h1', 0, 'm', 'full', 'fp', 't'), "
                "(2, 'h1', 1, 'm', 'section', 'fp', 't')",
                "UPDATE content_vectors SET model = 'n' WHERE id = 1",
                "DELETE FROM content_vectors WHERE id = 99",  # no row: no change
                "DELETE FROM content_vectors",
            ):
                engine.run(change)
                after = engine.one(stamp)[0]
                assert 0 <= after < 2**63
                moved.append(after != before)
                before = after
            seen.append(moved)
    assert seen == [[True, True, False, True]] * 2


def test_second_space_version_counts_each_vector_changed(postgres: PG, sqlite: Connection) -> None:
    version = "SELECT version FROM second_space WHERE id = 1"
    insert = "INSERT INTO second_vectors (hash, seq, embedding, embedded_at) VALUES "
    blob = b"\x00\x00\x80?"
    seen = []
    with _engines(postgres, sqlite) as engines:
        for engine in engines:
            engine.run(
                "INSERT INTO second_space (id, identity, dimensions, created_at) "
                "VALUES (1, 'minilm', 1, 't')"
            )
            counts = [engine.one(version)[0]]
            for change, parameters in (
                (insert + "('h', 0, ?, 't'), ('h', 1, ?, 't')", (blob, blob)),
                (
                    insert + "('h', 1, ?, 't'), ('h', 2, ?, 't') "
                    "ON CONFLICT (hash, seq) DO NOTHING",
                    (blob, blob),
                ),
                ("UPDATE second_vectors SET embedded_at = 'u'", ()),
                ("DELETE FROM second_vectors WHERE seq < 2", ()),
                ("DELETE FROM second_vectors WHERE seq = 99", ()),
            ):
                engine.run(change, parameters)
                counts.append(engine.one(version)[0])
            seen.append(counts)
    assert seen == [[0, 2, 3, 6, 8, 8]] * 2


def test_checks_accept_and_refuse_the_same_rows(postgres: PG, sqlite: Connection) -> None:
    attempts = (
        "INSERT INTO dedup_pairs VALUES ('s', 'B', 'a', 'duplicate', 't')",  # code-point order
        "INSERT INTO dedup_pairs VALUES ('s', 'a', 'B', 'duplicate', 't')",
        "INSERT INTO dedup_pairs VALUES ('s', 'c', 'd', 'maybe', 't')",
        "INSERT INTO entity_nodes (entity_id, entity_type, name) VALUES ('v:p:x', 'p', 'X')",
        "INSERT INTO entity_nodes (entity_id, entity_type, name) VALUES ('v:p:Y', 'p', 'Y')",
        "INSERT INTO entity_cooccurrences (entity_a, entity_b) VALUES ('v:p:Y', 'v:p:x')",
        "INSERT INTO entity_cooccurrences (entity_a, entity_b) VALUES ('v:p:x', 'v:p:Y')",
        "INSERT INTO entity_triples (subject_entity_id, predicate, object_literal) "
        "VALUES ('v:p:x', 'is', 'here')",
        "INSERT INTO entity_triples (subject_entity_id, predicate, object_entity_id, "
        "object_literal) VALUES ('v:p:x', 'is', 'v:p:Y', 'here')",
        "INSERT INTO entity_triples (subject_entity_id, predicate) VALUES ('v:p:x', 'is')",
        "INSERT INTO import_runs (kind, source, started_at) VALUES ('other', 's', 't')",
        "INSERT INTO embedding_space VALUES (2, 'm', 4, 't')",
        "INSERT INTO embedding_space VALUES (1, 'm', 0, 't')",
        "INSERT INTO fragments VALUES ('h1', 0, 'full', '', 0, 3)",
        "INSERT INTO fragments VALUES ('h9', 0, 'full', '', 0, 3)",  # no such body
        "INSERT INTO memory_entries (doc_id, store, slug, label, confidence, created_at, "
        "updated_at) VALUES (7, 'global', 's', 'l', 11, 't', 't')",
        "INSERT INTO memory_entries (doc_id, store, slug, label, created_at, updated_at) "
        "VALUES (7, 'nowhere', 's', 'l', 't', 't')",
        "INSERT INTO memory_entries (doc_id, store, slug, label, created_at, updated_at) "
        "VALUES (7, 'global', 's', 'l', 't', 't')",
        "INSERT INTO co_activations VALUES (7, 7, 1, 't')",
        "INSERT INTO document_links VALUES (7, 'b.md', 'html', NULL, NULL)",
    )
    seen = []
    with _engines(postgres, sqlite) as engines:
        for engine in engines:
            _document(engine)
            seen.append([engine.accepts(sql) for sql in attempts])
    assert seen[0] == [
        True, False, False, True, True, True, False, True, False, False,
        False, False, False, True, False, False, False, True, False, False,
    ]  # fmt: skip
    assert seen[1] == seen[0]


def test_deleting_a_document_cascades_alike(postgres: PG, sqlite: Connection) -> None:
    count = "SELECT (SELECT count(*) FROM recall_stats) + (SELECT count(*) FROM recall_events)"
    seen = []
    with _engines(postgres, sqlite) as engines:
        for engine in engines:
            _document(engine)
            engine.run("INSERT INTO recall_stats (doc_id) VALUES (7)")
            engine.run(
                "INSERT INTO context_usage (id, session_id, timestamp, hook_name) "
                "VALUES (1, 's', 't', 'h')"
            )
            engine.run(
                "INSERT INTO recall_events (doc_id, session_id, usage_id, surfaced_at) "
                "VALUES (7, 's', 1, 't')"
            )
            engine.run("DELETE FROM context_usage")
            usage = engine.one("SELECT usage_id FROM recall_events")
            engine.run("DELETE FROM documents WHERE id = 7")
            seen.append((usage, engine.one(count)))
    assert seen == [((None,), (0,))] * 2
