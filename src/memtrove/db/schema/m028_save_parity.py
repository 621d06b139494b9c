"""Saving parity with ClawMem's ``saveMemory``, and observation fragments.

- ``documents.normalized_hash``: SHA-256 of a saved memory's body, lowercased with its
  whitespace collapsed (:func:`memtrove.index.internal.normalized_hash`), and
  ``documents.last_seen_at``: when the same memory was last saved again. A memory saved
  again within 30 minutes (same collection, content type and normalized hash) is not
  written twice: the first one's ``duplicate_count`` goes up (the frequency boost reads it).
  NULL for documents read from folders and for memories saved before this migration.
- The dedupe index ``(collection, content_type, normalized_hash, created_at)``.
- ``fragments.fragment_type`` also accepts ``fact`` and ``narrative`` (an observation's
  facts and narrative, embedded on their own). SQLite cannot change a CHECK in place, so
  the table is copied into a new one (nothing references it).
"""

from collections.abc import Callable

from memtrove.db.connection import Connection

NAME = "m028_save_parity"

FRAGMENT_TYPES = "('full', 'section', 'list', 'code', 'frontmatter', 'fact', 'narrative')"


def _widen_fragment_types(connection: Connection) -> None:
    connection.execute(
        f"""
        CREATE TABLE fragments_m028 (
            hash TEXT NOT NULL REFERENCES content(hash) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            fragment_type TEXT NOT NULL
                CHECK (fragment_type IN {FRAGMENT_TYPES}),
            label TEXT NOT NULL DEFAULT '',
            start_offset INTEGER NOT NULL,
            end_offset INTEGER NOT NULL,
            PRIMARY KEY (hash, seq)
        ) WITHOUT ROWID
        """
    )
    connection.execute(
        "INSERT INTO fragments_m028 (hash, seq, fragment_type, label, start_offset, end_offset) "
        "SELECT hash, seq, fragment_type, label, start_offset, end_offset FROM fragments"
    )
    connection.execute("DROP TABLE fragments")
    connection.execute("ALTER TABLE fragments_m028 RENAME TO fragments")


STATEMENTS: tuple[str | Callable[[Connection], None], ...] = (
    "ALTER TABLE documents ADD COLUMN normalized_hash TEXT",
    "ALTER TABLE documents ADD COLUMN last_seen_at TEXT",
    "CREATE INDEX documents_dedupe ON documents "
    "(collection, content_type, normalized_hash, created_at)",
    _widen_fragment_types,
)
