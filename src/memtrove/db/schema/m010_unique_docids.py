"""Every document gets a docid of its own, and the vault keeps it that way.

Until now a docid was the first 6 hex of the content hash, so two files with the same body
(a translated copy, a vendored duplicate) shared one, and ``get``, pin, snooze and forget
acted on whichever row came first. Within each group of rows sharing a docid, the row that
keeps it is the active one, else the oldest (lowest id); every other row gets the docid
followed by its place in the group in hex (``a1b2c3`` -> ``a1b2c301``, ``a1b2c302``), the
same rule the indexer now follows for new documents (see
:func:`memtrove.index.documents.free_docid`). So a reference held from before still names
the row it named first, and the old short docid is a prefix of every copy's new one.

Docids were always exactly 6 hex before this migration, so the suffixed ones cannot meet an
existing docid; the unique index then guards every later write.
"""

NAME = "m010_unique_docids"

STATEMENTS: tuple[str, ...] = (
    """
    CREATE TEMP TABLE m010_renumbered AS
    SELECT id, docid || printf('%02x', place) AS docid FROM (
        SELECT id, docid,
               ROW_NUMBER() OVER (PARTITION BY docid ORDER BY active DESC, id) - 1 AS place
        FROM documents
    )
    WHERE place > 0
    """,
    """
    UPDATE documents
    SET docid = (SELECT r.docid FROM m010_renumbered r WHERE r.id = documents.id)
    WHERE id IN (SELECT id FROM m010_renumbered)
    """,
    "DROP TABLE m010_renumbered",
    "DROP INDEX IF EXISTS documents_docid",
    "CREATE UNIQUE INDEX documents_docid_unique ON documents (docid)",
)
