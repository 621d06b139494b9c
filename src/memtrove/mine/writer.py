"""One ``conversation`` document per exchange, written into a mined collection.

A document's path comes from its conversation and its exchange's key
(``claude-code/<session>-<hash>/<message uuid>.md``), never from a counter, so mining a
file again finds the same paths (unchanged documents are left alone) and a file that grew
adds only its new exchanges. The text is::

    ---
    title: "the first line of the user's message"
    content_type: conversation
    authored_at: 2026-02-10T21:12:02Z
    speakers: ["User", "Claude"]
    conversation_id: "55604662-..."
    exchange: "7d48cbd2-..."
    source: "marot-spotter__short.jsonl"
    format: claude-code
    ---

    **User:** ...

    **Claude:** ...

It passes the vault's redactor before it is hashed or stored. Documents are written in
batches, each one short ``BEGIN IMMEDIATE`` transaction, so memory stays bounded and a
failure loses at most the batch in hand (never half of one document).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from memtrove.db.connection import Connection, write_transaction
from memtrove.index.classify import quality_score
from memtrove.index.indexer import (
    _insert_document,
    _store_content,
    _write_document,
    deactivate_documents,
)
from memtrove.index.markdown import ParsedMarkdown, document_title, parse_markdown
from memtrove.index.preparing import Prepared
from memtrove.index.scanner import FileEntry
from memtrove.mine.exchanges import Conversation, Exchange

__all__ = [
    "MIN_EXCHANGE_CHARS",
    "ExchangeDocument",
    "Writer",
    "conversation_folder",
    "document_path",
    "render",
    "source_mtime_ns",
]

MIN_EXCHANGE_CHARS = 30  # shorter exchanges ("ok", a bare "/model") are not worth a document
TITLE_CHARS = 80
DEFAULT_BATCH = 200
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


class ExchangeDocument(NamedTuple):
    path: str
    text: str
    authored_at: str | None
    title: str = ""
    frontmatter: dict[str, Any] | None = None


def _slug(value: str, limit: int) -> str:
    return _SAFE.sub("-", value).strip("-.")[:limit] or "x"


def _digest(value: str, size: int = 8) -> str:
    return hashlib.sha256(value.encode("utf-8", errors="surrogatepass")).hexdigest()[:size]


def conversation_folder(conversation: Conversation) -> str:
    """``<format>/<conversation id>-<hash>``: the folder of a conversation's documents, the
    hash of its id and its source file's real path (mined again from any parent folder, a
    file lands in the same place; two copies of a session in two places are two sources)."""
    identity = "\0".join(
        (conversation.format, conversation.conversation_id, _real_path(conversation.source))
    )
    slug = _slug(conversation.conversation_id, 48)
    return f"{conversation.format}/{slug}-{_digest(identity)}"


def _key_name(key: str) -> str:
    slug = _slug(key, 64)
    return slug if slug == key else f"{slug[:40]}-{_digest(key)}"


def _quote(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a YAML flow scalar


def _title(exchange: Exchange) -> str:
    first = next((m for m in exchange.messages if m.role == "user"), exchange.messages[0])
    line = next((part.strip() for part in first.text.splitlines() if part.strip()), "")
    line = re.sub(r"\s+", " ", line)
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 3].rstrip() + "…"


def render(exchange: Exchange, source: str) -> ExchangeDocument | None:
    """The document for ``exchange`` (None when it is too short to keep)."""
    body = "\n\n".join(f"**{m.speaker}:** {m.text.strip()}" for m in exchange.messages)
    if sum(len(m.text.strip()) for m in exchange.messages) < MIN_EXCHANGE_CHARS:
        return None
    conversation = exchange.conversation
    authored = exchange.authored_at
    title = _title(exchange)
    frontmatter: dict[str, Any] = {
        "title": title,
        "content_type": "conversation",
        "authored_at": authored,
        "speakers": list(exchange.speakers),
        "conversation_id": conversation.conversation_id,
        "conversation_title": conversation.title,
        "exchange": exchange.key,
        "source": source,
        "format": conversation.format,
    }
    lines = [
        "---",
        f"title: {_quote(title)}",
        "content_type: conversation",
    ]
    if authored:
        lines.append(f"authored_at: {authored}")
    lines += [
        f"speakers: [{', '.join(_quote(s) for s in exchange.speakers)}]",
        f"conversation_id: {_quote(conversation.conversation_id)}",
    ]
    if conversation.title:
        lines.append(f"conversation_title: {_quote(conversation.title)}")
    lines += [
        f"exchange: {_quote(exchange.key)}",
        f"source: {_quote(source)}",
        f"format: {conversation.format}",
        "---",
        "",
        body,
        "",
    ]
    kept = {key: value for key, value in frontmatter.items() if value is not None}
    return ExchangeDocument(document_path(exchange), "\n".join(lines), authored, title, kept)


def document_path(exchange: Exchange) -> str:
    """Where ``exchange``'s document lives in its collection."""
    return f"{conversation_folder(exchange.conversation)}/{_key_name(exchange.key)}.md"


class Writer:
    """Buffers exchange documents and writes them in batches (or, in a dry run, only
    compares them with what the vault holds)."""

    def __init__(
        self,
        connection: Connection,
        collection: str,
        redact: Callable[[str], str],
        now: str,
        *,
        dry_run: bool = False,
        batch_size: int = DEFAULT_BATCH,
    ) -> None:
        self._connection = connection
        self._collection = collection
        self._redact = redact
        self._now = now
        self._dry_run = dry_run
        self._batch_size = max(1, batch_size)
        self._pending: list[tuple[ExchangeDocument, int]] = []
        self._retire: list[tuple[str, frozenset[str]]] = []
        self.written = 0
        self.unchanged = 0
        self.retired = 0
        self.ids: list[int] = []

    def add(self, document: ExchangeDocument, mtime_ns: int) -> None:
        self._pending.append((document, mtime_ns))
        if len(self._pending) >= self._batch_size:
            self.flush()

    def retire_others(self, folder: str, kept: frozenset[str]) -> None:
        """After the batch in hand: deactivate the documents under ``folder`` not in
        ``kept`` (a conversation read again that no longer holds them)."""
        self._retire.append((folder, kept))

    def flush(self) -> None:
        items = [self._prepare(document, mtime) for document, mtime in self._pending]
        self._pending.clear()
        retire, self._retire = self._retire, []
        if self._dry_run:
            for item in items:
                row = self._existing(item.file.path)
                if row is not None and row[1] == item.hash and row[2]:
                    self.unchanged += 1
                else:
                    self.written += 1
            self.retired += sum(len(self._stale(folder, kept)) for folder, kept in retire)
            return
        if not items and not retire:
            return
        with write_transaction(self._connection):
            for item in items:
                self._write(item)
            for folder, kept in retire:
                stale = self._stale(folder, kept)
                self.retired += deactivate_documents(self._connection, stale)

    def _prepare(self, document: ExchangeDocument, mtime_ns: int) -> Prepared:
        text = self._redact(document.text)
        parsed = _parsed(document, text)
        title = document_title(parsed, document.path)
        data = text.encode("utf-8", errors="surrogatepass")
        return Prepared(
            file=FileEntry(path=document.path, absolute="", size=len(data), mtime_ns=mtime_ns),
            text=text,
            hash=hashlib.sha256(data).hexdigest(),
            parsed=parsed,
            title=title,
            content_type="conversation",
            quality=quality_score(parsed.body, bool(parsed.frontmatter_span)),
            authored_at=document.authored_at,
            tags=None,
            fragments=None,  # cut by _store_content, only for a body the vault lacks
        )

    def _existing(self, path: str) -> tuple[int, str, bool] | None:
        """(id, hash, settled) of the document at ``path``: settled when it is active, or
        was forgotten or archived (the indexer's rule: a rerun does not bring those back)."""
        row = self._connection.execute(
            "SELECT id, hash, active, forgotten_hash FROM documents "
            "WHERE collection = ? AND path = ?",
            (self._collection, path),
        ).fetchone()
        if row is None:
            return None
        return int(row[0]), str(row[1]), bool(row[2]) or row[3] is not None

    def _write(self, item: Prepared) -> None:
        row = self._existing(item.file.path)
        if row is not None and row[1] == item.hash and row[2]:
            self.unchanged += 1
            return
        _store_content(self._connection, item, self._now)
        if row is None:
            doc_id = _insert_document(self._connection, self._collection, item, self._now)
        else:  # changed, or taken out of search with its collection or branch: back in
            doc_id = row[0]
            _write_document(
                self._connection,
                doc_id,
                item,
                self._collection,
                self._now,
                revision=row[1] != item.hash,
            )
        self.written += 1
        self.ids.append(doc_id)

    def _stale(self, folder: str, kept: frozenset[str]) -> list[int]:
        escaped = folder.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self._connection.execute(
            "SELECT id, path FROM documents WHERE collection = ? AND active = 1 "
            "AND path LIKE ? ESCAPE '\\'",
            (self._collection, escaped + "/%"),
        ).fetchall()
        return [int(doc_id) for doc_id, path in rows if str(path) not in kept]


def _parsed(document: ExchangeDocument, text: str) -> ParsedMarkdown:
    """What :func:`parse_markdown` finds in ``text``, without parsing its YAML again when
    redaction changed nothing: render wrote that frontmatter and knows where it ends."""
    if text != document.text or document.frontmatter is None or not document.title:
        return parse_markdown(text)
    closing = text.index("\n---\n", 3) + 1
    return ParsedMarkdown(
        text=text,
        body_start=closing + 4,
        frontmatter=document.frontmatter,
        frontmatter_span=(4, closing),
        title=document.title,
    )


@functools.lru_cache(maxsize=1024)
def _real_path(path: Path) -> str:
    return str(path.resolve())


def source_mtime_ns(path: object) -> int:
    """The source's modification time (a document's ``modified_at``), now if unknown."""
    try:
        return int(path.stat().st_mtime_ns)  # type: ignore[attr-defined]
    except (OSError, AttributeError):
        return time.time_ns()
