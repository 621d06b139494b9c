"""Which documents count as stale: per-collection thresholds, and dates that mean something.

A document is stale when its date is more than its collection's ``stale_after_days`` before
now. Pinned, currently snoozed and invalidated documents never are: pinning or snoozing is
how a reviewer says "this still holds" or "not now", one document at a time.

Which collections are checked (``stale_after_days`` in ``config.yaml``):

- ``N`` (days): every document of the collection, after N days.
- ``none``: never (reference material: vendored docs, a product manual, other locales).
- ``auto`` or unset (the default): only what agents write goes stale. Internal collections
  (``_memtrove``: memories, handoffs, decisions written by memtrove) are checked whole;
  a folder collection only for its :data:`AGENT_WRITTEN_TYPES` documents (session handoffs
  and progress logs), after :data:`DEFAULT_STALE_AFTER_DAYS` days. ``note``, the type of
  anything unclassified, is deliberately not one of them: most folders are reference
  material, and a folder of notes that should age can say ``stale_after_days: 90``.

A document whose frontmatter sets ``review_by`` (a date; see
:mod:`memtrove.index.preparing`) is also stale from that day on, whatever its collection's
setting (``none`` included): its author asked for the review. Pinning or snoozing it takes
it off the list as for any other; so does moving ``review_by`` on in the file. Documents due
by ``review_by`` are listed first, the earliest date first, then the others oldest first.

Which date: ``authored_at`` (frontmatter ``date``/``created``/...) when the document has
one, else the file's mtime, unless the folder's mtimes are checkout times. A clone, a sync or
an unpacked archive gives every file the same mtime, which says when the files arrived, not
when they were written. So when at least :data:`CHECKOUT_MIN_DOCUMENTS` of a folder
collection's undated documents exist and :data:`CHECKOUT_SHARE` of them have mtimes within
about 20 minutes of each other (two adjacent 10-minute slots), the collection's undated
documents have unknown dates and are never stale; its dated ones still are. Internal
collections' times are written by memtrove itself, so they always count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from memtrove.db.connection import Connection
from memtrove.index.documents import SUMMARY_COLUMNS, summary_of
from memtrove.results import Collection, DocumentSummary, StaleAfterDays
from memtrove.text import to_iso

__all__ = [
    "AGENT_WRITTEN_TYPES",
    "CHECKOUT_MIN_DOCUMENTS",
    "CHECKOUT_SHARE",
    "DEFAULT_STALE_AFTER_DAYS",
    "StalenessRule",
    "count_stale",
    "review_condition",
    "stale_documents",
    "staleness_rules",
]

DEFAULT_STALE_AFTER_DAYS = 90
AGENT_WRITTEN_TYPES: tuple[str, ...] = ("handoff", "progress")
CHECKOUT_MIN_DOCUMENTS = 5
CHECKOUT_SHARE = 0.8
_SLOT_NS = 10 * 60 * 1_000_000_000  # mtimes are grouped in 10-minute slots


class StalenessRule(NamedTuple):
    """How one collection's documents are checked."""

    collection: str
    days: int
    content_types: tuple[str, ...] | None  # None: every type
    file_times_known: bool  # False: only ``authored_at`` dates a document

    def condition(self, now: datetime) -> tuple[str, list[Any]]:
        """A SQL condition on ``documents`` for this rule's stale documents, and its values."""
        date = "COALESCE(authored_at, modified_at)" if self.file_times_known else "authored_at"
        sql = (
            "active = 1 AND collection = ? AND pinned = 0 AND invalidated_at IS NULL "
            f"AND (snoozed_until IS NULL OR snoozed_until <= ?) AND {date} < ?"
        )
        values: list[Any] = [
            self.collection,
            to_iso(now),
            to_iso(now - timedelta(days=self.days)),
        ]
        if self.content_types is not None:
            sql += f" AND content_type IN ({', '.join('?' * len(self.content_types))})"
            values += self.content_types
        return sql, values


def staleness_rules(
    connection: Connection, collections: Iterable[Collection]
) -> list[StalenessRule]:
    """One rule for each collection with active documents that can go stale (see the module
    doc); collections that are not configured get the default rule."""
    settings: Mapping[str, StaleAfterDays] = {c.name: c.stale_after_days for c in collections}
    names = [
        str(row[0])
        for row in connection.execute(
            "SELECT DISTINCT collection FROM documents WHERE active = 1 ORDER BY collection"
        )
    ]
    rules: list[StalenessRule] = []
    for name in names:
        if name.startswith("_"):
            rules.append(StalenessRule(name, DEFAULT_STALE_AFTER_DAYS, None, True))
            continue
        setting = settings.get(name, "auto")
        if setting is None:
            continue
        known = not _checked_out(connection, name)
        if setting == "auto":
            rules.append(StalenessRule(name, DEFAULT_STALE_AFTER_DAYS, AGENT_WRITTEN_TYPES, known))
        else:
            rules.append(StalenessRule(name, setting, None, known))
    return rules


def review_condition(now: datetime) -> tuple[str, list[Any]]:
    """A SQL condition on ``documents`` for the documents due for review by their own
    ``review_by`` (on or before ``now``'s UTC date), and its values."""
    sql = (
        "active = 1 AND pinned = 0 AND invalidated_at IS NULL "
        "AND (snoozed_until IS NULL OR snoozed_until <= ?) "
        "AND review_by IS NOT NULL AND review_by <= ?"
    )
    return sql, [to_iso(now), _review_day(now)]


def _review_day(now: datetime) -> str:
    return to_iso(now)[:10]  # UTC, as every stored time


def _stale_where(
    connection: Connection, collections: Iterable[Collection], now: datetime
) -> tuple[str, list[Any]]:
    """The condition of every stale document: each collection's rule, or due for review."""
    parts = [rule.condition(now) for rule in staleness_rules(connection, collections)]
    parts.append(review_condition(now))
    where = " OR ".join(f"({sql})" for sql, _ in parts)
    return where, [value for _, rule_values in parts for value in rule_values]


def count_stale(connection: Connection, collections: Iterable[Collection], now: datetime) -> int:
    """How many active documents are stale (by their collection's rule or their own
    ``review_by``; a document both ways counts once)."""
    where, values = _stale_where(connection, collections, now)
    row = connection.execute(f"SELECT COUNT(*) FROM documents WHERE {where}", values).fetchone()
    return int(row[0])


def stale_documents(
    connection: Connection, collections: Iterable[Collection], now: datetime, limit: int
) -> list[DocumentSummary]:
    """Up to ``limit`` stale documents, to look at one by one: those due by ``review_by``
    first (earliest date first), then the others oldest first."""
    if limit <= 0:
        return []
    where, values = _stale_where(connection, collections, now)
    due = "review_by IS NOT NULL AND review_by <= ?"
    day = _review_day(now)
    # '' rather than NULL for the documents not due: engines sort NULLs differently
    rows = connection.execute(
        f"SELECT {SUMMARY_COLUMNS} FROM documents WHERE {where} "
        f"ORDER BY CASE WHEN {due} THEN 0 ELSE 1 END, CASE WHEN {due} THEN review_by ELSE '' "
        "END, COALESCE(authored_at, modified_at), collection, path LIMIT ?",
        [*values, day, day, limit],
    )
    return [summary_of(row) for row in rows]


def _checked_out(connection: Connection, collection: str) -> bool:
    """Whether the folder's undated documents share one checkout-like mtime (module doc)."""
    slots = {
        int(row[0]): int(row[1])
        for row in connection.execute(
            "SELECT file_mtime_ns / ?, COUNT(*) FROM documents WHERE active = 1 "
            "AND collection = ? AND authored_at IS NULL AND file_mtime_ns IS NOT NULL "
            "GROUP BY 1",
            (_SLOT_NS, collection),
        )
    }
    undated = sum(slots.values())
    if undated < CHECKOUT_MIN_DOCUMENTS:
        return False
    burst = max(count + slots.get(slot + 1, 0) for slot, count in slots.items())
    return burst >= CHECKOUT_SHARE * undated
