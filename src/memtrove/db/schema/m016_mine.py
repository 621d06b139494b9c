"""Conversation import: one row per ``memtrove mine`` run.

- ``mine_runs``: the collection written to, the folder mined, when the run started and
  finished, how it ended (``running``, ``done`` or ``failed``), its counts, and the whole
  report as JSON (per-format counts, skipped reasons, unrecognised files). A collection
  that has a run here is a *mined* collection: memtrove owns its documents (no folder
  backs them), so ``update`` never touches them.
"""

NAME = "m016_mine"

STATEMENTS: tuple[str, ...] = (
    """
    CREATE TABLE mine_runs (
        id INTEGER PRIMARY KEY,
        collection TEXT NOT NULL,
        source TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        status TEXT NOT NULL DEFAULT 'running',
        files INTEGER NOT NULL DEFAULT 0,
        conversations INTEGER NOT NULL DEFAULT 0,
        exchanges INTEGER NOT NULL DEFAULT 0,
        written INTEGER NOT NULL DEFAULT 0,
        unchanged INTEGER NOT NULL DEFAULT 0,
        report TEXT
    )
    """,
    "CREATE INDEX mine_runs_collection ON mine_runs (collection, id)",
)
