"""A counter that moves whenever a stored vector is added, replaced or removed.

Processes that keep the vectors in memory (``memtrove serve``, a hook's reader connection)
compare it before each vector search. ``PRAGMA data_version`` would also move for every
session row a hook writes, and reloading 90k vectors for each of those costs ~100 ms.
"""

NAME = "m006_vector_version"

STATEMENTS: tuple[str, ...] = (
    """
    CREATE TABLE vector_version (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        version INTEGER NOT NULL
    )
    """,
    "INSERT INTO vector_version (id, version) VALUES (1, 0)",
    """
    CREATE TRIGGER content_vectors_added AFTER INSERT ON content_vectors
    BEGIN
        UPDATE vector_version SET version = version + 1 WHERE id = 1;
    END
    """,
    """
    CREATE TRIGGER content_vectors_changed AFTER UPDATE ON content_vectors
    BEGIN
        UPDATE vector_version SET version = version + 1 WHERE id = 1;
    END
    """,
    """
    CREATE TRIGGER content_vectors_removed AFTER DELETE ON content_vectors
    BEGIN
        UPDATE vector_version SET version = version + 1 WHERE id = 1;
    END
    """,
)
