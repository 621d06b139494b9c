"""Consolidation: the patterns merged from observations, the heavy lane's journal, and the
bookkeeping of the light lane and of deductive synthesis.

- ``consolidated_observations``: one pattern seen in several observations (``source_doc_ids``,
  a JSON array of document ids; ``proof_count`` their number), its ``trend`` (NEW, STABLE,
  STRENGTHENING, WEAKENING, STALE) and ``status`` (active or inactive). A contradiction
  either links the new row to the old one (``contradicts_id``, both stay active) or
  supersedes it (the old row inactive, with ``invalidated_at`` and ``superseded_by``).
- ``maintenance_runs``: one journal row per lane attempt (``lane`` heavy or light, ``phase``
  gate, tick, consolidate or deductive), with its ``status`` and ``reason``; a row whose
  ``finished_at`` is NULL was interrupted (a crash, ``kill -9``).
- ``consolidation_state``: when each light-lane phase last ran, so its cadence holds across
  every process that hosts the lane.
- ``deductive_sources``: which observations each deductive document was drawn from (an
  observation feeds at most one active deduction).
"""

NAME = "m014_consolidation"

STATEMENTS: tuple[str, ...] = (
    """
    CREATE TABLE consolidated_observations (
        id INTEGER PRIMARY KEY,
        observation TEXT NOT NULL,
        proof_count INTEGER NOT NULL DEFAULT 1,
        source_doc_ids TEXT NOT NULL DEFAULT '[]',
        trend TEXT NOT NULL DEFAULT 'NEW',
        status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
        collection TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        invalidated_at TEXT,
        invalidated_by INTEGER REFERENCES consolidated_observations (id) ON DELETE SET NULL,
        superseded_by INTEGER REFERENCES consolidated_observations (id) ON DELETE SET NULL,
        contradicts_id INTEGER REFERENCES consolidated_observations (id) ON DELETE SET NULL,
        contradiction_confidence REAL
    )
    """,
    "CREATE INDEX consolidated_observations_status "
    "ON consolidated_observations (status, collection)",
    """
    CREATE TABLE maintenance_runs (
        id INTEGER PRIMARY KEY,
        lane TEXT NOT NULL,
        phase TEXT NOT NULL,
        status TEXT NOT NULL,
        reason TEXT,
        selected_count INTEGER NOT NULL DEFAULT 0,
        processed_count INTEGER NOT NULL DEFAULT 0,
        created_count INTEGER NOT NULL DEFAULT 0,
        rejected_count INTEGER NOT NULL DEFAULT 0,
        null_call_count INTEGER NOT NULL DEFAULT 0,
        metrics_json TEXT,
        host TEXT,
        pid INTEGER,
        started_at TEXT NOT NULL,
        finished_at TEXT
    )
    """,
    "CREATE INDEX maintenance_runs_lane ON maintenance_runs (lane, phase, started_at)",
    """
    CREATE TABLE consolidation_state (
        phase TEXT PRIMARY KEY,
        last_run_at TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE deductive_sources (
        deductive_id INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        source_id INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        PRIMARY KEY (deductive_id, source_id)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX deductive_sources_source ON deductive_sources (source_id)",
)
