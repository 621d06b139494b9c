"""The injection audit: for each context-surfacing run (``context_usage``), every document
it considered, injected or left out, with the reason and the passage length it got."""

NAME = "m022_injection_audit"

STATEMENTS = (
    """
    CREATE TABLE injection_audit (
        usage_id INTEGER NOT NULL REFERENCES context_usage(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        doc_id INTEGER,
        path TEXT NOT NULL,
        score REAL NOT NULL DEFAULT 0,
        status TEXT NOT NULL,
        reason TEXT NOT NULL DEFAULT '',
        chars INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (usage_id, position)
    )
    """,
)
