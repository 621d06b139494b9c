"""The conditional channels of ``query``: temporal constraint, temporal proximity, entity graph.

Each runs only when its trigger fires, so a question that names no time and no known
entity is ranked exactly as without them:

- **temporal constraint** (the question names a time, :mod:`memtrove.retrieval.temporal`):
  the documents whose effective time (``authored_at``, else ``modified_at``) lies in the
  window: first BM25 over the window alone (the question without its time phrase, with
  conversation context), which finds in-window documents the whole-vault search ranked
  too low, then those retrieval found, in its order. No vectors here: a date-filtered
  vector search costs far more than the rest of the query on a large vault;
- **temporal proximity** (same trigger): every candidate on the right side of the window
  ("before X" keeps what is earlier), nearest to the referenced time first;
- **entity graph** (the question names a known entity, :mod:`memtrove.retrieval.entity_channel`).

A window no document falls in (a question about last week in a vault of older notes, a
conversation dated years ago) adds nothing, and ``skipped`` says so.

With an LLM the lists join the query's reciprocal rank fusion (weight 1, an expansion
list's). Without one, ``query`` fuses BM25 and vectors by score, so :func:`blend_channels`
adds each list to the max-normalised fused scores: :data:`CHANNEL_SHARE` for a list's head,
decaying as ``(k + 1) / (k + rank)`` with ``k =`` :data:`CHANNEL_K`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, NamedTuple, Protocol

from memtrove.db.connection import Connection
from memtrove.retrieval.entity_channel import ENTITY_WEIGHT, NamedEntity, entity_list
from memtrove.retrieval.temporal import TimeConstraint, month_window
from memtrove.text import to_iso

if TYPE_CHECKING:
    from memtrove.retrieval.filters import Filters
    from memtrove.retrieval.ranking import Ranking

__all__ = [
    "CHANNEL_K",
    "CHANNEL_SHARE",
    "PROXIMITY_WEIGHT",
    "TEMPORAL_WEIGHT",
    "Window",
    "blend_channels",
    "effective_times",
    "narrowed_filters",
    "resolve_window",
    "side_channels",
    "temporal_lists",
]


class Retriever(Protocol):
    """The searches the channels run (:class:`memtrove.retrieval.pipeline.Retriever`)."""

    def bm25(
        self, query: str, limit: int, filters: Filters, *, raw: bool = False
    ) -> list[tuple[int, float]]: ...

    def hybrid(
        self,
        query: str,
        limit: int,
        filters: Filters,
        *,
        vectors: bool = True,
        passages: bool = False,
    ) -> Ranking: ...


TEMPORAL_WEIGHT = 1.0
PROXIMITY_WEIGHT = 1.0
CHANNEL_SHARE = 0.25
CHANNEL_K = 10


class Window(NamedTuple):
    """A constraint made concrete: inclusive ISO bounds (None: open) and its anchor."""

    direction: str
    start: str | None
    end: str | None
    anchor: datetime
    phrase: str

    def holds(self, moment: str | None) -> bool:
        if not moment:
            return False
        return (self.start is None or moment >= self.start) and (
            self.end is None or moment <= self.end
        )


def effective_times(connection: Connection, docs: Sequence[int]) -> dict[int, str]:
    """Each document's effective time (``authored_at``, else ``modified_at``) when it has one."""
    if not docs:
        return {}
    rows = connection.execute(
        "SELECT id, COALESCE(authored_at, modified_at) FROM documents "
        f"WHERE id IN ({','.join('?' * len(docs))})",
        list(docs),
    ).fetchall()
    return {int(row[0]): str(row[1]) for row in rows if row[1]}


def _latest_month(
    connection: Connection, month: int, filters: Filters, now: datetime
) -> int | None:
    """The latest year whose ``month`` dates an active document (not after ``now``)."""
    where = ["active = 1", "substr(COALESCE(authored_at, modified_at), 6, 2) = ?"]
    parameters: list[object] = [f"{month:02d}"]
    where.append("COALESCE(authored_at, modified_at) <= ?")
    parameters.append(to_iso(now))
    # the channel's own dates are what it looks for: only the collections and the
    # internal exclusion restrict it
    conditions, values = filters._replace(content_types=None, since=None, until=None).where("")
    where += conditions
    parameters += values
    row = connection.execute(
        f"SELECT MAX(COALESCE(authored_at, modified_at)) FROM documents WHERE {' AND '.join(where)}",
        parameters,
    ).fetchone()
    if row is None or not row[0] or not str(row[0])[:4].isdigit():
        return None
    return int(str(row[0])[:4])


def resolve_window(
    retriever: Retriever,
    connection: Connection,
    constraint: TimeConstraint,
    filters: Filters,
    now: datetime,
) -> Window | None:
    """The window of ``constraint`` in this vault, or None when it cannot be placed (a
    month no document is dated in, an event no document mentions)."""
    direction, phrase = constraint.direction, constraint.phrase
    if constraint.event is not None:
        hits = retriever.bm25(constraint.event, 1, filters)
        moment = effective_times(connection, [hits[0][0]]).get(hits[0][0]) if hits else None
        if moment is None:
            return None
        anchor = datetime.fromisoformat(moment.replace("Z", "+00:00"))
        if direction == "before":
            return Window(direction, None, moment, anchor, phrase)
        return Window(direction, moment, None, anchor, phrase)
    if constraint.month is not None:
        year = _latest_month(connection, constraint.month, filters, now)
        if year is None:
            return None
        start, end = month_window(year, constraint.month)
        if direction == "before":
            return Window(direction, None, to_iso(start - timedelta(seconds=1)), start, phrase)
        if direction == "after":
            return Window(direction, to_iso(start), None, start, phrase)
        return Window(direction, to_iso(start), to_iso(end), start + (end - start) / 2, phrase)
    anchor = constraint.anchor or constraint.start or constraint.end or now
    return Window(
        direction,
        to_iso(constraint.start) if constraint.start else None,
        to_iso(constraint.end) if constraint.end else None,
        anchor,
        phrase,
    )


def _distance(window: Window, moment: str) -> float | None:
    """Seconds from ``moment`` to the window (0 inside); None on the wrong side of it."""
    try:
        when = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    if window.direction == "before" and window.end is not None and moment > window.end:
        return None
    if window.direction == "after" and window.start is not None and moment < window.start:
        return None
    if window.direction != "within":
        return abs((when - window.anchor).total_seconds())
    if window.holds(moment):
        return 0.0
    edge = window.start if window.start and moment < window.start else window.end
    if edge is None:
        return None
    bound = datetime.fromisoformat(edge.replace("Z", "+00:00"))
    return abs((when - bound).total_seconds())


def narrowed_filters(filters: Filters, window: Window) -> Filters | None:
    """``filters`` with their dates narrowed to the window (None: nothing is in both)."""
    since = max(filter(None, (filters.since, window.start)), default=None)
    until = min(filter(None, (filters.until, window.end)), default=None)
    if since and until and since > until:
        return None
    return filters._replace(since=since, until=until)


def temporal_lists(
    retriever: Retriever,
    connection: Connection,
    query: str,
    window: Window,
    pool: Sequence[int],
    depth: int,
    filters: Filters,
) -> tuple[list[int], list[int]]:
    """The constraint list and the proximity list (both empty when nothing is in the window)."""
    narrowed = narrowed_filters(filters, window)
    if narrowed is None:
        return [], []
    topic = query.replace(window.phrase, " ").strip() or query
    inside = [doc for doc, _ in retriever.hybrid(topic, depth, narrowed, vectors=False).hits]
    times = effective_times(connection, list(dict.fromkeys([*pool, *inside])))
    constraint = [doc for doc in pool if window.holds(times.get(doc))]
    constraint = list(dict.fromkeys([*inside, *constraint]))[:depth]
    if not constraint:
        return [], []
    order = {doc: index for index, doc in enumerate(dict.fromkeys([*pool, *inside]))}
    distances = {doc: _distance(window, times[doc]) for doc in order if doc in times}
    near = sorted(
        (doc for doc, distance in distances.items() if distance is not None),
        key=lambda doc: (distances[doc], order[doc]),
    )
    return constraint, near[:depth]


def side_channels(
    retriever: Retriever,
    connection: Connection,
    query: str,
    triggers: tuple[TimeConstraint | None, Sequence[NamedEntity], datetime],
    pool: Sequence[int],
    depth: int,
    filters: Filters,
    ranking: Ranking,
) -> list[tuple[list[int], float]]:
    """The ranked lists (with RRF weights) of the channels whose trigger fires, recording
    each in ``ranking``; ``triggers``: the question's time constraint, the known entities it
    names, and the time relative wording counts from."""
    constraint, entities, now = triggers
    lists: list[tuple[list[int], float]] = []
    if constraint is not None:
        window = resolve_window(retriever, connection, constraint, filters, now)
        within, near = (
            temporal_lists(retriever, connection, query, window, pool, depth, filters)
            if window is not None
            else ([], [])
        )
        if within:
            lists += [(within, TEMPORAL_WEIGHT), (near, PROXIMITY_WEIGHT)]
            ranking.stages += ["temporal", "proximity"]
        else:
            ranking.skipped["temporal"] = f"no document dated {constraint.phrase!r}"
    if entities:
        found = entity_list(connection, entities, pool, depth, filters)
        if found:
            lists.append((found, ENTITY_WEIGHT))
            ranking.stages.append("entities")
    return lists


def blend_channels(
    fused: Sequence[tuple[int, float]],
    lists: Sequence[tuple[Sequence[int], float]],
    share: float = CHANNEL_SHARE,
    k: int = CHANNEL_K,
) -> list[tuple[int, float]]:
    """Score-fused candidates (max-normalised, best first) with each channel list added:
    ``weight * share * (k + 1) / (k + rank)`` (rank 1 is a list's head); best first, ties
    in the fused order, documents only a channel found after them."""
    scores = dict(fused)
    for keys, weight in lists:
        for rank, key in enumerate(dict.fromkeys(keys), start=1):
            scores[key] = scores.get(key, 0.0) + weight * share * (k + 1) / (k + rank)
    order = {key: index for index, key in enumerate(scores)}
    return sorted(scores.items(), key=lambda item: (-item[1], order[item[0]]))
