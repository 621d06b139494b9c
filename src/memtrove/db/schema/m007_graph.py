"""The graph: typed edges between documents, entities, and facts about entities.

- ``memory_relations``: one edge per (source, target, type); types are semantic,
  supporting, contradicts, causal, temporal, entity and usage. ``weight`` only grows when the
  same edge is written again (the strongest evidence wins, reruns do not inflate it).
- ``entity_nodes``: named things (``vault:type:slug`` ids), found by lowercase name.
- ``entity_triples``: subject-predicate-object facts with a validity window; the object is
  another entity or a literal.
"""

NAME = "m007_graph"

STATEMENTS: tuple[str, ...] = (
    """
    CREATE TABLE memory_relations (
        source_id INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        target_id INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        relation_type TEXT NOT NULL,
        weight REAL NOT NULL DEFAULT 1.0,
        metadata TEXT,
        created_at TEXT NOT NULL,
        contradict_confidence REAL,
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
        mention_count INTEGER NOT NULL DEFAULT 0,
        last_seen TEXT,
        canonical_id TEXT,
        vault TEXT NOT NULL DEFAULT 'default'
    )
    """,
    "CREATE INDEX entity_nodes_name ON entity_nodes (LOWER(name), vault)",
    """
    CREATE TABLE entity_triples (
        id INTEGER PRIMARY KEY,
        subject_entity_id TEXT NOT NULL REFERENCES entity_nodes (entity_id),
        predicate TEXT NOT NULL,
        object_entity_id TEXT REFERENCES entity_nodes (entity_id),
        object_literal TEXT,
        valid_from TEXT,
        valid_to TEXT,
        confidence REAL NOT NULL DEFAULT 1.0,
        source_doc_id INTEGER REFERENCES documents (id) ON DELETE SET NULL,
        source_fact TEXT,
        CHECK ((object_entity_id IS NULL) != (object_literal IS NULL))
    )
    """,
    "CREATE INDEX entity_triples_subject ON entity_triples (subject_entity_id, predicate)",
    "CREATE INDEX entity_triples_object ON entity_triples (object_entity_id)",
)
