"""The Beads mirror: the issues ``bd list --json`` printed for a project folder, and their
dependencies, as the last ``beads_sync`` saw them (see :mod:`memtrove.capture.beads`).

- ``beads_issues``: one row per (project folder, issue id); ``doc_id`` is the issue's
  document in the internal collection (NULL once that document is gone).
- ``beads_dependencies``: one row per (project, issue, issue it depends on, type), the
  dependency records of the issues as bd printed them (``blocks``, ``related``,
  ``parent-child``, ``discovered-from``...); deleted with their issue.
"""

NAME = "m026_beads"

STATEMENTS: tuple[str, ...] = (
    """
    CREATE TABLE beads_issues (
        project TEXT NOT NULL,
        issue_id TEXT NOT NULL,
        title TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT '',
        priority INTEGER,
        issue_type TEXT NOT NULL DEFAULT '',
        assignee TEXT,
        labels TEXT,
        created_at TEXT,
        updated_at TEXT,
        closed_at TEXT,
        doc_id INTEGER REFERENCES documents (id) ON DELETE SET NULL,
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
