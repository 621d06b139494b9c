"""A second vector space beside the first (``MEMTROVE_EMBED_SECOND``): a transformer's
vectors for paraphrase, fused as a third channel with BM25 and the default embedder.

- ``second_space``: the model identity and dimension of every second-space vector, and a
  ``version`` that moves whenever one is added, changed or removed (processes holding the
  vectors in memory reload when it moves). Clearing the space keeps the row, its identity
  emptied, so the version never goes back.
- ``second_vectors``: one float32 vector per fragment, keyed like ``fragments`` by content
  hash and sequence, so identical bodies share vectors and a renamed file keeps them. Plain
  blobs: the channel scores its candidates in memory, it needs no ANN index.
"""

NAME = "m023_second_vectors"

STATEMENTS = (
    """
    CREATE TABLE second_space (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        identity TEXT NOT NULL,
        dimensions INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        version INTEGER NOT NULL DEFAULT 0
    )
    """,
    """
    CREATE TABLE second_vectors (
        hash TEXT NOT NULL,
        seq INTEGER NOT NULL,
        embedding BLOB NOT NULL,
        embedded_at TEXT NOT NULL,
        PRIMARY KEY (hash, seq)
    )
    """,
    """
    CREATE TRIGGER second_vectors_added AFTER INSERT ON second_vectors
    BEGIN
        UPDATE second_space SET version = version + 1 WHERE id = 1;
    END
    """,
    """
    CREATE TRIGGER second_vectors_changed AFTER UPDATE ON second_vectors
    BEGIN
        UPDATE second_space SET version = version + 1 WHERE id = 1;
    END
    """,
    """
    CREATE TRIGGER second_vectors_removed AFTER DELETE ON second_vectors
    BEGIN
        UPDATE second_space SET version = version + 1 WHERE id = 1;
    END
    """,
)
