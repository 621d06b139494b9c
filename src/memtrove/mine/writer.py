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

It passes the vault's redactor before it is hashed or stored. Documents are prepared
(redacted, hashed, parsed) as they come, outside any lock, and written in batches of
``batch_size`` exchanges (or ``MAX_BATCH_CHARS`` of text), each one short ``BEGIN
IMMEDIATE`` transaction through :func:`memtrove.index.internal.write_bulk` (one statement
per table). The vault's lock is taken per batch, so other callers get in between batches;
memory stays bounded and a failure loses at most the batch in hand (never half of one
document).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
import time
from collections.abc import Callable
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any, NamedTuple

from memtrove.db.connection import Connection, write_transaction
from memtrove.index.indexer import deactivate_documents
from memtrove.index.internal import BulkDocument, existing_rows, write_bulk
from memtrove.index.markdown import ParsedMarkdown, document_title, parse_markdown
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
DEFAULT_BATCH = 500
MAX_BATCH_CHARS = 16_000_000  # a batch of long exchanges is written sooner
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
_SPACES = re.compile(r"\s+")


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
    return _folder(conversation.format, conversation.conversation_id, conversation.source)


@functools.lru_cache(maxsize=256)  # every exchange of a conversation asks again
def _folder(format: str, conversation_id: str, source: Path) -> str:
    identity = "\0".join((format, conversation_id, _real_path(source)))
    return f"{format}/{_slug(conversation_id, 48)}-{_digest(identity)}"


def _key_name(key: str) -> str:
    slug = _slug(key, 64)
    return slug if slug == key else f"{slug[:40]}-{_digest(key)}"


def _quote(value: str) -> str:
    # A JSON string is a YAML flow scalar; encode_basestring is json.dumps(value,
    # ensure_ascii=False) without building an encoder per call.
    return str(encode_basestring(value))


def _title(exchange: Exchange) -> str:
    first = next((m for m in exchange.messages if m.role == "user"), exchange.messages[0])
    line = next((part.strip() for part in first.text.splitlines() if part.strip()), "")
    line = _SPACES.sub(" ", line)
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 3].rstrip() + "…"


def render(exchange: Exchange, source: str) -> ExchangeDocument | None:
    """The document for ``exchange`` (None when it is too short to keep)."""
    texts = [m.text.strip() for m in exchange.messages]
    if sum(map(len, texts)) < MIN_EXCHANGE_CHARS:
        return None
    body = "\n\n".join(
        f"**{m.speaker}:** {text}" for m, text in zip(exchange.messages, texts, strict=True)
    )
    conversation = exchange.conversation
    authored = exchange.authored_at
    speakers = exchange.speakers
    title = _title(exchange)
    frontmatter: dict[str, Any] = {
        "title": title,
        "content_type": "conversation",
        "authored_at": authored,
        "speakers": list(speakers),
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
        f"speakers: [{', '.join(map(_quote, speakers))}]",
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
    """Prepares exchange documents as they come and writes them in batches (or, in a dry
    run, only compares them with what the vault holds). ``lock`` (the vault's) is held
    while a batch uses the connection, never between batches."""

    def __init__(
        self,
        connection: Connection,
        collection: str,
        redact: Callable[[str], str],
        now: str,
        *,
        dry_run: bool = False,
        batch_size: int = DEFAULT_BATCH,
        lock: contextlib.AbstractContextManager[Any] | None = None,
    ) -> None:
        self._connection = connection
        self._collection = collection
        self._redact = redact
        self._now = now
        self._dry_run = dry_run
        self._batch_size = max(1, batch_size)
        self._lock = lock if lock is not None else contextlib.nullcontext()
        self._pending: list[BulkDocument] = []
        self._pending_chars = 0
        self._retire: list[tuple[str, frozenset[str]]] = []
        self.written = 0
        self.unchanged = 0
        self.retired = 0
        self.rewritten = 0
        """Rows given a new body or brought back: their old full-text rows were deleted."""
        self.ids: list[int] = []

    def add(self, document: ExchangeDocument, mtime_ns: int) -> None:
        item = self._prepare(document, mtime_ns)
        self._pending.append(item)
        self._pending_chars += len(item.text)
        if len(self._pending) >= self._batch_size or self._pending_chars >= MAX_BATCH_CHARS:
            self.flush()

    def retire_others(self, folder: str, kept: frozenset[str]) -> None:
        """After the batch in hand: deactivate the documents under ``folder`` not in
        ``kept`` (a conversation read again that no longer holds them)."""
        self._retire.append((folder, kept))

    def flush(self) -> None:
        """Write the batch in hand in one transaction (in a dry run, only count it)."""
        items, self._pending, self._pending_chars = self._pending, [], 0
        retire, self._retire = self._retire, []
        if not items and not retire:
            return
        # One thread: a writing thread beside the reader was measured slower, not faster
        # (each row's step gives the GIL back and waits to take it again).
        with self._lock:
            if self._dry_run:
                self._count(items)
                self.retired += sum(len(self._stale(folder, kept)) for folder, kept in retire)
                return
            with write_transaction(self._connection):
                done = write_bulk(self._connection, self._collection, items, self._now)
                for folder, kept in retire:
                    stale = self._stale(folder, kept)
                    self.retired += deactivate_documents(self._connection, stale)
        self.written += len(done.ids)
        self.unchanged += done.unchanged
        self.rewritten += done.rewritten
        self.ids.extend(done.ids)

    def _count(self, items: list[BulkDocument]) -> None:
        """A dry run: what writing ``items`` would do, one lookup per batch."""
        existing = existing_rows(self._connection, self._collection, (i.path for i in items))
        for item in items:
            row = existing.get(item.path)
            if row is not None and row.hash == item.hash and row.settled:
                self.unchanged += 1
            else:
                self.written += 1

    def _prepare(self, document: ExchangeDocument, mtime_ns: int) -> BulkDocument:
        text = self._redact(document.text)
        parsed = _parsed(document, text)
        data = text.encode("utf-8", errors="surrogatepass")
        return BulkDocument(
            path=document.path,
            text=text,
            hash=hashlib.sha256(data).hexdigest(),
            parsed=parsed,
            title=document_title(parsed, document.path),
            content_type="conversation",
            authored_at=document.authored_at,
            size=len(data),
            mtime_ns=mtime_ns,
        )

    def _stale(self, folder: str, kept: frozenset[str]) -> list[int]:
        # The paths under ``folder/`` as a range of the (collection, path) index: one seek,
        # where a LIKE read every active row of the collection once per conversation.
        rows = self._connection.execute(
            "SELECT id, path FROM documents WHERE collection = ? AND path >= ? AND path < ? "
            "AND active = 1",
            (self._collection, folder + "/", folder + "0"),  # "0" sorts right after "/"
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
