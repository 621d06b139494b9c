"""The agent's memory store: labelled entries, their earlier versions, dedup verdicts, and the
prediction and behavior engines.

- ``memory_stores``: store names (``global`` plus one per project).
- ``memory_entries``: one row per live entry, keyed by document id: the entry's text is a
  document of the internal collection ``_memtrove`` (path ``entries/<store>/<slug>.md``), so
  the same retrieval finds it. ``embedding`` is the whole entry's vector (float32), used for
  duplicates and the write-time warning; ``model`` names the embedder that made it.
- ``memory_entry_versions``: what an overwrite or a forget replaced, never lost.
- ``dedup_pairs``: verdicts on near-duplicate pairs, slugs stored sorted.
- ``prediction_*`` and ``behavior_*``: the same four tables each (matchers, items, edges,
  provenance); confidence is the Bayesian posterior of the (fractional) signal counts.
"""

NAME = "m008_memory"


def _engine(kind: str, item_table: str, item_column: str) -> tuple[str, ...]:
    return (
        f"""
        CREATE TABLE {kind}_matchers (
            id TEXT PRIMARY KEY,
            store TEXT NOT NULL REFERENCES memory_stores (name),
            description TEXT NOT NULL,
            embedding BLOB,
            model TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )
        """,
        f"""
        CREATE TABLE {item_table} (
            id TEXT PRIMARY KEY,
            store TEXT NOT NULL REFERENCES memory_stores (name),
            statement TEXT NOT NULL,
            rationale TEXT,
            embedding BLOB,
            model TEXT,
            confidence REAL NOT NULL DEFAULT 0.5,
            confirm_count REAL NOT NULL DEFAULT 0,
            disconfirm_count REAL NOT NULL DEFAULT 0,
            codified_at TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )
        """,
        f"""
        CREATE TABLE {kind}_edges (
            matcher_id TEXT NOT NULL REFERENCES {kind}_matchers (id) ON DELETE CASCADE,
            {item_column} TEXT NOT NULL REFERENCES {item_table} (id) ON DELETE CASCADE,
            weight REAL NOT NULL DEFAULT 1.0,
            created_at TEXT NOT NULL,
            PRIMARY KEY (matcher_id, {item_column})
        )
        """,
        f"""
        CREATE TABLE {kind}_provenance (
            id TEXT PRIMARY KEY,
            {item_column} TEXT NOT NULL REFERENCES {item_table} (id) ON DELETE CASCADE,
            signal TEXT NOT NULL,
            detail TEXT,
            created_at TEXT NOT NULL
        )
        """,
        f"CREATE INDEX {kind}_matchers_store ON {kind}_matchers (store)",
        f"CREATE INDEX {kind}_provenance_item ON {kind}_provenance ({item_column}, created_at)",
    )


STATEMENTS: tuple[str, ...] = (
    "CREATE TABLE memory_stores (name TEXT PRIMARY KEY, created_at TEXT NOT NULL)",
    "INSERT INTO memory_stores (name, created_at) VALUES ('global', '1970-01-01T00:00:00Z')",
    """
    CREATE TABLE memory_entries (
        doc_id INTEGER PRIMARY KEY REFERENCES documents (id),
        store TEXT NOT NULL REFERENCES memory_stores (name),
        slug TEXT NOT NULL,
        label TEXT NOT NULL,
        branch TEXT,
        confidence INTEGER CHECK (confidence IS NULL OR confidence BETWEEN 1 AND 10),
        archived INTEGER NOT NULL DEFAULT 0,
        embedding BLOB,
        model TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        recall_count INTEGER NOT NULL DEFAULT 0,
        last_recalled_at TEXT,
        UNIQUE (store, slug)
    )
    """,
    "CREATE INDEX memory_entries_branch ON memory_entries (store, branch)",
    """
    CREATE TABLE memory_entry_versions (
        id INTEGER PRIMARY KEY,
        store TEXT NOT NULL,
        slug TEXT NOT NULL,
        label TEXT NOT NULL,
        content TEXT NOT NULL,
        branch TEXT,
        confidence INTEGER,
        written_at TEXT NOT NULL,
        replaced_at TEXT NOT NULL,
        reason TEXT NOT NULL CHECK (reason IN ('overwrite', 'forget'))
    )
    """,
    "CREATE INDEX memory_entry_versions_slug ON memory_entry_versions (store, slug, id)",
    """
    CREATE TABLE dedup_pairs (
        store TEXT NOT NULL,
        slug_a TEXT NOT NULL,
        slug_b TEXT NOT NULL,
        status TEXT NOT NULL
            CHECK (status IN ('duplicate', 'supplement', 'contradiction', 'unrelated')),
        checked_at TEXT NOT NULL,
        PRIMARY KEY (store, slug_a, slug_b),
        CHECK (slug_a < slug_b)
    )
    """,
    *_engine("prediction", "predictions", "prediction_id"),
    *_engine("behavior", "behaviors", "behavior_id"),
)
