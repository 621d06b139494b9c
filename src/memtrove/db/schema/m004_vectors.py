"""Vectors, model caches and job leases.

- ``embedding_space``: the one space (model identity + dimension) the stored vectors belong
  to. Vectors of another space are never mixed in: a different model is refused until a
  forced re-embed clears them.
- ``content_vectors``: one row per embedded fragment (keyed like ``fragments`` by content
  hash and seq); its ``id`` is the rowid of the fragment's vector in the sqlite-vec table
  ``vectors_vec``, created when the first vector fixes the dimension.
- Per-document embed state (pending / synced / failed, attempts, last error); a new body
  resets it to pending.
- ``llm_cache``: answers of the LLM and reranker, keyed by a hash of model + input.
- ``worker_leases``: token-fenced leases so two processes never run the same job.
- ``documents_timeline``: documents of a collection and type in time order (conversation
  neighbours).
"""

NAME = "m004_vectors"

STATEMENTS: tuple[str, ...] = (
    """
    CREATE TABLE embedding_space (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        identity TEXT NOT NULL,
        dimensions INTEGER NOT NULL CHECK (dimensions > 0),
        created_at TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE content_vectors (
        id INTEGER PRIMARY KEY,
        hash TEXT NOT NULL,
        seq INTEGER NOT NULL,
        model TEXT NOT NULL,
        fragment_type TEXT NOT NULL,
        fragment_label TEXT NOT NULL DEFAULT '',
        embed_input_fp TEXT NOT NULL,
        embedded_at TEXT NOT NULL,
        UNIQUE (hash, seq)
    )
    """,
    "ALTER TABLE documents ADD COLUMN embed_state TEXT NOT NULL DEFAULT 'pending'",
    "ALTER TABLE documents ADD COLUMN embed_attempts INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE documents ADD COLUMN embed_error TEXT",
    "CREATE INDEX documents_embed_state ON documents (embed_state, active)",
    # Conversation turns in order: the neighbours that hybrid search propagates scores to.
    """
    CREATE INDEX documents_timeline ON documents
        (collection, content_type, COALESCE(authored_at, modified_at), path)
        WHERE active = 1
    """,
    """
    CREATE TRIGGER documents_reset_embed AFTER UPDATE OF hash ON documents
    WHEN NEW.hash IS NOT OLD.hash
    BEGIN
        UPDATE documents SET embed_state = 'pending', embed_attempts = 0, embed_error = NULL
        WHERE id = NEW.id;
    END
    """,
    """
    CREATE TABLE llm_cache (
        hash TEXT PRIMARY KEY,
        result TEXT NOT NULL,
        created_at TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE worker_leases (
        worker_name TEXT PRIMARY KEY,
        lease_token TEXT NOT NULL,
        acquired_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
    )
    """,
)
