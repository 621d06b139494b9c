"""Stop-hook capture: what the feedback loop and the decision extractor keep track of.

- ``recall_events.checked_at``: when ``feedback-loop`` compared the event's turn with the
  assistant's reply (NULL: not yet). Each event is judged once, so ``access_count``,
  ``negative_count`` and confidence move once per surfacing however often the hook runs.
- ``session_log.capture_cursor``: the fingerprint of the last turn ``decision-extractor``
  read, so each Stop reads only the turns after it.
- ``utility_signals``: per document, how often it was surfaced and how often the reply
  used it (the inventory's lazily created table, created here instead).
"""

NAME = "m015_capture"

STATEMENTS: tuple[str, ...] = (
    "ALTER TABLE recall_events ADD COLUMN checked_at TEXT",
    "ALTER TABLE session_log ADD COLUMN capture_cursor TEXT",
    """
    CREATE TABLE utility_signals (
        doc_id INTEGER PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
        surfaced_count INTEGER NOT NULL DEFAULT 0,
        referenced_count INTEGER NOT NULL DEFAULT 0,
        last_surfaced TEXT,
        last_referenced TEXT
    )
    """,
)
