"""Sessions and hooks: what was injected into which session, and what to remember of it.

Names and columns follow the inventory (ClawMem's ``store.ts``), with two changes:
``co_activations`` pairs document ids (``doc_a < doc_b``) rather than display paths, so a
rename keeps its counts; ``session_log`` also keeps the running counters a session listing
shows (``last_seen_at``, ``turns``, ``injected_documents``, ``estimated_tokens``).

- ``context_usage``: one row per hook run that surfaced (or chose not to surface) context.
- ``recall_events``: one row per document injected by such a run; ``recall_stats`` is the
  per-document summary, kept current by the same transaction.
- ``hook_dedupe``: when each hook last saw a prompt (by SHA-256 of the trimmed prompt).
- ``documents.forgotten_hash``: the body a user asked to forget; the indexer leaves the
  document inactive while its file still has that body.
"""

NAME = "m005_sessions"

STATEMENTS: tuple[str, ...] = (
    "ALTER TABLE documents ADD COLUMN forgotten_hash TEXT",
    """
    CREATE TABLE session_log (
        session_id TEXT PRIMARY KEY,
        started_at TEXT NOT NULL,
        last_seen_at TEXT NOT NULL,
        ended_at TEXT,
        turns INTEGER NOT NULL DEFAULT 0,
        injected_documents INTEGER NOT NULL DEFAULT 0,
        estimated_tokens INTEGER NOT NULL DEFAULT 0,
        handoff_path TEXT,
        machine TEXT,
        files_changed TEXT,
        summary TEXT
    )
    """,
    "CREATE INDEX session_log_last_seen ON session_log (last_seen_at)",
    """
    CREATE TABLE context_usage (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        timestamp TEXT NOT NULL,
        hook_name TEXT NOT NULL,
        injected_paths TEXT NOT NULL DEFAULT '[]',
        estimated_tokens INTEGER NOT NULL DEFAULT 0,
        was_referenced INTEGER NOT NULL DEFAULT 0,
        turn_index INTEGER NOT NULL DEFAULT 0,
        query_text TEXT
    )
    """,
    "CREATE INDEX context_usage_session ON context_usage (session_id, hook_name, timestamp)",
    """
    CREATE TABLE recall_events (
        id INTEGER PRIMARY KEY,
        doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        query_hash TEXT NOT NULL DEFAULT '',
        search_score REAL NOT NULL DEFAULT 0,
        session_id TEXT NOT NULL,
        usage_id INTEGER REFERENCES context_usage(id) ON DELETE SET NULL,
        turn_index INTEGER NOT NULL DEFAULT 0,
        surfaced_at TEXT NOT NULL,
        was_referenced INTEGER NOT NULL DEFAULT 0
    )
    """,
    "CREATE INDEX recall_events_doc ON recall_events (doc_id, query_hash)",
    "CREATE INDEX recall_events_session ON recall_events (session_id, doc_id)",
    "CREATE INDEX recall_events_usage ON recall_events (usage_id)",
    """
    CREATE TABLE recall_stats (
        doc_id INTEGER PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
        recall_count INTEGER NOT NULL DEFAULT 0,
        unique_queries INTEGER NOT NULL DEFAULT 0,
        recall_days INTEGER NOT NULL DEFAULT 0,
        total_score REAL NOT NULL DEFAULT 0,
        max_score REAL NOT NULL DEFAULT 0,
        first_recalled_at TEXT,
        last_recalled_at TEXT,
        diversity_score REAL NOT NULL DEFAULT 0,
        spacing_score REAL NOT NULL DEFAULT 0,
        negative_count INTEGER NOT NULL DEFAULT 0
    )
    """,
    """
    CREATE TABLE hook_dedupe (
        hook_name TEXT NOT NULL,
        prompt_hash TEXT NOT NULL,
        prompt_preview TEXT NOT NULL DEFAULT '',
        last_seen_at TEXT NOT NULL,
        PRIMARY KEY (hook_name, prompt_hash)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE co_activations (
        doc_a INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        doc_b INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        count INTEGER NOT NULL DEFAULT 0,
        last_seen TEXT NOT NULL,
        PRIMARY KEY (doc_a, doc_b),
        CHECK (doc_a < doc_b)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX co_activations_b ON co_activations (doc_b)",
)
