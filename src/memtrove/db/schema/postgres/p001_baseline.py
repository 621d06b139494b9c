"""The PostgreSQL vault's starting point: in one migration, the schema SQLite's m001-m024
build (``REPLACES``), for PostgreSQL 15.

- The same tables, columns in the same order, NOT NULLs, keys, UNIQUEs, CHECKs, foreign
  keys (same ON DELETE actions), named indexes (same columns, order, uniqueness and WHERE)
  and triggers, by the same names; the rows the migrations seed (``memory_stores``'
  ``global``, ``vector_version``'s stamp). Written in three parts:
  :mod:`~memtrove.db.schema.postgres.p001_baseline_core` (bodies, documents, vectors),
  :mod:`~memtrove.db.schema.postgres.p001_baseline_sessions` (sessions, consolidation, runs)
  and :mod:`~memtrove.db.schema.postgres.p001_baseline_graph` (graph, memory store).
- Types: a surrogate ``INTEGER PRIMARY KEY`` (a rowid alias) is a BIGINT key that a trigger
  fills, when the insert gives none, with the largest id + 1 (SQLite's rule:
  ``NEXT_ID_TABLES``); one that takes another row's id (``doc_id`` keys) or is always 1 (the
  one-row tables) is a plain BIGINT key; a ``row_seq`` identity column orders the rows of
  the tables whose key does not follow insertion (``INSERTION_ORDER_TABLES``); INTEGER is BIGINT, REAL is DOUBLE
  PRECISION, TEXT is TEXT, BLOB is BYTEA. Every column of m001-m024 declares its type.
- Instead of SQLite's virtual tables (``documents_fts``, ``passages_fts``, ``archived_fts``,
  ``entities_fts``, ``documents_vocab``) and their shadow tables, the PostgreSQL text
  index's own (:mod:`memtrove.db.postgres.text_store`, as m029 leaves them,
  :mod:`memtrove.db.postgres.text_entities`); the vector index makes its tables when the
  first embedding gives their size, as ``vectors_vec`` is made on SQLite. ``schema_migrations`` is the
  migration runner's own, as for SQLite.
"""

from memtrove.db.migration_names import NAMES
from memtrove.db.postgres import text_entities
from memtrove.db.schema.postgres import (
    p001_baseline_core,
    p001_baseline_graph,
    p001_baseline_sessions,
)

NAME = "p001_baseline"

# The SQLite migrations this baseline stands for, in order (frozen: later migrations are
# written for each engine).
REPLACES: tuple[str, ...] = NAMES[: NAMES.index("m024_vector_version_random") + 1]

# The tables whose integer id the vault leaves to the database. An id comes as SQLite gives a
# rowid: the largest so far + 1 (a row inserted with its id, as an import does, never
# collides with the next one; writers take turns on the vault's lock).
NEXT_ID_TABLES = (
    "documents",
    "content_vectors",
    "context_usage",
    "recall_events",
    "consolidated_observations",
    "maintenance_runs",
    "mine_runs",
    "import_runs",
    "entity_triples",
    "memory_evolution",
    "memory_entry_versions",
)
# The tables whose key does not follow insertion: ``row_seq`` (an identity column the
# catalogue leaves out of their columns) orders their rows as SQLite's rowid does.
INSERTION_ORDER_TABLES = ("session_log", "prediction_provenance", "behavior_provenance")

# The text index's tables as the baseline made them (m029 keeps positions in the postings).
_TEXT_INDEX = (
    "CREATE SEQUENCE IF NOT EXISTS text_segment_ids",
    "CREATE TABLE IF NOT EXISTS text_segments (idx SMALLINT NOT NULL, seg BIGINT NOT NULL, "
    "level SMALLINT NOT NULL, PRIMARY KEY (idx, seg))",
    "CREATE TABLE IF NOT EXISTS text_rows (idx SMALLINT NOT NULL, doc_id BIGINT NOT NULL, "
    "seg BIGINT NOT NULL, sizes INT[] NOT NULL, PRIMARY KEY (idx, doc_id))",
    'CREATE TABLE IF NOT EXISTS text_postings (idx SMALLINT NOT NULL, term TEXT COLLATE "C" '
    "NOT NULL, seg BIGINT NOT NULL, docs BIGINT[] NOT NULL, c0 INT[] NOT NULL, "
    "c1 INT[] NOT NULL, c2 INT[] NOT NULL, lengths INT[] NOT NULL, "
    "PRIMARY KEY (idx, term, seg))",
    "CREATE INDEX IF NOT EXISTS text_postings_seg ON text_postings (idx, seg)",
    "CREATE TABLE IF NOT EXISTS text_places (idx SMALLINT NOT NULL, doc_id BIGINT NOT NULL, "
    'terms TEXT[] COLLATE "C" NOT NULL, counts INT[] NOT NULL, starts INT[] NOT NULL, '
    "positions INT[] NOT NULL, PRIMARY KEY (idx, doc_id))",
    "CREATE TABLE IF NOT EXISTS text_dead (idx SMALLINT NOT NULL, doc_id BIGINT NOT NULL, "
    "seg BIGINT NOT NULL, PRIMARY KEY (idx, doc_id, seg))",
    "CREATE TABLE IF NOT EXISTS text_totals (idx SMALLINT PRIMARY KEY, rows BIGINT NOT NULL, "
    "tokens BIGINT[] NOT NULL)",
)

_NEXT_ID = """
CREATE FUNCTION memtrove_next_id() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.id IS NULL THEN
        EXECUTE format('SELECT COALESCE(MAX(id), 0) + 1 FROM %I.%I', TG_TABLE_SCHEMA, TG_TABLE_NAME)
            INTO NEW.id;
    END IF;
    RETURN NEW;
END
$$
"""

STATEMENTS: tuple[str, ...] = (
    *p001_baseline_core.STATEMENTS,
    *p001_baseline_sessions.STATEMENTS,
    *p001_baseline_graph.STATEMENTS,
    _NEXT_ID,
    *(
        f"CREATE TRIGGER {table}_next_id BEFORE INSERT ON {table} "
        "FOR EACH ROW EXECUTE FUNCTION memtrove_next_id()"
        for table in NEXT_ID_TABLES
    ),
    *(
        f"ALTER TABLE {table} ADD COLUMN row_seq BIGINT GENERATED ALWAYS AS IDENTITY"
        for table in INSERTION_ORDER_TABLES
    ),
    *_TEXT_INDEX,
    *text_entities.SCHEMA,
)
