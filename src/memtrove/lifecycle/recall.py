"""Recall telemetry: ``recall_stats`` recomputed from ``recall_events``, and the documents it
suggests pinning or snoozing.

Hooks fold each recall into ``recall_stats`` as they write it
(:mod:`memtrove.lifecycle.sessions`); the feedback loop later marks events referenced, and
events can be deleted with their documents. :func:`recompute_recall_stats` rebuilds every
row from the events, so the summary says what the events say:

- ``diversity_score = min(1, max(unique_queries, recall_days) / 5)``;
- ``spacing_score`` = half log-scaled distinct days (full at 7) + half the first-to-last
  span (full at 30 days), so recalls spread over weeks beat a burst on one day;
- ``negative_count``: events the feedback loop judged (``checked_at`` set) and found
  unused (``was_referenced = 0``): the reply could have used the document and did not. An
  event not judged yet, or checked without a verdict (its turn had left the transcript
  window: ``was_referenced =`` :data:`NO_VERDICT`), is not a negative. :data:`NEGATIVE` is
  that one definition; the feedback loop counts with it as it goes, so a recompute agrees.

Pin candidates: recalled at least :data:`PIN_MIN_RECALLS` times, diverse (at least 0.6),
referenced at least once and at most half negative, not pinned. Snooze candidates: at
least :data:`SNOOZE_MIN_NEGATIVES` negatives in at least :data:`SNOOZE_MIN_SESSIONS`
sessions (one long session that kept surfacing a note says little about the note), never
referenced, not pinned or snoozed.
"""

import math
from datetime import datetime
from typing import NamedTuple

from memtrove.db.connection import Connection, write_transaction
from memtrove.results.lifecycle import RecallCandidate
from memtrove.text import to_iso

__all__ = [
    "NEGATIVE",
    "NO_VERDICT",
    "PIN_MIN_RECALLS",
    "SNOOZE_MIN_NEGATIVES",
    "SNOOZE_MIN_SESSIONS",
    "RecallEvent",
    "RecallHistory",
    "diversity_score",
    "pin_candidates",
    "recall_history",
    "recompute_recall_stats",
    "snooze_candidates",
    "spacing_score",
]

DIVERSITY_SPAN = 5.0  # distinct queries or days for full diversity
SPACING_DAYS = 7.0  # distinct recall days for the full day-count half of spacing
SPACING_SPAN_DAYS = 30.0  # first-to-last recall span for the full span half
PIN_MIN_RECALLS = 3
PIN_MIN_DIVERSITY = 0.6
SNOOZE_MIN_NEGATIVES = 3
SNOOZE_MIN_SESSIONS = 3


def diversity_score(unique_queries: int, recall_days: int) -> float:
    return min(1.0, max(unique_queries, recall_days) / DIVERSITY_SPAN)


def spacing_score(recall_days: int, span_days: float) -> float:
    spacing = 0.5 * min(1.0, math.log1p(recall_days) / math.log1p(SPACING_DAYS))
    return spacing + 0.5 * min(1.0, max(0.0, span_days) / SPACING_SPAN_DAYS)


def _days_between(first: str, last: str) -> float:
    try:
        start = datetime.fromisoformat(first.replace("Z", "+00:00"))
        end = datetime.fromisoformat(last.replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return (end - start).total_seconds() / 86400


NO_VERDICT = -1  # recall_events.was_referenced of an event checked without a verdict
# A negative: judged by the feedback loop, and not used (see the module docstring).
NEGATIVE = "checked_at IS NOT NULL AND was_referenced = 0"


def recompute_recall_stats(connection: Connection) -> int:
    """Rebuild ``recall_stats`` from ``recall_events`` in one transaction; rows of documents
    without events go. Returns how many documents have stats."""
    rows = connection.execute(
        "SELECT e.doc_id, COUNT(*), COUNT(DISTINCT NULLIF(e.query_hash, '')), "
        "COUNT(DISTINCT substr(e.surfaced_at, 1, 10)), COALESCE(SUM(e.search_score), 0), "
        "COALESCE(MAX(e.search_score), 0), MIN(e.surfaced_at), MAX(e.surfaced_at), "
        f"COALESCE(SUM(CASE WHEN {NEGATIVE} THEN 1 ELSE 0 END), 0) "
        "FROM recall_events e GROUP BY e.doc_id"
    ).fetchall()
    values = []
    for doc, count, queries, days, total, best, first, last, negatives in rows:
        values.append(
            (
                int(doc),
                int(count),
                int(queries),
                int(days),
                float(total),
                float(best),
                str(first),
                str(last),
                diversity_score(int(queries), int(days)),
                spacing_score(int(days), _days_between(str(first), str(last))),
                int(negatives),
            )
        )
    with write_transaction(connection):
        connection.execute("DELETE FROM recall_stats")
        connection.executemany(
            "INSERT INTO recall_stats (doc_id, recall_count, unique_queries, recall_days, "
            "total_score, max_score, first_recalled_at, last_recalled_at, diversity_score, "
            "spacing_score, negative_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            values,
        )
    return len(values)


def _candidates(
    connection: Connection, condition: str, order: str, parameters: tuple[object, ...], limit: int
) -> list[RecallCandidate]:
    rows = connection.execute(
        "SELECT d.docid, d.collection, d.path, d.title, r.recall_count, "
        "(SELECT COUNT(*) FROM recall_events e WHERE e.doc_id = d.id AND e.was_referenced = 1) "
        "AS referenced, r.negative_count, r.diversity_score, r.spacing_score "
        "FROM recall_stats r JOIN documents d ON d.id = r.doc_id "
        f"WHERE d.active = 1 AND d.pinned = 0 AND {condition} ORDER BY {order} LIMIT ?",
        (*parameters, limit),
    ).fetchall()
    return [
        RecallCandidate(
            docid=str(row[0]),
            collection=str(row[1]),
            path=str(row[2]),
            title=str(row[3]),
            recall_count=int(row[4]),
            referenced=int(row[5]),
            negative_count=int(row[6]),
            diversity_score=round(float(row[7]), 3),
            spacing_score=round(float(row[8]), 3),
        )
        for row in rows
    ]


def pin_candidates(connection: Connection, limit: int = 5) -> list[RecallCandidate]:
    """Documents recalled often, across queries and days, and used: worth pinning."""
    return _candidates(
        connection,
        "r.recall_count >= ? AND r.diversity_score >= ? AND r.negative_count * 2 <= "
        "r.recall_count AND EXISTS (SELECT 1 FROM recall_events e WHERE e.doc_id = d.id "
        "AND e.was_referenced = 1)",
        "r.diversity_score + r.spacing_score DESC, r.recall_count DESC, d.id",
        (PIN_MIN_RECALLS, PIN_MIN_DIVERSITY),
        limit,
    )


def snooze_candidates(
    connection: Connection, now: datetime, limit: int = 5
) -> list[RecallCandidate]:
    """Documents surfaced again and again, in several sessions, and never used: noise
    worth snoozing."""
    return _candidates(
        connection,
        "r.negative_count >= ? AND (d.snoozed_until IS NULL OR d.snoozed_until <= ?) "
        "AND NOT EXISTS (SELECT 1 FROM recall_events e WHERE e.doc_id = d.id "
        "AND e.was_referenced = 1) AND (SELECT COUNT(DISTINCT e.session_id) FROM "
        "recall_events e WHERE e.doc_id = d.id AND e.checked_at IS NOT NULL "
        "AND e.was_referenced = 0) >= ?",
        "r.negative_count DESC, r.recall_count DESC, d.id",
        (SNOOZE_MIN_NEGATIVES, to_iso(now), SNOOZE_MIN_SESSIONS),
        limit,
    )


class RecallEvent(NamedTuple):
    """One injection of a document: into which session, when, at what score, for which
    prompt, and whether the reply used it (None until feedback-loop gave a verdict)."""

    session_id: str
    surfaced_at: str
    turn_index: int
    score: float
    query_text: str
    referenced: bool | None


class RecallHistory(NamedTuple):
    """How often a document was injected, into how many sessions, how often it was used,
    and its latest injections, newest first."""

    injected: int
    sessions: int
    referenced: int
    events: list[RecallEvent]


def recall_history(connection: Connection, doc_id: int, limit: int) -> RecallHistory:
    """Document ``doc_id``'s recall events: the counts over all of them, and the newest
    ``limit`` with the prompt that surfaced each."""
    count, sessions, used = connection.execute(
        "SELECT COUNT(*), COUNT(DISTINCT session_id), "
        "COALESCE(SUM(CASE WHEN was_referenced = 1 THEN 1 ELSE 0 END), 0) "
        "FROM recall_events WHERE doc_id = ?",
        (doc_id,),
    ).fetchone()
    rows = connection.execute(
        "SELECT e.session_id, e.surfaced_at, e.turn_index, e.search_score, "
        "COALESCE(u.query_text, ''), e.was_referenced, e.checked_at FROM recall_events e "
        "LEFT JOIN context_usage u ON u.id = e.usage_id WHERE e.doc_id = ? "
        "ORDER BY e.surfaced_at DESC, e.id DESC LIMIT ?",
        (doc_id, limit),
    ).fetchall()
    events = [
        RecallEvent(
            str(session),
            str(stamp),
            int(turn),
            float(score),
            str(query),
            # Used when marked so (an imported event may carry no check); unused only when
            # judged: an unchecked event, or one checked without a verdict, says nothing.
            True if referenced == 1 else (False if checked and referenced == 0 else None),
        )
        for session, stamp, turn, score, query, referenced, checked in rows
    ]
    return RecallHistory(int(count), int(sessions), int(used), events)
