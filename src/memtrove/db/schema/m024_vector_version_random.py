"""The vector counter becomes a random stamp: a new value at every change of the vectors.

What keeps the vectors outside the vault (the mapped file of one-shot searches, see
:mod:`memtrove.retrieval.vector_file`) is trusted only while the stamp it was written at is
the vault's. A counter can come back to an earlier value (a vault restored from a copy, then
changed as often again) while the vectors differ; a random 63-bit stamp does not.
"""

NAME = "m024_vector_version_random"

_STAMP = "(random() & 9223372036854775807)"

STATEMENTS: tuple[str, ...] = (
    "DROP TRIGGER IF EXISTS content_vectors_added",
    "DROP TRIGGER IF EXISTS content_vectors_changed",
    "DROP TRIGGER IF EXISTS content_vectors_removed",
    f"""
    CREATE TRIGGER content_vectors_added AFTER INSERT ON content_vectors
    BEGIN
        UPDATE vector_version SET version = {_STAMP} WHERE id = 1;
    END
    """,
    f"""
    CREATE TRIGGER content_vectors_changed AFTER UPDATE ON content_vectors
    BEGIN
        UPDATE vector_version SET version = {_STAMP} WHERE id = 1;
    END
    """,
    f"""
    CREATE TRIGGER content_vectors_removed AFTER DELETE ON content_vectors
    BEGIN
        UPDATE vector_version SET version = {_STAMP} WHERE id = 1;
    END
    """,
    f"UPDATE vector_version SET version = {_STAMP} WHERE id = 1",
)
