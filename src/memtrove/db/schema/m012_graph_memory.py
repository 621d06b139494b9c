"""Graph memory: A-MEM notes, their evolution, entity mentions and co-occurrences, the
entity name index, enrichment state, cached intent classifications, and the links documents
write to one another.

- ``documents.amem_keywords`` / ``amem_tags`` (JSON arrays) and ``amem_context`` (one line):
  what enrichment says a document is about.
- ``memory_evolution``: each change enrichment made to a document's keywords or context
  because of a newer document (``triggered_by``), numbered per document, with the reason.
- ``entity_mentions`` / ``entity_cooccurrences``: which documents name which entities, and
  how often two entities are named together (``entity_a < entity_b``).
- ``entities_fts``: entity names for candidate lookup during resolution.
- ``entity_enrichment_state``: the hash of title + body a document was last enriched from,
  so an unchanged document is never enriched again.
- ``intent_classifications``: a query's intent, cached for an hour.
- ``document_links``: ``[text](other.md)``, ``[[wikilink]]`` and ``[[wikilink|alias]]`` as
  written (the target normalised within the collection), resolved or not; resolved ones are
  also ``reference`` edges in ``memory_relations``.
"""

NAME = "m012_graph_memory"

STATEMENTS: tuple[str, ...] = (
    "ALTER TABLE documents ADD COLUMN amem_keywords TEXT",
    "ALTER TABLE documents ADD COLUMN amem_tags TEXT",
    "ALTER TABLE documents ADD COLUMN amem_context TEXT",
    """
    CREATE TABLE memory_evolution (
        id INTEGER PRIMARY KEY,
        memory_id INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        triggered_by INTEGER REFERENCES documents (id) ON DELETE SET NULL,
        version INTEGER NOT NULL,
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
        doc_id INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        mention_text TEXT,
        PRIMARY KEY (entity_id, doc_id)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX entity_mentions_doc ON entity_mentions (doc_id)",
    """
    CREATE TABLE entity_cooccurrences (
        entity_a TEXT NOT NULL REFERENCES entity_nodes (entity_id) ON DELETE CASCADE,
        entity_b TEXT NOT NULL REFERENCES entity_nodes (entity_id) ON DELETE CASCADE,
        count INTEGER NOT NULL DEFAULT 1,
        last_cooccurred TEXT,
        PRIMARY KEY (entity_a, entity_b),
        CHECK (entity_a < entity_b)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX entity_cooccurrences_b ON entity_cooccurrences (entity_b)",
    """
    CREATE VIRTUAL TABLE entities_fts USING fts5(
        entity_id UNINDEXED, name, entity_type UNINDEXED,
        tokenize = 'unicode61 remove_diacritics 2'
    )
    """,
    """
    CREATE TABLE entity_enrichment_state (
        doc_id INTEGER PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
        input_hash TEXT NOT NULL,
        enriched_at TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE intent_classifications (
        query_hash TEXT PRIMARY KEY,
        intent TEXT NOT NULL,
        confidence REAL NOT NULL,
        temporal_start TEXT,
        temporal_end TEXT,
        cached_at TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE document_links (
        source_id INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        target TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('markdown', 'wiki')),
        link_text TEXT,
        target_id INTEGER REFERENCES documents (id) ON DELETE SET NULL,
        PRIMARY KEY (source_id, target, kind)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX document_links_target ON document_links (target)",
    "CREATE INDEX document_links_target_id ON document_links (target_id)",
)
