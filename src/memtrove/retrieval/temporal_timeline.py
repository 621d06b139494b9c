"""``memory_retrieve``'s ``timeline`` mode: what happened around the time a question names.

The window is the time the question names (:mod:`memtrove.retrieval.temporal`: "last
week", "in March", "before the migration", ...). A question naming none ("what did we do
last session?", "what happened earlier?") is about the latest work: the window is the
last session the hooks logged (``session_log``, from its start to its last prompt), else
the day of the newest document.

Documents in the window come in time order (effective time: ``authored_at``, else
``modified_at``; oldest first), with the sessions active in it:

- a question with a topic ("what changed in the deploy pipeline last week?") keeps the
  window's documents about it (hybrid search restricted to the window), the best
  ``limit`` of them, then puts those in time order;
- a question about time alone ("what did we do yesterday?") keeps the newest ``limit``
  documents of the window;
- a window holding no document falls back to the documents nearest its anchor (what
  happened just before and after), so the answer is never empty while the vault is not.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, NamedTuple

from memtrove.db.connection import Connection
from memtrove.results import SessionRecord
from memtrove.retrieval.recency import has_topic
from memtrove.retrieval.temporal import time_constraint
from memtrove.retrieval.temporal_channels import Window, effective_times, resolve_window
from memtrove.text import to_iso

if TYPE_CHECKING:
    from memtrove.retrieval.pipeline import Filters, Ranking, Retriever

__all__ = ["MAX_SESSIONS", "Timeline", "run_timeline"]

MAX_SESSIONS = 10
SESSION_LOOKBACK = 200  # sessions read from the log to find those in the window
_TOPIC_DEPTH = 50


class Timeline(NamedTuple):
    """The window a timeline covers, its documents (a ranking) and its sessions."""

    window: Window
    ranking: Ranking
    sessions: list[SessionRecord]

    def window_dict(self) -> dict[str, str | None]:
        return {
            "start": self.window.start,
            "end": self.window.end,
            "anchor": to_iso(self.window.anchor),
            "phrase": self.window.phrase,
        }


def _default_window(
    connection: Connection, sessions: Sequence[SessionRecord], filters: Filters
) -> Window | None:
    """The last logged session, else the day of the newest document."""
    if sessions:
        last = sessions[0]
        anchor = datetime.fromisoformat(last.last_seen_at.replace("Z", "+00:00"))
        return Window("within", last.started_at, last.last_seen_at, anchor, "the last session")
    newest = _documents(connection, None, filters, 1, newest_first=True)
    if not newest:
        return None
    moment = datetime.fromisoformat(newest[0][1].replace("Z", "+00:00"))
    day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    return Window("within", to_iso(day), newest[0][1], moment, "the latest day")


def _documents(
    connection: Connection,
    window: Window | None,
    filters: Filters,
    limit: int,
    *,
    newest_first: bool,
) -> list[tuple[int, str]]:
    """(doc id, effective time) of searchable documents in ``window`` (None: any time)."""
    from memtrove.retrieval.entity_channel import filter_conditions

    where, parameters = filter_conditions(connection, filters)
    effective = "COALESCE(d.authored_at, d.modified_at)"
    if window is not None and window.start:
        where += f" AND {effective} >= ?"
        parameters.append(window.start)
    if window is not None and window.end:
        where += f" AND {effective} <= ?"
        parameters.append(window.end)
    order = "DESC" if newest_first else "ASC"
    rows = connection.execute(
        f"SELECT d.id, {effective} FROM documents d WHERE {where} AND {effective} IS NOT NULL "
        f"ORDER BY {effective} {order}, d.id {order} LIMIT ?",
        [*parameters, limit],
    ).fetchall()
    return [(int(row[0]), str(row[1])) for row in rows]


def _nearest(
    connection: Connection, window: Window, filters: Filters, limit: int
) -> list[tuple[int, str]]:
    """The documents just before and just after the window's anchor, nearest first."""
    anchor = to_iso(window.anchor)
    before = Window("before", None, anchor, window.anchor, window.phrase)
    after = Window("after", to_iso(window.anchor + timedelta(seconds=1)), None, window.anchor, "")
    earlier = _documents(connection, before, filters, limit, newest_first=True)
    later = _documents(connection, after, filters, limit, newest_first=False)
    merged = sorted(
        [*earlier, *later],
        key=lambda item: abs(
            (datetime.fromisoformat(item[1].replace("Z", "+00:00")) - window.anchor).total_seconds()
        ),
    )
    return merged[:limit]


def _overlapping(sessions: Sequence[SessionRecord], window: Window) -> list[SessionRecord]:
    kept = [
        session
        for session in sessions
        if (window.end is None or session.started_at <= window.end)
        and (window.start is None or session.last_seen_at >= window.start)
    ]
    return sorted(kept, key=lambda session: session.started_at)[-MAX_SESSIONS:]


def run_timeline(
    retriever: Retriever,
    connection: Connection,
    query: str,
    limit: int,
    filters: Filters,
    sessions: Sequence[SessionRecord],
    now: datetime,
) -> Timeline | None:
    """The timeline for ``query``; ``sessions``: the most recent logged sessions, newest
    first. None when the vault has nothing dated to put on it."""
    from memtrove.retrieval.pipeline import Ranking

    ranking = Ranking(stages=["timeline"])
    constraint = time_constraint(query, now)
    window = None
    if constraint is not None:
        window = resolve_window(retriever, connection, constraint, filters, now)
        if window is None:
            ranking.skipped["window"] = f"no document dated {constraint.phrase!r}"
    if window is None:
        window = _default_window(connection, sessions, filters)
    if window is None:
        return None
    topic = query.replace(window.phrase, " ") if constraint is not None else query
    found: list[tuple[int, str]] = []
    if has_topic(topic):
        from memtrove.retrieval.temporal_channels import narrowed_filters

        narrowed = narrowed_filters(filters, window)
        searched = retriever.hybrid(topic, _TOPIC_DEPTH, narrowed) if narrowed else None
        hits = searched.hits if searched else []
        ranking.stages += searched.stages if searched else []
        chosen = [doc for doc, _ in hits[:limit]]
        times = effective_times(connection, chosen)
        found = [(doc, times[doc]) for doc in chosen if doc in times]
    else:
        found = _documents(connection, window, filters, limit, newest_first=True)
    if not found:
        found = _nearest(connection, window, filters, limit)
        if found:
            ranking.skipped["window documents"] = f"none dated {window.phrase}; nearest shown"
        else:
            ranking.skipped["timeline"] = "no dated document or session"
    found.sort(key=lambda item: (item[1], item[0]))
    ranking.hits = [(doc, 1.0) for doc, _ in found]
    return Timeline(window, ranking, _overlapping(sessions, window))
