"""What composite scoring reads of candidate documents, and the newest documents by type.

The queries on ``documents`` that the retrieval pipeline needs besides search itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from memtrove.db.connection import Connection
from memtrove.retrieval.scoring import ScoringInput
from memtrove.text import parse_iso_datetime

if TYPE_CHECKING:
    from memtrove.retrieval.filters import Filters

__all__ = ["recent_documents", "scoring_inputs"]


def scoring_inputs(
    connection: Connection, candidates: Sequence[tuple[int, float]]
) -> list[ScoringInput[int]]:
    """What composite scoring reads of each candidate document, in the candidates' order
    (documents no longer in the table are left out)."""
    if not candidates:
        return []
    scores = dict(candidates)
    placeholders = ",".join("?" * len(scores))
    rows = connection.execute(
        "SELECT id, content_type, COALESCE(authored_at, modified_at), quality_score, "
        "confidence, pinned, access_count, last_accessed_at, body_length, revision_count, "
        "duplicate_count, superseded_by, snoozed_until > ? FROM documents "
        f"WHERE id IN ({placeholders})",
        [datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), *scores],
    ).fetchall()
    by_id = {int(row[0]): row for row in rows}
    inputs: list[ScoringInput[int]] = []
    for doc, score in candidates:
        row = by_id.get(doc)
        if row is None:
            continue
        inputs.append(
            ScoringInput(
                key=doc,
                search_score=score,
                content_type=str(row[1]),
                effective_at=_datetime(row[2]),
                quality_score=float(row[3]),
                confidence=float(row[4]),
                pinned=bool(row[5]),
                access_count=int(row[6]),
                last_accessed_at=_datetime(row[7]),
                body_length=int(row[8]),
                revision_count=int(row[9]),
                duplicate_count=int(row[10]),
                superseded=row[11] is not None,
                snoozed=bool(row[12]),
            )
        )
    return inputs


def recent_documents(
    connection: Connection, types: Sequence[str], limit: int, filters: Filters
) -> list[int]:
    """Ids of the ``limit`` newest active documents of ``types`` (effective time) within the
    filters' collections and dates."""
    where = ["active = 1", "invalidated_at IS NULL"]
    where.append(f"content_type IN ({','.join('?' * len(types))})")
    parameters: list[object] = list(types)
    conditions, values = filters.where("")
    where += conditions
    parameters += values
    rows = connection.execute(
        f"SELECT id FROM documents WHERE {' AND '.join(where)} "
        "ORDER BY COALESCE(authored_at, modified_at) DESC, id DESC LIMIT ?",
        [*parameters, limit],
    ).fetchall()
    return [int(row[0]) for row in rows]


def _datetime(value: object) -> datetime | None:
    if not value:
        return None
    text = parse_iso_datetime(str(value))
    if text is None:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
