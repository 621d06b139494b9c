"""Staleness reviews: three frontmatter fields on ``documents``.

- ``review_by``: the date (``YYYY-MM-DD``) by which a document's author wants it reviewed;
  from that day it is due (see :mod:`memtrove.index.staleness`), whatever its collection's
  ``stale_after_days`` says.
- ``domain`` and ``workstream``: the area of knowledge and the line of work a note belongs
  to, as its frontmatter names them (free text, up to 100 characters).

All three are NULL for documents without them. The index serves the "due for review"
question. Folder documents whose stored text opens with frontmatter naming one of the
fields lose their recorded mtime, so the next ``update`` reads their files again and fills
the fields (an unchanged body is not rewritten, only its fields and file stamps).
"""

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
