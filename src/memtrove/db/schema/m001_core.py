"""Content-addressed bodies, documents, and the full-text index."""

NAME = "m001_core"

STATEMENTS: tuple[str, ...] = (
    """
    CREATE TABLE content (
        hash TEXT PRIMARY KEY,
        doc TEXT NOT NULL,
        created_at TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE documents (
        id INTEGER PRIMARY KEY,
        collection TEXT NOT NULL,
        path TEXT NOT NULL,
        title TEXT NOT NULL,
        hash TEXT NOT NULL REFERENCES content(hash),
        docid TEXT NOT NULL,
        content_type TEXT NOT NULL DEFAULT 'note',
        quality_score REAL NOT NULL DEFAULT 0.5,
        confidence REAL NOT NULL DEFAULT 0.5,
        pinned INTEGER NOT NULL DEFAULT 0,
        snoozed_until TEXT,
        created_at TEXT NOT NULL,
        modified_at TEXT NOT NULL,
        authored_at TEXT,
        active INTEGER NOT NULL DEFAULT 1,
        tags TEXT,
        body_length INTEGER NOT NULL DEFAULT 0,
        file_size INTEGER,
        file_mtime_ns INTEGER,
        access_count INTEGER NOT NULL DEFAULT 0,
        last_accessed_at TEXT,
        revision_count INTEGER NOT NULL DEFAULT 1,
        duplicate_count INTEGER NOT NULL DEFAULT 1,
        invalidated_at TEXT,
        invalidated_by INTEGER,
        superseded_by INTEGER,
        UNIQUE (collection, path)
    )
    """,
    "CREATE INDEX documents_hash ON documents (hash)",
    "CREATE INDEX documents_docid ON documents (docid)",
    "CREATE INDEX documents_collection_active ON documents (collection, active)",
    "CREATE INDEX documents_effective_time ON documents (COALESCE(authored_at, modified_at))",
    # Contentless: bodies live once, in `content`; the index keeps only its postings.
    # Only active documents have a row here (rowid = documents.id).
    """
    CREATE VIRTUAL TABLE documents_fts USING fts5(
        filepath, title, body,
        tokenize = 'porter unicode61',
        content = '',
        contentless_delete = 1
    )
    """,
)
