"""Moving in: one row per ``memtrove import`` run (an export file, or a ClawMem vault).

- ``import_runs``: what was imported (``kind``: ``export`` for memtrove's own JSON lines,
  ``clawmem`` for a ClawMem vault), from where, when the run started and finished, how it
  ended (``running``, ``done`` or ``failed``, with the error's line), whether it was a dry
  run, the records read and rows added, and the whole report as JSON. Unlike ``mine_runs``
  it owns no collection: it is history, shown by ``import_status`` and ``doctor``, and
  never exported.
"""

NAME = "m018_import_runs"

STATEMENTS: tuple[str, ...] = (
    """
    CREATE TABLE import_runs (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('export', 'clawmem')),
        source TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        status TEXT NOT NULL DEFAULT 'running',
        dry_run INTEGER NOT NULL DEFAULT 0,
        records INTEGER NOT NULL DEFAULT 0,
        added INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        report TEXT
    )
    """,
)
