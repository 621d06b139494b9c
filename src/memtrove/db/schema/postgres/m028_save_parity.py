"""PostgreSQL's m028: saving parity and observation fragments, as SQLite's
:mod:`memtrove.db.schema.m028_save_parity` builds them (the same columns and index; the
fragment type CHECK replaced in place)."""

NAME = "m028_save_parity"

STATEMENTS: tuple[str, ...] = (
    "ALTER TABLE documents ADD COLUMN normalized_hash TEXT",
    "ALTER TABLE documents ADD COLUMN last_seen_at TEXT",
    "CREATE INDEX documents_dedupe ON documents "
    "(collection, content_type, normalized_hash, created_at)",
    "ALTER TABLE fragments DROP CONSTRAINT fragments_fragment_type_check",
    "ALTER TABLE fragments ADD CONSTRAINT fragments_fragment_type_check CHECK (fragment_type "
    "IN ('full', 'section', 'list', 'code', 'frontmatter', 'fact', 'narrative'))",
)
