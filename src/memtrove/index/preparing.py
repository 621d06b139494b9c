"""Reading one file for the indexer: open it safely, decode, redact, parse, classify, cut
its fragments. The file is opened from the collection's folder through
:func:`memtrove.files.open_beneath`: a link (the file, or a folder above it, swapped for
one since the scan), a FIFO or a device, or a file grown past 5 MB is skipped with its
reason, never followed or read.

Frontmatter the document keeps as fields: ``authored_at`` (``authored_at``, ``authored``,
``date``, ``created``, ``created_at``), ``tags``, and the review fields ``review_by`` (a
date, stored ``YYYY-MM-DD``; a datetime keeps its date as written), ``domain`` and
``workstream`` (text, whitespace collapsed, at most :data:`LABEL_LIMIT` characters). A
review field of the wrong shape (``review_by: next week``, ``domain: [a, b]``) is left
out with a notice in the update's report; it never fails the file. A pure step (no database, no shared state), so it can run in another process
(:mod:`memtrove.index.workers`); the indexer applies what it returns, in order.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from memtrove.files import LEAVES, NOT_REGULAR, SYMLINK, Refused, open_beneath, read_capped
from memtrove.index.classify import classify_content_type, quality_score
from memtrove.index.markdown import (
    ParsedMarkdown,
    document_title,
    parse_markdown,
    split_fragments,
)
from memtrove.index.scanner import MAX_FILE_BYTES, FileEntry
from memtrove.results import Collection, FileIssue, SkipReason
from memtrove.text import parse_iso_datetime, scrub, segment_cjk

if TYPE_CHECKING:
    from memtrove.db.text_tokens import Tokenized

__all__ = [
    "LABEL_LIMIT",
    "FragmentRow",
    "Outcome",
    "Prepared",
    "body_hash",
    "decode_file",
    "fragment_rows",
    "prepare_file",
    "review_fields",
]

LABEL_LIMIT = 100  # characters of a domain or workstream

FragmentRow = tuple[int, str, str, int, int]  # seq, type, label, start, end
_PREPARED_FIELDS = (
    "file",
    "text",
    "hash",
    "parsed",
    "title",
    "content_type",
    "quality",
    "authored_at",
    "tags",
    "notices",
    "fragments",
    "review_by",
    "domain",
    "workstream",
)
# the opener's refusals by the reason update reports; the one left is the size cap
_REFUSALS = {
    SYMLINK: SkipReason.SYMLINK,
    NOT_REGULAR: SkipReason.NOT_REGULAR,
    LEAVES: SkipReason.SYMLINK,
}


class Prepared:
    """One file, read and parsed, ready to be written. A slotted class rather than a
    dataclass: :mod:`dataclasses` costs an update a few milliseconds to import."""

    __slots__ = (*_PREPARED_FIELDS, "tokens")

    def __init__(
        self,
        file: FileEntry,
        text: str,
        hash: str,
        parsed: ParsedMarkdown,
        title: str,
        content_type: str,
        quality: float,
        authored_at: str | None,
        tags: str | None,
        notices: list[str] | None = None,
        fragments: list[FragmentRow] | None = None,
        review_by: str | None = None,
        domain: str | None = None,
        workstream: str | None = None,
    ) -> None:
        self.file = file
        self.text = text
        self.hash = hash
        self.parsed = parsed
        self.title = title
        self.content_type = content_type
        self.quality = quality
        self.authored_at = authored_at
        self.tags = tags
        self.notices: list[str] = [] if notices is None else notices
        # computed with the rest, off the write path
        self.fragments: list[FragmentRow] | None = fragments
        self.review_by = review_by  # YYYY-MM-DD
        self.domain = domain
        self.workstream = workstream
        # its text-index row tokenized beforehand (a helper process, for an index that
        # takes tokens): derived from the rest, so equality leaves it out
        self.tokens: Tokenized | None = None

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _PREPARED_FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _PREPARED_FIELDS)
        return f"Prepared({shown})"


class Outcome(NamedTuple):
    """What reading one file gave: the document to write (or None), and what to report."""

    item: Prepared | None
    skipped: tuple[FileIssue, ...] = ()
    notices: tuple[FileIssue, ...] = ()
    unreadable: bool = False  # could not be read: its document is kept as it was


def decode_file(data: bytes) -> tuple[str, bool]:
    """A file's bytes as the text ``update`` indexes (a leading byte-order mark dropped), and
    whether undecodable bytes were replaced with U+FFFD."""
    try:
        text, replaced = data.decode("utf-8"), False
    except UnicodeDecodeError:
        text, replaced = data.decode("utf-8", errors="replace"), True
    return text.removeprefix("\ufeff"), replaced


def body_hash(text: str) -> str:
    """The hash a body is stored under (``content.hash``, ``documents.hash``)."""
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


def prepare_file(
    collection: Collection,
    file: FileEntry,
    redact: Callable[[str], str] | None,
) -> Outcome:
    """Read, redact (``redact`` None: verbatim), parse and classify ``file``
    (:func:`tokenize_outcomes` then tokenizes a batch's text-index rows, where wanted)."""

    def skip(reason: SkipReason, detail: str = "") -> Outcome:
        return Outcome(None, (FileIssue(collection.name, file.path, reason, detail),))

    try:
        with open_beneath(collection.path, file.path, max_bytes=MAX_FILE_BYTES) as handle:
            data = read_capped(handle, MAX_FILE_BYTES, file.path)
    except Refused as refused:
        # Replaced since the scan (by a FIFO, a link, a larger file): not a document any more.
        return skip(_REFUSALS.get(refused.reason, SkipReason.TOO_LARGE), refused.detail)
    except OSError as error:
        detail = error.strerror or type(error).__name__
        return skip(SkipReason.UNREADABLE, detail)._replace(unreadable=True)
    if b"\x00" in data[:8192]:
        return skip(SkipReason.BINARY)
    notices: list[str] = []
    text, replaced = decode_file(data)
    if replaced:
        notices.append("invalid UTF-8 (undecodable bytes replaced with U+FFFD)")
    if redact is not None:
        text = redact(text)  # before parsing: no title, fragment or snippet keeps a secret
    parsed = parse_markdown(text)
    if parsed.frontmatter_error:
        notices.append(parsed.frontmatter_error + " (indexed as plain text)")
    frontmatter = parsed.frontmatter
    title = document_title(parsed, file.path)
    body = parsed.body
    content_type = classify_content_type(file.path, title, body, frontmatter)
    review_by, domain, workstream = review_fields(frontmatter, notices)
    item = Prepared(
        file=file,
        text=text,
        hash=body_hash(text),
        parsed=parsed,
        title=title,
        content_type=content_type,
        quality=quality_score(body, bool(parsed.frontmatter_span)),
        authored_at=_authored_at(frontmatter),
        tags=_tags(frontmatter),
        notices=notices,
        fragments=fragment_rows(parsed, title),
        review_by=review_by,
        domain=domain,
        workstream=workstream,
    )
    issues = tuple(FileIssue(collection.name, file.path, notice) for notice in notices)
    return Outcome(item, notices=issues)


def tokenize_outcomes(collection: Collection, outcomes: Sequence[Outcome]) -> None:
    """Give each prepared file its text-index row tokenized (:attr:`Prepared.tokens`): its
    path in ``collection``, title and body, as the text index gets them."""
    from memtrove.db.text_tokens import tokenized_rows  # its tables: only when asked

    items = [outcome.item for outcome in outcomes if outcome.item is not None]
    rows = [
        (
            f"{collection.name}/{item.file.path}",
            segment_cjk(item.title),
            segment_cjk(item.parsed.body),
        )
        for item in items
    ]
    for item, tokens in zip(items, tokenized_rows(rows), strict=True):
        item.tokens = tokens


def _authored_at(frontmatter: dict[str, Any]) -> str | None:
    for key in ("authored_at", "authored", "date", "created", "created_at"):
        if key in frontmatter:
            value = parse_iso_datetime(frontmatter[key])
            if value:
                return value
    return None


def _tags(frontmatter: dict[str, Any]) -> str | None:
    raw = frontmatter.get("tags")
    if isinstance(raw, str):
        items: Iterable[object] = raw.replace(",", " ").split()
    elif isinstance(raw, list):
        items = raw
    else:
        return None
    tags = [str(item).strip()[:100] for item in items if isinstance(item, (str, int, float))]
    tags = [tag for tag in tags if tag][:50]
    return json.dumps(tags, ensure_ascii=False) if tags else None


def review_fields(
    frontmatter: dict[str, Any], notices: list[str]
) -> tuple[str | None, str | None, str | None]:
    """``review_by`` (``YYYY-MM-DD``), ``domain`` and ``workstream`` from the frontmatter,
    each None when absent or unusable; what was unusable is added to ``notices``."""
    return (
        _review_date(frontmatter.get("review_by"), notices),
        _label(frontmatter, "domain", notices),
        _label(frontmatter, "workstream", notices),
    )


def _shown(value: object) -> str:
    if isinstance(value, (str, int, float)):
        return repr(value)[:60]  # repr: control characters shown escaped
    return f"(a {type(value).__name__})"


def _review_date(value: object, notices: list[str]) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, datetime):  # before date: a datetime is one
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str) and len(value.strip()) <= 64:
        text = value.strip()
        try:
            return (
                datetime.fromisoformat(text.removesuffix("Z").removesuffix("z")).date().isoformat()
            )
        except ValueError:
            pass
    notices.append(
        f"frontmatter review_by {_shown(value)} is not a date (YYYY-MM-DD); review_by ignored"
    )
    return None


def _label(frontmatter: dict[str, Any], key: str, notices: list[str]) -> str | None:
    value = frontmatter.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        notices.append(f"frontmatter {key} {_shown(value)} is not text; {key} ignored")
        return None
    text = " ".join(scrub(str(value)).split())  # control characters and newlines too
    text = "".join(c for c in text if c.isprintable())[:LABEL_LIMIT].strip()
    return text or None


def fragment_rows(parsed: ParsedMarkdown, title: str) -> list[FragmentRow]:
    return [
        (f.seq, f.fragment_type, f.label, f.start, f.end) for f in split_fragments(parsed, title)
    ]
