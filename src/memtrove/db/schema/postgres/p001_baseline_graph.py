"""The baseline's graph and memory tables: edges, entities and their facts, mentions and
co-occurrences, A-MEM evolution, links between documents (m007, m012), and the agent's
memory store with its prediction and behavior engines (m008).

- The two CHECKs that order text (``dedup_pairs``: ``slug_a < slug_b``,
  ``entity_cooccurrences``: ``entity_a < entity_b``) compare under the "C" collation: the
  code sorts the pair by code point, as SQLite's BINARY collation compares, whatever the
  database's own collation is.
- ``memory_entries`` and ``entity_enrichment_state`` are keyed by the document's id, a plain
  BIGINT (no identity).
"""


def _engine(kind: str, item_table: str, item_column: str) -> tuple[str, ...]:
    """One engine's four tables and two indexes, as m008 builds them."""
    return (
        f"""
        CREATE TABLE {kind}_matchers (
            id TEXT PRIMARY KEY,
            store TEXT NOT NULL REFERENCES memory_stores (name),
            description TEXT NOT NULL,
            embedding BYTEA,
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
            embedding BYTEA,
            model TEXT,
            confidence DOUBLE PRECISION NOT NULL DEFAULT 0.5,
            confirm_count DOUBLE PRECISION NOT NULL DEFAULT 0,
            disconfirm_count DOUBLE PRECISION NOT NULL DEFAULT 0,
            codified_at TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )
        """,
        f"""
        CREATE TABLE {kind}_edges (
            matcher_id TEXT NOT NULL REFERENCES {kind}_matchers (id) ON DELETE CASCADE,
            {item_column} TEXT NOT NULL REFERENCES {item_table} (id) ON DELETE CASCADE,
            weight DOUBLE PRECISION NOT NULL DEFAULT 1.0,
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
    """
    CREATE TABLE memory_relations (
        source_id BIGINT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        target_id BIGINT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        relation_type TEXT NOT NULL,
        weight DOUBLE PRECISION NOT NULL DEFAULT 1.0,
        metadata TEXT,
        created_at TEXT NOT NULL,
        contradict_confidence DOUBLE PRECISION,
        PRIMARY KEY (source_id, target_id, relation_type),
        CHECK (source_id != target_id)
    )
    """,
    "CREATE INDEX memory_relations_target ON memory_relations (target_id, relation_type)",
    """
    CREATE TABLE entity_nodes (
        entity_id TEXT PRIMARY KEY,
        entity_type TEXT NOT NULL,
        name TEXT NOT NULL,
        description TEXT,
        mention_count BIGINT NOT NULL DEFAULT 0,
        last_seen TEXT,
        canonical_id TEXT,
        vault TEXT NOT NULL DEFAULT 'default'
    )
    """,
    "CREATE INDEX entity_nodes_name ON entity_nodes (LOWER(name), vault)",
    """
    CREATE TABLE entity_triples (
        id BIGINT PRIMARY KEY,
        subject_entity_id TEXT NOT NULL REFERENCES entity_nodes (entity_id),
        predicate TEXT NOT NULL,
        object_entity_id TEXT REFERENCES entity_nodes (entity_id),
        object_literal TEXT,
        valid_from TEXT,
        valid_to TEXT,
        confidence DOUBLE PRECISION NOT NULL DEFAULT 1.0,
        source_doc_id BIGINT REFERENCES documents (id) ON DELETE SET NULL,
        source_fact TEXT,
        CHECK ((object_entity_id IS NULL) != (object_literal IS NULL))
    )
    """,
    "CREATE INDEX entity_triples_subject ON entity_triples (subject_entity_id, predicate)",
    "CREATE INDEX entity_triples_object ON entity_triples (object_entity_id)",
    """
    CREATE TABLE memory_evolution (
        id BIGINT PRIMARY KEY,
        memory_id BIGINT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        triggered_by BIGINT REFERENCES documents (id) ON DELETE SET NULL,
        version BIGINT NOT NULL,
        previous_keywords TEXT,
        new_keywords TEXT,
        previous_context TEXT,
        new_context TEXT,
        reasoning TEXT,
        created_at TEXT NOT NULL,
        UNIQUE (memory_id, version)
    )
    """,
    """
    CREATE TABLE entity_mentions (
        entity_id TEXT NOT NULL REFERENCES entity_nodes (entity_id) ON DELETE CASCADE,
        doc_id BIGINT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        mention_text TEXT,
        PRIMARY KEY (entity_id, doc_id)
    )
    """,
    "CREATE INDEX entity_mentions_doc ON entity_mentions (doc_id)",
    """
    CREATE TABLE entity_cooccurrences (
        entity_a TEXT NOT NULL REFERENCES entity_nodes (entity_id) ON DELETE CASCADE,
        entity_b TEXT NOT NULL REFERENCES entity_nodes (entity_id) ON DELETE CASCADE,
        count BIGINT NOT NULL DEFAULT 1,
        last_cooccurred TEXT,
        PRIMARY KEY (entity_a, entity_b),
        CHECK ((entity_a COLLATE "C") < (entity_b COLLATE "C"))
    )
    """,
    "CREATE INDEX entity_cooccurrences_b ON entity_cooccurrences (entity_b)",
    """
    CREATE TABLE entity_enrichment_state (
        doc_id BIGINT PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
        input_hash TEXT NOT NULL,
        enriched_at TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE intent_classifications (
        query_hash TEXT PRIMARY KEY,
        intent TEXT NOT NULL,
        confidence DOUBLE PRECISION NOT NULL,
        temporal_start TEXT,
        temporal_end TEXT,
        cached_at TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE document_links (
        source_id BIGINT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        target TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('markdown', 'wiki')),
        link_text TEXT,
        target_id BIGINT REFERENCES documents (id) ON DELETE SET NULL,
        PRIMARY KEY (source_id, target, kind)
    )
    """,
    "CREATE INDEX document_links_target ON document_links (target)",
    "CREATE INDEX document_links_target_id ON document_links (target_id)",
    "CREATE TABLE memory_stores (name TEXT PRIMARY KEY, created_at TEXT NOT NULL)",
    "INSERT INTO memory_stores (name, created_at) VALUES ('global', '1970-01-01T00:00:00Z')",
    """
    CREATE TABLE memory_entries (
        doc_id BIGINT PRIMARY KEY REFERENCES documents (id),
        store TEXT NOT NULL REFERENCES memory_stores (name),
        slug TEXT NOT NULL,
        label TEXT NOT NULL,
        branch TEXT,
        confidence BIGINT CHECK (confidence IS NULL OR confidence BETWEEN 1 AND 10),
        archived BIGINT NOT NULL DEFAULT 0,
        embedding BYTEA,
        model TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        recall_count BIGINT NOT NULL DEFAULT 0,
        last_recalled_at TEXT,
        UNIQUE (store, slug)
    )
    """,
    "CREATE INDEX memory_entries_branch ON memory_entries (store, branch)",
    """
    CREATE TABLE memory_entry_versions (
        id BIGINT PRIMARY KEY,
        store TEXT NOT NULL,
        slug TEXT NOT NULL,
        label TEXT NOT NULL,
        content TEXT NOT NULL,
        branch TEXT,
        confidence BIGINT,
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
        CHECK ((slug_a COLLATE "C") < (slug_b COLLATE "C"))
    )
    """,
    *_engine("prediction", "predictions", "prediction_id"),
    *_engine("behavior", "behaviors", "behavior_id"),
)
