"""Fragments: the embeddable pieces of each body, as character ranges into `content`.

Keyed by content hash, so identical bodies share fragments (and, later, vectors). Bodies
indexed before this migration get their fragments on the next `update`.
"""

NAME = "m002_fragments"

STATEMENTS: tuple[str, ...] = (
    """
    CREATE TABLE fragments (
        hash TEXT NOT NULL REFERENCES content(hash) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        fragment_type TEXT NOT NULL
            CHECK (fragment_type IN ('full', 'section', 'list', 'code', 'frontmatter')),
        label TEXT NOT NULL DEFAULT '',
        start_offset INTEGER NOT NULL,
        end_offset INTEGER NOT NULL,
        PRIMARY KEY (hash, seq)
    ) WITHOUT ROWID
    """,
)
