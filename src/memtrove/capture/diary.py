"""Diary entries: an agent's (or a person's) notes in ``_memtrove/diary/``.

One document per entry, ``diary/<YYYY-MM-DD>-<HHMMSS><mmm>-<topic>.md``, written through
the same path as every agent memory (:func:`memtrove.index.internal.write_internal`: one
document, redacted, indexed like a file and found by every search that includes the
agent's memories) with confidence :data:`DIARY_CONFIDENCE`. Its frontmatter names the
``agent`` and the ``topic``; :func:`read_diary` reads them back, newest first.

Names are hostile input: the topic becomes part of a file name only as a slug (a-z, 0-9,
``-``, ``_``; a topic with none of those is named by a hash), and both names are kept
whole, control characters removed, in the frontmatter. An entry is text of at most
:data:`MAX_ENTRY_CHARS` characters; control characters other than newlines and tabs are
dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any, NamedTuple

from memtrove.db.connection import Connection, write_transaction
from memtrove.errors import InvalidQueryError
from memtrove.retrieval.arguments import check_limit

__all__ = [
    "DEFAULT_TOPIC",
    "DIARY_CONFIDENCE",
    "DIARY_CONTENT_TYPE",
    "DIARY_FOLDER",
    "MAX_ENTRY_CHARS",
    "MAX_NAME_CHARS",
    "DiaryEntry",
    "clean_name",
    "diary_path",
    "read_diary",
    "topic_slug",
    "write_diary",
]

DIARY_FOLDER = "diary"
DIARY_CONFIDENCE = 0.7
DIARY_CONTENT_TYPE = "note"
DEFAULT_TOPIC = "general"
MAX_ENTRY_CHARS = 50_000
MAX_NAME_CHARS = 80
_SLUG_CHARS = 40
_SCAN_BATCH = 200  # diary documents read per query while looking for one agent's entries
_SCAN_LIMIT = 20_000  # documents looked through at most for one read
MEMORY_COLLECTION = "_memtrove"  # memtrove.index.internal's (importing it loads the indexer)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAME_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


class DiaryEntry(NamedTuple):
    """One diary entry: where it is stored, who wrote it, on what, when, and its text."""

    docid: str
    path: str
    agent: str
    topic: str
    written_at: str
    text: str

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


def clean_name(value: str, what: str) -> str:
    """An agent or topic name: control characters removed, spaces folded, at most
    :data:`MAX_NAME_CHARS` characters; InvalidQueryError when nothing is left."""
    name = " ".join(_NAME_CONTROLS.sub(" ", str(value)).split())[:MAX_NAME_CHARS].strip()
    if not name:
        raise InvalidQueryError(f"{what} must not be empty")
    return name


def topic_slug(topic: str) -> str:
    """The topic as it appears in a file name: lowercase a-z, 0-9, ``-`` and ``_``; a
    topic with none of them (``日記``, ``../..``) is ``t-`` and 8 hex digits of its hash."""
    slug = re.sub(r"[^a-z0-9_-]+", "-", topic.lower()).strip("-_")[:_SLUG_CHARS].strip("-_")
    if slug:
        return slug
    import hashlib

    return "t-" + hashlib.sha256(topic.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def diary_path(moment: datetime, topic: str) -> str:
    """``diary/<YYYY-MM-DD>-<HHMMSS><mmm>-<topic slug>.md`` for an entry written at
    ``moment`` (UTC)."""
    day = f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
    clock = f"{moment.hour:02d}{moment.minute:02d}{moment.second:02d}"
    return f"{DIARY_FOLDER}/{day}-{clock}{moment.microsecond // 1000:03d}-{topic_slug(topic)}.md"


def _clean_text(entry: str) -> str:
    text = _CONTROLS.sub("", str(entry).replace("\r\n", "\n").replace("\r", "\n")).strip()
    if not text:
        raise InvalidQueryError("a diary entry must not be empty")
    if len(text) > MAX_ENTRY_CHARS:
        raise InvalidQueryError(
            f"a diary entry holds at most {MAX_ENTRY_CHARS:,} characters, got {len(text):,}"
        )
    return text


def _title(agent: str, topic: str, text: str) -> str:
    first = " ".join(text.split("\n", 1)[0].lstrip("#").split())
    first = first if len(first) <= 60 else first[:59].rstrip() + "…"
    return f"Diary of {agent} ({topic}): {first}"


def write_diary(
    connection: Connection,
    entry: str,
    now: datetime,
    *,
    topic: str = DEFAULT_TOPIC,
    agent: str,
    redact: Callable[[str], str] = lambda text: text,
) -> DiaryEntry:
    """Save one entry (its own write transaction); InvalidQueryError for an empty or too
    long entry or an empty agent name."""
    from memtrove.capture.store import frontmatter  # loads the capture's modules: only here
    from memtrove.index.internal import write_internal
    from memtrove.text import to_iso

    text = redact(_clean_text(entry))
    agent = redact(clean_name(agent, "agent"))
    topic = redact(clean_name(topic or DEFAULT_TOPIC, "topic"))
    stamp = to_iso(now)
    title = _title(agent, topic, text)
    head = frontmatter(
        (
            ("title", title),
            ("type", DIARY_CONTENT_TYPE),
            ("agent", agent),
            ("topic", topic),
            ("authored_at", stamp),
            ("confidence", DIARY_CONFIDENCE),
        )
    )
    document = "\n".join([head, "", f"# {title}", "", text]) + "\n"
    base = diary_path(now, topic).removesuffix(".md")
    with write_transaction(connection):
        path = _free_path(connection, base)
        doc_id = write_internal(
            connection, MEMORY_COLLECTION, path, document, DIARY_CONTENT_TYPE, stamp
        )
        connection.execute(
            "UPDATE documents SET confidence = ? WHERE id = ?", (DIARY_CONFIDENCE, doc_id)
        )
        row = connection.execute("SELECT docid FROM documents WHERE id = ?", (doc_id,)).fetchone()
    return DiaryEntry(str(row[0]), f"{MEMORY_COLLECTION}/{path}", agent, topic, stamp, text)


def _free_path(connection: Connection, base: str) -> str:
    """``base.md``, or ``base-2.md``... when an entry of the same millisecond and topic
    is already stored: an entry never replaces another."""
    for number in range(1, 1000):
        path = f"{base}.md" if number == 1 else f"{base}-{number}.md"
        taken = connection.execute(
            "SELECT 1 FROM documents WHERE collection = ? AND path = ?",
            (MEMORY_COLLECTION, path),
        ).fetchone()
        if taken is None:
            return path
    raise InvalidQueryError("too many diary entries in one millisecond on one topic")


def read_diary(
    connection: Connection, limit: int = 10, agent: str | None = None
) -> list[DiaryEntry]:
    """The newest ``limit`` active entries, newest first; ``agent``: only that agent's
    (compared without regard to case)."""
    limit = check_limit(limit)
    wanted = None if agent is None else clean_name(agent, "agent").casefold()
    found: list[DiaryEntry] = []
    offset = 0
    while len(found) < limit and offset < _SCAN_LIMIT:
        batch = limit if wanted is None else _SCAN_BATCH
        rows = connection.execute(
            "SELECT d.docid, d.path, d.modified_at, c.doc FROM documents d "
            "JOIN content c ON c.hash = d.hash WHERE d.collection = ? AND d.path LIKE ? "
            "AND d.active = 1 ORDER BY d.path DESC, d.id DESC LIMIT ? OFFSET ?",
            (MEMORY_COLLECTION, f"{DIARY_FOLDER}/%", batch, offset),
        ).fetchall()
        for docid, path, modified, text in rows:
            entry = _entry(str(docid), str(path), str(modified), str(text))
            if wanted is None or entry.agent.casefold() == wanted:
                found.append(entry)
                if len(found) == limit:
                    break
        if len(rows) < batch:
            break
        offset += batch
    return found


def _entry(docid: str, path: str, modified: str, document: str) -> DiaryEntry:
    """An entry read back from its stored text (an edited or foreign file as well as it
    can: missing fields are empty)."""
    from memtrove.index.markdown import parse_markdown

    parsed = parse_markdown(document)
    fields = parsed.frontmatter
    body = parsed.text[parsed.body_start :].lstrip("\n")
    if body.startswith("# "):  # the heading write_diary puts first
        body = body.split("\n", 1)[1] if "\n" in body else ""
    written = fields.get("authored_at")
    return DiaryEntry(
        docid,
        f"{MEMORY_COLLECTION}/{path}",
        str(fields.get("agent") or ""),
        str(fields.get("topic") or ""),
        str(written) if written else modified,
        body.strip(),
    )
