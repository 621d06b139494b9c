"""The baseline's session and maintenance tables: what hooks injected and what came of it
(m005, m009, m015, m019, m022), consolidation's patterns and journal (m014), and the runs
of ``memtrove mine`` and ``memtrove import`` (m016, m018).

Every per-document table keyed by ``doc_id`` (``recall_stats``, ``utility_signals``) takes
the document's id, so its key is a plain BIGINT, not an identity.
"""

STATEMENTS: tuple[str, ...] = (
    """
    CREATE TABLE session_log (
        session_id TEXT PRIMARY KEY,
        started_at TEXT NOT NULL,
        last_seen_at TEXT NOT NULL,
        ended_at TEXT,
        turns BIGINT NOT NULL DEFAULT 0,
        injected_documents BIGINT NOT NULL DEFAULT 0,
        estimated_tokens BIGINT NOT NULL DEFAULT 0,
        handoff_path TEXT,
        machine TEXT,
        files_changed TEXT,
        summary TEXT,
        capture_cursor TEXT,
        project TEXT
    )
    """,
    "CREATE INDEX session_log_last_seen ON session_log (last_seen_at)",
    "CREATE INDEX session_log_project ON session_log (project, ended_at)",
    """
    CREATE TABLE context_usage (
        id BIGINT PRIMARY KEY,
        session_id TEXT NOT NULL,
        timestamp TEXT NOT NULL,
        hook_name TEXT NOT NULL,
        injected_paths TEXT NOT NULL DEFAULT '[]',
        estimated_tokens BIGINT NOT NULL DEFAULT 0,
        was_referenced BIGINT NOT NULL DEFAULT 0,
        turn_index BIGINT NOT NULL DEFAULT 0,
        query_text TEXT
    )
    """,
    "CREATE INDEX context_usage_session ON context_usage (session_id, hook_name, timestamp)",
    "CREATE INDEX context_usage_hook ON context_usage (hook_name, id)",
    """
    CREATE TABLE recall_events (
        id BIGINT PRIMARY KEY,
        doc_id BIGINT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        query_hash TEXT NOT NULL DEFAULT '',
        search_score DOUBLE PRECISION NOT NULL DEFAULT 0,
        session_id TEXT NOT NULL,
        usage_id BIGINT REFERENCES context_usage (id) ON DELETE SET NULL,
        turn_index BIGINT NOT NULL DEFAULT 0,
        surfaced_at TEXT NOT NULL,
        was_referenced BIGINT NOT NULL DEFAULT 0,
        checked_at TEXT
    )
    """,
    "CREATE INDEX recall_events_doc ON recall_events (doc_id, query_hash)",
    "CREATE INDEX recall_events_session ON recall_events (session_id, doc_id)",
    "CREATE INDEX recall_events_usage ON recall_events (usage_id)",
    """
    CREATE TABLE recall_stats (
        doc_id BIGINT PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
        recall_count BIGINT NOT NULL DEFAULT 0,
        unique_queries BIGINT NOT NULL DEFAULT 0,
        recall_days BIGINT NOT NULL DEFAULT 0,
        total_score DOUBLE PRECISION NOT NULL DEFAULT 0,
        max_score DOUBLE PRECISION NOT NULL DEFAULT 0,
        first_recalled_at TEXT,
        last_recalled_at TEXT,
        diversity_score DOUBLE PRECISION NOT NULL DEFAULT 0,
        spacing_score DOUBLE PRECISION NOT NULL DEFAULT 0,
        negative_count BIGINT NOT NULL DEFAULT 0
    )
    """,
    """
    CREATE TABLE hook_dedupe (
        hook_name TEXT NOT NULL,
        prompt_hash TEXT NOT NULL,
        prompt_preview TEXT NOT NULL DEFAULT '',
        last_seen_at TEXT NOT NULL,
        PRIMARY KEY (hook_name, prompt_hash)
    )
    """,
    """
    CREATE TABLE co_activations (
        doc_a BIGINT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        doc_b BIGINT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        count BIGINT NOT NULL DEFAULT 0,
        last_seen TEXT NOT NULL,
        PRIMARY KEY (doc_a, doc_b),
        CHECK (doc_a < doc_b)
    )
    """,
    "CREATE INDEX co_activations_b ON co_activations (doc_b)",
    """
    CREATE TABLE utility_signals (
        doc_id BIGINT PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
        surfaced_count BIGINT NOT NULL DEFAULT 0,
        referenced_count BIGINT NOT NULL DEFAULT 0,
        last_surfaced TEXT,
        last_referenced TEXT
    )
    """,
    """
    CREATE TABLE injection_audit (
        usage_id BIGINT NOT NULL REFERENCES context_usage (id) ON DELETE CASCADE,
        position BIGINT NOT NULL,
        doc_id BIGINT,
        path TEXT NOT NULL,
        score DOUBLE PRECISION NOT NULL DEFAULT 0,
        status TEXT NOT NULL,
        reason TEXT NOT NULL DEFAULT '',
        chars BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (usage_id, position)
    )
    """,
    """
    CREATE TABLE consolidated_observations (
        id BIGINT PRIMARY KEY,
        observation TEXT NOT NULL,
        proof_count BIGINT NOT NULL DEFAULT 1,
        source_doc_ids TEXT NOT NULL DEFAULT '[]',
        trend TEXT NOT NULL DEFAULT 'NEW',
        status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
        collection TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        invalidated_at TEXT,
        invalidated_by BIGINT REFERENCES consolidated_observations (id) ON DELETE SET NULL,
        superseded_by BIGINT REFERENCES consolidated_observations (id) ON DELETE SET NULL,
        contradicts_id BIGINT REFERENCES consolidated_observations (id) ON DELETE SET NULL,
        contradiction_confidence DOUBLE PRECISION
    )
    """,
    "CREATE INDEX consolidated_observations_status "
    "ON consolidated_observations (status, collection)",
    """
    CREATE TABLE maintenance_runs (
        id BIGINT PRIMARY KEY,
        lane TEXT NOT NULL,
        phase TEXT NOT NULL,
        status TEXT NOT NULL,
        reason TEXT,
        selected_count BIGINT NOT NULL DEFAULT 0,
        processed_count BIGINT NOT NULL DEFAULT 0,
        created_count BIGINT NOT NULL DEFAULT 0,
        rejected_count BIGINT NOT NULL DEFAULT 0,
        null_call_count BIGINT NOT NULL DEFAULT 0,
        metrics_json TEXT,
        host TEXT,
        pid BIGINT,
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
        deductive_id BIGINT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        source_id BIGINT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        PRIMARY KEY (deductive_id, source_id)
    )
    """,
    "CREATE INDEX deductive_sources_source ON deductive_sources (source_id)",
    """
    CREATE TABLE mine_runs (
        id BIGINT PRIMARY KEY,
        collection TEXT NOT NULL,
        source TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        status TEXT NOT NULL DEFAULT 'running',
        files BIGINT NOT NULL DEFAULT 0,
        conversations BIGINT NOT NULL DEFAULT 0,
        exchanges BIGINT NOT NULL DEFAULT 0,
        written BIGINT NOT NULL DEFAULT 0,
        unchanged BIGINT NOT NULL DEFAULT 0,
        report TEXT
    )
    """,
    "CREATE INDEX mine_runs_collection ON mine_runs (collection, id)",
    """
    CREATE TABLE import_runs (
        id BIGINT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('export', 'clawmem')),
        source TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        status TEXT NOT NULL DEFAULT 'running',
        dry_run BIGINT NOT NULL DEFAULT 0,
        records BIGINT NOT NULL DEFAULT 0,
        added BIGINT NOT NULL DEFAULT 0,
        error TEXT,
        report TEXT
    )
    """,
)
