"""The baseline's core tables: bodies, documents, fragments, both vector spaces, caches,
leases and vault bookkeeping, with the triggers that keep embed states and vector stamps.

- ``documents``: every column m001, m004, m005, m012 and m013 gave it, in SQLite's order
  (the columns ``ALTER TABLE`` added come after ``superseded_by``). ``documents_reset_embed``
  resets the embed state when a new body (``hash``) is written: a BEFORE trigger that sets
  the row's new values (SQLite's AFTER trigger updated the row again), same outcome.
- ``vector_version``: the random 63-bit stamp m024 made of m006's counter; its three
  ``content_vectors_*`` triggers draw a new one after each statement that added, changed or
  removed a vector (none when the statement touched no row, as SQLite's row triggers).
- ``second_space.version`` moves by one per second-space vector added, changed or removed
  (``second_vectors_*``), as m023's row triggers did: one statement adds its row count.
"""

# SQLite's random() & 9223372036854775807: a uniform non-negative 63-bit integer (31 + 32
# random bits; PostgreSQL's random() carries 52).
STAMP = "((floor(random() * 2147483648)::bigint << 32) | floor(random() * 4294967296)::bigint)"


def _counted(table: str, function: str) -> tuple[str, ...]:
    """One statement-level trigger per kind of change to ``table`` (named as m006/m023/m024
    named them), each seeing the rows it changed as ``changed``."""
    kinds = (
        ("added", "INSERT", "NEW"),
        ("changed", "UPDATE", "NEW"),
        ("removed", "DELETE", "OLD"),
    )
    return tuple(
        f"""
        CREATE TRIGGER {table}_{suffix} AFTER {event} ON {table}
        REFERENCING {side} TABLE AS changed
        FOR EACH STATEMENT EXECUTE FUNCTION {function}()
        """
        for suffix, event, side in kinds
    )


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
        id BIGINT PRIMARY KEY,
        collection TEXT NOT NULL,
        path TEXT NOT NULL,
        title TEXT NOT NULL,
        hash TEXT NOT NULL REFERENCES content (hash),
        docid TEXT NOT NULL,
        content_type TEXT NOT NULL DEFAULT 'note',
        quality_score DOUBLE PRECISION NOT NULL DEFAULT 0.5,
        confidence DOUBLE PRECISION NOT NULL DEFAULT 0.5,
        pinned BIGINT NOT NULL DEFAULT 0,
        snoozed_until TEXT,
        created_at TEXT NOT NULL,
        modified_at TEXT NOT NULL,
        authored_at TEXT,
        active BIGINT NOT NULL DEFAULT 1,
        tags TEXT,
        body_length BIGINT NOT NULL DEFAULT 0,
        file_size BIGINT,
        file_mtime_ns BIGINT,
        access_count BIGINT NOT NULL DEFAULT 0,
        last_accessed_at TEXT,
        revision_count BIGINT NOT NULL DEFAULT 1,
        duplicate_count BIGINT NOT NULL DEFAULT 1,
        invalidated_at TEXT,
        invalidated_by BIGINT,
        superseded_by BIGINT,
        embed_state TEXT NOT NULL DEFAULT 'pending',
        embed_attempts BIGINT NOT NULL DEFAULT 0,
        embed_error TEXT,
        forgotten_hash TEXT,
        amem_keywords TEXT,
        amem_tags TEXT,
        amem_context TEXT,
        archived_at TEXT,
        archive_reason TEXT,
        UNIQUE (collection, path)
    )
    """,
    "CREATE INDEX documents_hash ON documents (hash)",
    "CREATE UNIQUE INDEX documents_docid_unique ON documents (docid)",
    "CREATE INDEX documents_collection_active ON documents (collection, active)",
    "CREATE INDEX documents_effective_time ON documents (COALESCE(authored_at, modified_at))",
    "CREATE INDEX documents_embed_state ON documents (embed_state, active)",
    """
    CREATE INDEX documents_timeline ON documents
        (collection, content_type, COALESCE(authored_at, modified_at), path)
        WHERE active = 1
    """,
    "CREATE INDEX documents_archived ON documents (archived_at) WHERE archived_at IS NOT NULL",
    """
    CREATE FUNCTION documents_reset_embed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        NEW.embed_state := 'pending';
        NEW.embed_attempts := 0;
        NEW.embed_error := NULL;
        RETURN NEW;
    END
    $$
    """,
    """
    CREATE TRIGGER documents_reset_embed BEFORE UPDATE OF hash ON documents
    FOR EACH ROW WHEN (NEW.hash IS DISTINCT FROM OLD.hash)
    EXECUTE FUNCTION documents_reset_embed()
    """,
    """
    CREATE TABLE fragments (
        hash TEXT NOT NULL REFERENCES content (hash) ON DELETE CASCADE,
        seq BIGINT NOT NULL,
        fragment_type TEXT NOT NULL
            CHECK (fragment_type IN ('full', 'section', 'list', 'code', 'frontmatter')),
        label TEXT NOT NULL DEFAULT '',
        start_offset BIGINT NOT NULL,
        end_offset BIGINT NOT NULL,
        PRIMARY KEY (hash, seq)
    )
    """,
    # The one-row tables: always written with id 1, so no identity.
    """
    CREATE TABLE embedding_space (
        id BIGINT PRIMARY KEY CHECK (id = 1),
        identity TEXT NOT NULL,
        dimensions BIGINT NOT NULL CHECK (dimensions > 0),
        created_at TEXT NOT NULL
    )
    """,
    # id: the vector's row in the engine's vector index.
    """
    CREATE TABLE content_vectors (
        id BIGINT PRIMARY KEY,
        hash TEXT NOT NULL,
        seq BIGINT NOT NULL,
        model TEXT NOT NULL,
        fragment_type TEXT NOT NULL,
        fragment_label TEXT NOT NULL DEFAULT '',
        embed_input_fp TEXT NOT NULL,
        embedded_at TEXT NOT NULL,
        UNIQUE (hash, seq)
    )
    """,
    """
    CREATE TABLE vector_version (
        id BIGINT PRIMARY KEY CHECK (id = 1),
        version BIGINT NOT NULL
    )
    """,
    f"INSERT INTO vector_version (id, version) VALUES (1, {STAMP})",
    f"""
    CREATE FUNCTION content_vectors_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF EXISTS (SELECT 1 FROM changed) THEN
            UPDATE vector_version SET version = {STAMP} WHERE id = 1;
        END IF;
        RETURN NULL;
    END
    $$
    """,
    *_counted("content_vectors", "content_vectors_stamp"),
    """
    CREATE TABLE second_space (
        id BIGINT PRIMARY KEY CHECK (id = 1),
        identity TEXT NOT NULL,
        dimensions BIGINT NOT NULL,
        created_at TEXT NOT NULL,
        version BIGINT NOT NULL DEFAULT 0
    )
    """,
    """
    CREATE TABLE second_vectors (
        hash TEXT NOT NULL,
        seq BIGINT NOT NULL,
        embedding BYTEA NOT NULL,
        embedded_at TEXT NOT NULL,
        PRIMARY KEY (hash, seq)
    )
    """,
    """
    CREATE FUNCTION second_vectors_count() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        rows_changed BIGINT;
    BEGIN
        SELECT count(*) INTO rows_changed FROM changed;
        IF rows_changed > 0 THEN
            UPDATE second_space SET version = version + rows_changed WHERE id = 1;
        END IF;
        RETURN NULL;
    END
    $$
    """,
    *_counted("second_vectors", "second_vectors_count"),
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
        expires_at TEXT NOT NULL,
        holder_host TEXT,
        holder_pid_namespace TEXT,
        holder_pid BIGINT,
        holder_started BIGINT
    )
    """,
    """
    CREATE TABLE vault_state (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )
    """,
)
