"""``mine --backfill-dates``: give ``authored_at`` to mined documents that have none.

Documents mined before the exchange's own time was kept have an empty ``authored_at``, so
recency ranks them by when they were imported. The folder is read again and each exchange's
latest timestamp is matched to its document by path (the paths are stable); a document whose
stored frontmatter states ``authored_at`` takes that. A dry run counts; ``apply`` writes only
``authored_at``, in one short transaction, and only where it is still empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from memtrove.db.connection import Connection, write_transaction
from memtrove.index.markdown import parse_markdown
from memtrove.mine.exchanges import exchanges
from memtrove.mine.formats import ORDER
from memtrove.mine.scan import candidates, detect
from memtrove.mine.writer import document_path
from memtrove.text import parse_iso_datetime

__all__ = ["BackfillReport", "backfill_dates"]


class BackfillReport(NamedTuple):
    collection: str
    applied: bool
    undated: int
    """Documents of the collection without ``authored_at`` before the run."""
    found: int
    """Of those, how many a date was found for (and, applied, written)."""

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()

    def text(self) -> str:
        verb = "dated" if self.applied else "would date (dry run; --apply writes)"
        return (
            f"{self.collection}: {self.undated} documents without authored_at; {verb} {self.found}"
        )


def backfill_dates(
    connection: Connection,
    root: Path,
    collection: str,
    *,
    formats: Sequence[str] = ORDER,
    apply: bool = False,
) -> BackfillReport:
    undated = {
        str(path): int(doc_id)
        for doc_id, path in connection.execute(
            "SELECT id, path FROM documents WHERE collection = ? AND authored_at IS NULL",
            (collection,),
        )
    }
    dates: dict[int, str] = {}
    if undated:
        for path, is_folder in candidates(root, formats):
            found = detect(path, is_folder, formats)
            if found is None:
                continue
            for conversation in found.conversations:
                for exchange in exchanges(conversation):
                    doc_id = undated.get(document_path(exchange))
                    if doc_id is not None and exchange.authored_at:
                        dates[doc_id] = exchange.authored_at
        for doc_id in undated.values():
            if doc_id not in dates:
                stated = _stated_date(connection, doc_id)
                if stated:
                    dates[doc_id] = stated
    if apply and dates:
        with write_transaction(connection):
            connection.executemany(
                "UPDATE documents SET authored_at = ? WHERE id = ? AND authored_at IS NULL",
                [(when, doc_id) for doc_id, when in dates.items()],
            )
    return BackfillReport(collection, apply, len(undated), len(dates))


def _stated_date(connection: Connection, doc_id: int) -> str | None:
    row = connection.execute(
        "SELECT c.doc FROM documents d JOIN content c ON c.hash = d.hash WHERE d.id = ?",
        (doc_id,),
    ).fetchone()
    if row is None:
        return None
    frontmatter = parse_markdown(str(row[0])).frontmatter
    return parse_iso_datetime(frontmatter.get("authored_at")) if frontmatter else None
