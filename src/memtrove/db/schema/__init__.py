"""The vault's schema, one module per migration, applied in this order.

Never edit a migration once it has shipped: add a new one. Each module defines ``NAME`` and
``STATEMENTS`` (SQL statements, or functions of the connection, run in one transaction with
the record of the migration).

A migration's statements are written for an engine's dialect: m001-m024 are SQLite's (FTS5,
sqlite-vec and SQLite's types among them). :func:`migrations_for` gives an engine its list;
another engine starts from a baseline equal to the schema they build, and every later
migration is written in each engine's dialect.
"""

from __future__ import annotations

from collections.abc import Callable

from memtrove.db.connection import Connection
from memtrove.db.schema import (
    m001_core,
    m002_fragments,
    m003_fts_vocab,
    m004_vectors,
    m005_sessions,
    m006_vector_version,
    m007_graph,
    m008_memory,
    m009_usage_index,
    m010_unique_docids,
    m011_lease_holders,
    m012_graph_memory,
    m013_lifecycle,
    m014_consolidation,
    m015_capture,
    m016_mine,
    m017_vault_state,
    m018_import_runs,
    m019_session_project,
    m020_passages,
    m021_long_passages,
    m022_injection_audit,
    m023_second_vectors,
    m024_vector_version_random,
    m025_embed_safety,
    m026_beads,
    m027_review_fields,
    m028_save_parity,
    m029_text_positions,
)

__all__ = ["MIGRATIONS", "Step", "migrations_for"]

# An SQL statement, or a function of the connection for work SQL cannot do (filling a new
# index from stored text); either runs inside the migration's transaction.
Step = str | Callable[[Connection], None]

MIGRATIONS: tuple[tuple[str, tuple[Step, ...]], ...] = (
    (m001_core.NAME, m001_core.STATEMENTS),
    (m002_fragments.NAME, m002_fragments.STATEMENTS),
    (m003_fts_vocab.NAME, m003_fts_vocab.STATEMENTS),
    (m004_vectors.NAME, m004_vectors.STATEMENTS),
    (m005_sessions.NAME, m005_sessions.STATEMENTS),
    (m006_vector_version.NAME, m006_vector_version.STATEMENTS),
    (m007_graph.NAME, m007_graph.STATEMENTS),
    (m008_memory.NAME, m008_memory.STATEMENTS),
    (m009_usage_index.NAME, m009_usage_index.STATEMENTS),
    (m010_unique_docids.NAME, m010_unique_docids.STATEMENTS),
    (m011_lease_holders.NAME, m011_lease_holders.STATEMENTS),
    (m012_graph_memory.NAME, m012_graph_memory.STATEMENTS),
    (m013_lifecycle.NAME, m013_lifecycle.STATEMENTS),
    (m014_consolidation.NAME, m014_consolidation.STATEMENTS),
    (m015_capture.NAME, m015_capture.STATEMENTS),
    (m016_mine.NAME, m016_mine.STATEMENTS),
    (m017_vault_state.NAME, m017_vault_state.STATEMENTS),
    (m018_import_runs.NAME, m018_import_runs.STATEMENTS),
    (m019_session_project.NAME, m019_session_project.STATEMENTS),
    (m020_passages.NAME, m020_passages.STATEMENTS),
    (m021_long_passages.NAME, m021_long_passages.STATEMENTS),
    (m022_injection_audit.NAME, m022_injection_audit.STATEMENTS),
    (m023_second_vectors.NAME, m023_second_vectors.STATEMENTS),
    (m024_vector_version_random.NAME, m024_vector_version_random.STATEMENTS),
    (m025_embed_safety.NAME, m025_embed_safety.STATEMENTS),
    (m026_beads.NAME, m026_beads.STATEMENTS),
    (m027_review_fields.NAME, m027_review_fields.STATEMENTS),
    (m028_save_parity.NAME, m028_save_parity.STATEMENTS),
    (m029_text_positions.NAME, m029_text_positions.STATEMENTS),
)


def migrations_for(dialect: str) -> tuple[tuple[str, tuple[Step, ...]], ...]:
    """The migrations of the engine whose dialect is ``dialect``, in order: SQLite's, or
    PostgreSQL's baseline (equal to the schema m001-m024 build, :mod:`.postgres`) and the
    later ones written for it."""
    if dialect == "sqlite":
        return MIGRATIONS
    if dialect == "postgresql":
        from memtrove.db.schema.postgres import MIGRATIONS as POSTGRES

        return POSTGRES
    raise ValueError(f"no migrations are written for the {dialect!r} dialect")
