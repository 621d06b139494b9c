"""The PostgreSQL vault's starting point: in one migration, the schema SQLite's m001-m024
build (``REPLACES``), for PostgreSQL 15.

- The same tables, columns in the same order, NOT NULLs, keys, UNIQUEs, CHECKs, foreign
  keys (same ON DELETE actions), named indexes (same columns, order, uniqueness and WHERE)
  and triggers, by the same names; the rows the migrations seed (``memory_stores``'
  ``global``, ``vector_version``'s stamp). Written in three parts:
  :mod:`~memtrove.db.schema.postgres.p001_baseline_core` (bodies, documents, vectors),
  :mod:`~memtrove.db.schema.postgres.p001_baseline_sessions` (sessions, consolidation, runs)
  and :mod:`~memtrove.db.schema.postgres.p001_baseline_graph` (graph, memory store).
- Types: a surrogate ``INTEGER PRIMARY KEY`` (a rowid alias) is a BIGINT identity (BY
  DEFAULT, so a given id is kept); one that takes another row's id (``doc_id`` keys) or is
  always 1 (the one-row tables) is a plain BIGINT key; INTEGER is BIGINT, REAL is DOUBLE
  PRECISION, TEXT is TEXT, BLOB is BYTEA. Every column of m001-m024 declares its type.
- Not here: SQLite's virtual tables (``documents_fts``, ``passages_fts``, ``archived_fts``,
  ``entities_fts``, ``documents_vocab``, ``vectors_vec``) and their shadow tables: the
  PostgreSQL text and vector indexes keep their own tables. ``schema_migrations`` is the
  migration runner's own, as for SQLite.
"""

from memtrove.db.migration_names import NAMES
from memtrove.db.schema.postgres import (
    p001_baseline_core,
    p001_baseline_graph,
    p001_baseline_sessions,
)

NAME = "p001_baseline"

# The SQLite migrations this baseline stands for, in order (frozen: later migrations are
# written for each engine).
REPLACES: tuple[str, ...] = NAMES[: NAMES.index("m024_vector_version_random") + 1]

STATEMENTS: tuple[str, ...] = (
    *p001_baseline_core.STATEMENTS,
    *p001_baseline_sessions.STATEMENTS,
    *p001_baseline_graph.STATEMENTS,
)
