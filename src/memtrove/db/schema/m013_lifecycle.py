"""Archiving: documents a lifecycle sweep took out of search, and the text to find them by.

- ``documents.archived_at``: when a sweep (or a caller) archived the document; NULL otherwise.
  An archived document is inactive (``active = 0``) and has no ``documents_fts`` row, so every
  search and the hooks leave it out; its body, fragments, vectors, relations, pin and counters
  stay. Its ``forgotten_hash`` is its body, so ``update`` leaves an unchanged file archived
  (an edited file comes back: editing it is using it).
- ``documents.archive_reason``: why (``unused 120 days (policy: note 90 days)``).
- ``archived_fts``: the full-text rows of archived documents (rowid = documents.id), so
  ``memtrove lifecycle search`` finds them; a restore moves the row back to ``documents_fts``.
"""

NAME = "m013_lifecycle"

STATEMENTS: tuple[str, ...] = (
    "ALTER TABLE documents ADD COLUMN archived_at TEXT",
    "ALTER TABLE documents ADD COLUMN archive_reason TEXT",
    "CREATE INDEX documents_archived ON documents (archived_at) WHERE archived_at IS NOT NULL",
    """
    CREATE VIRTUAL TABLE archived_fts USING fts5(
        filepath, title, body,
        tokenize = 'porter unicode61',
        content = '',
        contentless_delete = 1
    )
    """,
)
