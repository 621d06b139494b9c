"""PostgreSQL's m026: the Beads mirror, as SQLite's :mod:`memtrove.db.schema.m026_beads`
builds it (the same tables, columns, keys, foreign keys and indexes; INTEGER is BIGINT)."""

NAME = "m026_beads"

STATEMENTS: tuple[str, ...] = (
    """
    CREATE TABLE beads_issues (
        project TEXT NOT NULL,
        issue_id TEXT NOT NULL,
        title TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT '',
        priority BIGINT,
        issue_type TEXT NOT NULL DEFAULT '',
        assignee TEXT,
        labels TEXT,
        created_at TEXT,
        updated_at TEXT,
        closed_at TEXT,
        doc_id BIGINT REFERENCES documents (id) ON DELETE SET NULL,
        synced_at TEXT NOT NULL,
        PRIMARY KEY (project, issue_id)
    )
    """,
    "CREATE INDEX beads_issues_doc ON beads_issues (doc_id)",
    """
    CREATE TABLE beads_dependencies (
        project TEXT NOT NULL,
        issue_id TEXT NOT NULL,
        depends_on_id TEXT NOT NULL,
        dependency_type TEXT NOT NULL,
        created_at TEXT,
        synced_at TEXT NOT NULL,
        PRIMARY KEY (project, issue_id, depends_on_id, dependency_type),
        FOREIGN KEY (project, issue_id) REFERENCES beads_issues (project, issue_id)
            ON DELETE CASCADE
    )
    """,
    "CREATE INDEX beads_dependencies_target ON beads_dependencies (project, depends_on_id)",
)
