"""PostgreSQL's m029: the text index keeps each term's positions in its postings
(:mod:`memtrove.db.postgres.text_store`), as FTS5 keeps them in its doclists, instead of a
row per document in ``text_places``.

- ``text_postings.positions``: for each row of the term's ``docs``, in order, its positions
  of the term in each column, column after column, ascending; each a 4-byte big-endian
  integer (``c0 + c1 + c2`` of them per row). Filled from ``text_places``; the entries of a
  row taken out of its segment (``text_dead``: never read, dropped by the next merge) get
  zeros of the same length, so every entry's place in the bytes follows from the counts.
- ``text_places`` is dropped.
- The text index's arrays are stored uncompressed (``STORAGE EXTERNAL``): compressing them
  cost the server a third of a first index's time, and a phrase reads a slice of a
  term's positions without reading the rest.
"""

NAME = "m029_text_positions"

_FILL = """
UPDATE text_postings p SET positions = COALESCE((
    SELECT string_agg(
        CASE WHEN octet_length(e.found) = 4 * (e.c0 + e.c1 + e.c2) THEN e.found
             ELSE decode(repeat('00', 4 * (e.c0 + e.c1 + e.c2)), 'hex') END,
        ''::bytea ORDER BY e.k)
    FROM (
        SELECT u.k, u.c0, u.c1, u.c2, (
            SELECT string_agg(int4send(x.pos), ''::bytea ORDER BY x.j)
            FROM text_places f
            CROSS JOIN LATERAL (SELECT array_position(f.terms, p.term) AS n) t
            CROSS JOIN LATERAL unnest(f.positions[f.starts[t.n] + 1 : f.starts[t.n + 1]])
                WITH ORDINALITY AS x (pos, j)
            WHERE f.idx = p.idx AND f.doc_id = u.doc AND t.n IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM text_dead d
                              WHERE d.idx = p.idx AND d.doc_id = u.doc AND d.seg = p.seg)
        ) AS found
        FROM unnest(p.docs, p.c0, p.c1, p.c2) WITH ORDINALITY AS u (doc, c0, c1, c2, k)
    ) e
), ''::bytea)
"""

STATEMENTS: tuple[str, ...] = (
    "ALTER TABLE text_postings ADD COLUMN positions BYTEA",
    _FILL,
    "ALTER TABLE text_postings ALTER COLUMN positions SET NOT NULL",
    "DROP TABLE text_places",
    "ALTER TABLE text_postings ALTER COLUMN docs SET STORAGE EXTERNAL, "
    "ALTER COLUMN c0 SET STORAGE EXTERNAL, ALTER COLUMN c1 SET STORAGE EXTERNAL, "
    "ALTER COLUMN c2 SET STORAGE EXTERNAL, ALTER COLUMN lengths SET STORAGE EXTERNAL, "
    "ALTER COLUMN positions SET STORAGE EXTERNAL",
)
