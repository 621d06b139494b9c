"""Documents written by memtrove itself (agent memories), not read from a folder.

They live in internal collections (names starting with ``_``, which users cannot take), are
indexed exactly like files (content, fragments, full-text, vectors by the embed job) and are
never touched by ``update``: no folder backs them. The caller holds the write transaction.
"""

from __future__ import annotations

import hashlib
import time

from memtrove.db.connection import Connection
from memtrove.index.classify import quality_score
from memtrove.index.indexer import (
    _insert_document,
    _store_content,
    _write_document,
    deactivate_documents,
)
from memtrove.index.markdown import document_title, parse_markdown
from memtrove.index.preparing import Prepared
from memtrove.index.scanner import FileEntry
from memtrove.security.redaction import redact_text

__all__ = ["MEMORY_COLLECTION", "deactivate_internal", "write_internal"]

MEMORY_COLLECTION = "_memtrove"


def write_internal(
    connection: Connection, collection: str, path: str, text: str, content_type: str, now: str
) -> int:
    """Create or replace (and reactivate) ``collection/path`` with ``text``; its doc id.
    Secrets are redacted here too, whatever the caller did."""
    if not collection.startswith("_"):
        raise ValueError(f"{collection!r} is not an internal collection")
    text = redact_text(text)
    parsed = parse_markdown(text)
    data = text.encode("utf-8", errors="surrogatepass")
    item = Prepared(
        file=FileEntry(path=path, absolute="", size=len(data), mtime_ns=time.time_ns()),
        text=text,
        hash=hashlib.sha256(data).hexdigest(),
        parsed=parsed,
        title=document_title(parsed, path),
        content_type=content_type,
        quality=quality_score(parsed.body, bool(parsed.frontmatter_span)),
        authored_at=None,
        tags=None,
    )
    _store_content(connection, item, now)
    row = connection.execute(
        "SELECT id, hash, active FROM documents WHERE collection = ? AND path = ?",
        (collection, path),
    ).fetchone()
    if row is None:
        _insert_document(connection, collection, item, now)
        found = connection.execute(
            "SELECT id FROM documents WHERE collection = ? AND path = ?", (collection, path)
        ).fetchone()
        return int(found[0])
    doc_id = int(row[0])
    if str(row[1]) != item.hash or not row[2]:
        _write_document(
            connection, doc_id, item, collection, now, revision=str(row[1]) != item.hash
        )
    return doc_id


def deactivate_internal(connection: Connection, doc_id: int) -> None:
    """Take an internal document out of search (its text stays in the vault)."""
    deactivate_documents(connection, [doc_id])
