"""PostgreSQL's m027: the review fields of SQLite's
:mod:`memtrove.db.schema.m027_review_fields` (``review_by``, ``domain``, ``workstream`` on
``documents``, and the ``documents_review_by`` index), the same columns and types; folder
documents whose frontmatter may name a field are read again by the next update."""

NAME = "m027_review_fields"

STATEMENTS: tuple[str, ...] = (
    "ALTER TABLE documents ADD COLUMN review_by TEXT",
    "ALTER TABLE documents ADD COLUMN domain TEXT",
    "ALTER TABLE documents ADD COLUMN workstream TEXT",
    "CREATE INDEX documents_review_by ON documents (review_by)",
    # Re-read on the next update: the folder documents whose frontmatter may set a field.
    """
    UPDATE documents SET file_mtime_ns = NULL
    WHERE substr(collection, 1, 1) <> '_' AND hash IN (
        SELECT hash FROM content WHERE substr(doc, 1, 3) = '---'
        AND (doc LIKE '%review_by:%' OR doc LIKE '%domain:%' OR doc LIKE '%workstream:%')
    )
    """,
)
