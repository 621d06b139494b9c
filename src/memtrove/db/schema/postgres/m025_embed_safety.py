"""PostgreSQL's twin of SQLite's :mod:`memtrove.db.schema.m025_embed_safety`: the geometry
canary's baselines (``embed_canary``) and the vault's health flags (``vault_flags``), with
the same columns, keys and NOT NULLs (BLOB is BYTEA)."""

NAME = "m025_embed_safety"

STATEMENTS: tuple[str, ...] = (
    """
    CREATE TABLE embed_canary (
        probe_id TEXT NOT NULL,
        profile_key TEXT NOT NULL,
        embedding BYTEA NOT NULL,
        pair_margins TEXT NOT NULL,
        embedded_at TEXT NOT NULL,
        PRIMARY KEY (probe_id, profile_key)
    )
    """,
    """
    CREATE TABLE vault_flags (
        flag TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )
    """,
)
