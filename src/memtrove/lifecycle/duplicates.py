"""``consolidate N``: low-confidence documents that duplicate another, archived.

As the inventory's ``consolidate [--dry-run] [N]``: the ``N`` (default 50) active documents
with confidence below :data:`MAX_CONFIDENCE`, least confident first, each searched by its
title (BM25, its own collection); a hit whose normalized score is at least
:data:`MIN_SCORE` and whose body shares at least :data:`MIN_JACCARD` of its words (Jaccard
over lowercased word sets) is a duplicate, and the weaker of the two (lower confidence, then
the older) is archived with :func:`memtrove.lifecycle.archive.archive_documents`: out of
search, never deleted, back with ``lifecycle restore``. Pinned documents are never archived,
and a document archived in this pass is not compared again.

A dry run (the default) lists the pairs and writes nothing.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, NamedTuple

from memtrove.db.connection import Connection
from memtrove.errors import InvalidQueryError
from memtrove.lifecycle.archive import archive_documents
from memtrove.retrieval.filters import Filters
from memtrove.retrieval.fts import search_documents

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_CONFIDENCE",
    "MIN_JACCARD",
    "MIN_SCORE",
    "DuplicatePair",
    "DuplicatesReport",
    "archive_duplicates",
    "word_jaccard",
]

DEFAULT_LIMIT = 50
MAX_CONFIDENCE = 0.4
MIN_SCORE = 0.7
MIN_JACCARD = 0.4
MAX_LIMIT = 10_000
_WORD = re.compile(r"\w+")


class DuplicatePair(NamedTuple):
    """One duplicate found: ``archived`` is the weaker document, ``kept`` the other."""

    archived: str  # collection/path
    kept: str
    score: float
    jaccard: float


class DuplicatesReport(NamedTuple):
    checked: int
    pairs: list[DuplicatePair]
    archived: int
    dry_run: bool

    def text(self) -> str:
        head = "dry run: nothing archived; " if self.dry_run else ""
        lines = [
            f"{head}{self.checked} low-confidence document(s) checked, "
            f"{len(self.pairs)} duplicate(s), {self.archived} archived"
        ]
        lines += [
            f"  {pair.archived}  duplicates  {pair.kept}  (score {pair.score:.2f}, "
            f"words {pair.jaccard:.2f})"
            for pair in self.pairs
        ]
        if self.dry_run and self.pairs:
            lines.append("run again with --apply to archive them (lifecycle restore undoes it)")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {**self._asdict(), "pairs": [pair._asdict() for pair in self.pairs]}


def word_jaccard(first: str, second: str) -> float:
    """Jaccard similarity of the lowercased word sets of two texts (0 when both are empty)."""
    a, b = set(_WORD.findall(first.lower())), set(_WORD.findall(second.lower()))
    union = a | b
    return len(a & b) / len(union) if union else 0.0


class _Doc(NamedTuple):
    doc_id: int
    name: str
    title: str
    body: str
    confidence: float
    modified_at: str
    pinned: bool


def _load(connection: Connection, where: str, params: tuple[object, ...]) -> list[_Doc]:
    rows = connection.execute(
        "SELECT d.id, d.collection || '/' || d.path, d.title, c.doc, d.confidence, "
        "d.modified_at, d.pinned FROM documents d JOIN content c ON c.hash = d.hash "
        f"WHERE d.active = 1 AND {where}",
        params,
    ).fetchall()
    return [
        _Doc(int(r[0]), str(r[1]), str(r[2] or ""), str(r[3]), float(r[4]), str(r[5]), bool(r[6]))
        for r in rows
    ]


def _weaker(first: _Doc, second: _Doc) -> _Doc:
    return min(first, second, key=lambda doc: (doc.confidence, doc.modified_at, -doc.doc_id))


def archive_duplicates(
    connection: Connection, limit: int, now: datetime, *, apply: bool = False
) -> DuplicatesReport:
    """Find (and with ``apply``, archive) low-confidence duplicates; see the module doc."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidQueryError(f"N must be a whole number from 1 to {MAX_LIMIT}, not {limit!r}")
    candidates = _load(
        connection,
        "d.confidence < ? ORDER BY d.confidence, d.id LIMIT ?",
        (MAX_CONFIDENCE, limit),
    )
    gone: set[int] = set()
    pairs: list[DuplicatePair] = []
    reasons: list[tuple[int, str]] = []
    for candidate in candidates:
        if candidate.doc_id in gone or not candidate.title.strip():
            continue
        collection = candidate.name.split("/", 1)[0]
        try:
            hits = search_documents(
                connection, candidate.title, limit=10, filters=Filters(collections=[collection])
            )
        except InvalidQueryError:
            continue
        others = [hit for hit in hits if hit.doc_id != candidate.doc_id and hit.doc_id not in gone]
        by_id = (
            {
                doc.doc_id: doc
                for doc in _load(
                    connection,
                    f"d.id IN ({','.join('?' * len(others))})",
                    tuple(hit.doc_id for hit in others),
                )
            }
            if others
            else {}
        )
        for hit in others:
            other = by_id.get(hit.doc_id)
            if other is None or hit.score < MIN_SCORE:
                continue
            jaccard = word_jaccard(candidate.body, other.body)
            if jaccard < MIN_JACCARD:
                continue
            weaker = _weaker(candidate, other)
            if weaker.pinned:
                continue
            kept = other if weaker is candidate else candidate
            pairs.append(
                DuplicatePair(weaker.name, kept.name, round(hit.score, 3), round(jaccard, 3))
            )
            reasons.append((weaker.doc_id, f"duplicate of {kept.name}"))
            gone.add(weaker.doc_id)
            if weaker is candidate:
                break
    archived = archive_documents(connection, reasons, now) if apply and reasons else 0
    return DuplicatesReport(len(candidates), pairs, archived, not apply)
