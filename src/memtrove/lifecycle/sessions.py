"""Session and hook tracking: what each agent session was shown, and what that teaches.

Hooks write, the MCP server and REST API read. Tables (migration m005):

- ``hook_dedupe``: when each hook last saw a prompt (SHA-256 of the trimmed prompt), so a
  prompt submitted again within a window is not answered twice;
- ``context_usage``: one row per hook run, with the ``collection/path`` of every injected
  document, the estimated tokens, the turn index and the prompt (``query_text``);
- ``recall_events``: one row per injected document, and ``recall_stats``, the running
  per-document summary (count, distinct queries and days, scores, diversity, spacing);
- ``co_activations``: how often two documents were injected together (ids ``doc_a <
  doc_b``); their sum per document is the co-activation input of composite scoring;
- ``session_log``: one row per session, with running counters.

Concurrency: :func:`log_context_usage` writes all of that in one ``BEGIN IMMEDIATE``
transaction, so two processes logging at once serialise and nothing is lost or half-written.
:func:`record_prompt` is best-effort: on a locked vault it gives up after the connection's
busy timeout (hooks open the vault with 1.5 s) instead of retrying, and reports "not seen".
"""

import math
from collections.abc import Sequence
from datetime import datetime, timedelta
from itertools import combinations
from typing import Any, NamedTuple

from memtrove.db.connection import Connection, OperationalError, is_locked_error, write_transaction
from memtrove.errors import DocumentNotFoundError, InvalidQueryError, VaultBusyError
from memtrove.lifecycle.recall import diversity_score, spacing_score
from memtrove.results import SessionRecord
from memtrove.results.lifecycle import Considered, InjectedEntry, PromptRecord
from memtrove.text import sha256_hex, to_iso

__all__ = [
    "CONTEXT_SURFACING",
    "Handoff",
    "capture_cursor",
    "co_activation_count",
    "co_activation_pairs",
    "end_session",
    "last_injected",
    "latest_handoffs",
    "log_context_usage",
    "log_curation",
    "prompt_hash",
    "prompts_since_curation",
    "recent_queries",
    "record_prompt",
    "register_session",
    "session_records",
    "set_capture_cursor",
    "turn_index",
    "update_recall_stats",
]

CONTEXT_SURFACING = "context-surfacing"
PREVIEW_CHARS = 120


def prompt_hash(prompt: str, *, strip: bool = True) -> str:
    """SHA-256 (hex) of the prompt, trimmed unless ``strip`` is False."""
    text = prompt.strip() if strip else prompt
    return sha256_hex(text.encode("utf-8", errors="surrogatepass"))


def record_prompt(
    connection: Connection,
    hook_name: str,
    prompt: str,
    window_seconds: int,
    now: datetime,
    session_id: str = "",
) -> bool:
    """True when ``hook_name`` saw this prompt within ``window_seconds`` in the same session
    (``session_id``; empty: any session without one); records it either way. Two sessions
    asking the same question are both answered.

    Best-effort: when the vault stays locked past the busy timeout, nothing is recorded and
    the answer is False (the hook goes on as for a new prompt) rather than an error.
    """
    digest = prompt_hash(f"{session_id}\x00{prompt}" if session_id else prompt)
    stamp = to_iso(now)
    cutoff = to_iso(now - timedelta(seconds=max(0, window_seconds)))
    try:
        with write_transaction(connection, retry_seconds=0):
            row = connection.execute(
                "SELECT last_seen_at FROM hook_dedupe WHERE hook_name = ? AND prompt_hash = ?",
                (hook_name, digest),
            ).fetchone()
            connection.execute(
                "INSERT INTO hook_dedupe (hook_name, prompt_hash, prompt_preview, last_seen_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (hook_name, prompt_hash) DO UPDATE SET "
                "prompt_preview = excluded.prompt_preview, last_seen_at = excluded.last_seen_at",
                (hook_name, digest, prompt.strip()[:PREVIEW_CHARS], stamp),
            )
    except VaultBusyError:
        return False
    except OperationalError as error:
        if is_locked_error(error):
            return False
        raise
    return row is not None and window_seconds > 0 and str(row[0]) >= cutoff


def turn_index(connection: Connection, session_id: str, hook_name: str = CONTEXT_SURFACING) -> int:
    """How many ``context_usage`` rows ``hook_name`` wrote for the session so far."""
    row = connection.execute(
        "SELECT COUNT(*) FROM context_usage WHERE session_id = ? AND hook_name = ?",
        (session_id, hook_name),
    ).fetchone()
    return int(row[0])


def recent_queries(
    connection: Connection, session_id: str, within_seconds: int, limit: int, now: datetime
) -> list[str]:
    """The session's latest context-surfacing prompts of the last ``within_seconds``, newest
    first (rows without a prompt are skipped)."""
    rows = _recent_rows(
        connection,
        "SELECT query_text FROM context_usage WHERE session_id = ? AND hook_name = ? "
        "AND timestamp >= ? AND query_text IS NOT NULL AND query_text != '' "
        "ORDER BY id DESC LIMIT ?",
        session_id,
        within_seconds,
        limit,
        now,
    )
    return [str(row[0]) for row in rows]


def last_injected(
    connection: Connection, session_id: str, within_seconds: int, limit: int, now: datetime
) -> list[int]:
    """The first ``limit`` documents the session's latest context-surfacing turn of the last
    ``within_seconds`` injected (a turn that reached retrieval), in the order shown."""
    rows = _recent_rows(
        connection,
        "SELECT doc_id FROM recall_events WHERE usage_id = (SELECT id FROM context_usage "
        "WHERE session_id = ? AND hook_name = ? AND timestamp >= ? AND query_text IS NOT NULL "
        "ORDER BY id DESC LIMIT 1) ORDER BY id LIMIT ?",
        session_id,
        within_seconds,
        limit,
        now,
    )
    return [int(row[0]) for row in rows]


def _recent_rows(
    connection: Connection,
    sql: str,
    session_id: str,
    within_seconds: int,
    limit: int,
    now: datetime,
) -> list[Any]:
    """``sql``'s rows for the session's context-surfacing turns of the last
    ``within_seconds`` (parameters: session, hook, cutoff, limit); none for ``limit <= 0``."""
    if limit <= 0:
        return []
    cutoff = to_iso(now - timedelta(seconds=max(0, within_seconds)))
    return connection.execute(sql, (session_id, CONTEXT_SURFACING, cutoff, limit)).fetchall()


def log_context_usage(
    connection: Connection,
    session_id: str,
    hook_name: str,
    *,
    injected: Sequence[tuple[int, float]],
    estimated_tokens: int,
    turn: int,
    query_text: str | None,
    now: datetime,
    considered: Sequence[Considered] = (),
) -> int:
    """Record one hook run and everything it injected, in one write transaction.

    ``injected`` holds (document id, search score) pairs; a document named twice counts once
    (its first score). Writes the ``context_usage`` row, a ``recall_events`` row per document
    (``query_hash`` is the SHA-256 of ``query_text``, or ``""`` without one), the
    ``recall_stats`` of each, a co-activation for every pair, and the ``session_log`` row
    (``turns`` counts context-surfacing runs). Returns the ``context_usage`` id.

    Raises :class:`DocumentNotFoundError` (writing nothing) for an unknown document id, and
    :class:`VaultBusyError` when the vault stays locked past ``write_transaction``'s 30 s
    of retries.
    """
    scores: dict[int, float] = {}
    for doc_id, score in injected:
        value = float(score)
        if not math.isfinite(value):
            raise InvalidQueryError(f"the score of document {doc_id} is not a number: {score!r}")
        scores.setdefault(int(doc_id), value)
    import json  # a hook records usage; searching never does

    query_hash = prompt_hash(query_text, strip=False) if query_text else ""
    stamp = to_iso(now)
    with write_transaction(connection):
        paths = _display_paths(connection, list(scores))
        new_id = connection.insert(
            "INSERT INTO context_usage (session_id, timestamp, hook_name, injected_paths, "
            "estimated_tokens, turn_index, query_text) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                session_id,
                stamp,
                hook_name,
                json.dumps([paths[doc] for doc in scores], ensure_ascii=False),
                estimated_tokens,
                turn,
                query_text,
            ),
        )
        usage_id = int(new_id or 0)
        if considered:  # the injection audit: what it weighed, and why
            connection.executemany(
                "INSERT INTO injection_audit (usage_id, position, path, doc_id, score, status, "
                "reason, chars) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(usage_id, n, *row) for n, row in enumerate(considered)],
            )
        new_documents = len(scores) - _already_injected(connection, session_id, list(scores))
        connection.executemany(
            "INSERT INTO recall_events (doc_id, query_hash, search_score, session_id, usage_id, "
            "turn_index, surfaced_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (doc, query_hash, score, session_id, usage_id, turn, stamp)
                for doc, score in scores.items()
            ],
        )
        for doc, score in scores.items():
            update_recall_stats(connection, doc, score, stamp)
        connection.executemany(
            "INSERT INTO co_activations (doc_a, doc_b, count, last_seen) VALUES (?, ?, 1, ?) "
            "ON CONFLICT (doc_a, doc_b) DO UPDATE SET count = co_activations.count + 1, "
            "last_seen = excluded.last_seen",
            [(a, b, stamp) for a, b in combinations(sorted(scores), 2)],
        )
        connection.execute(
            "INSERT INTO session_log (session_id, started_at, last_seen_at, turns, "
            "injected_documents, estimated_tokens) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (session_id) DO UPDATE SET last_seen_at = excluded.last_seen_at, "
            "turns = session_log.turns + excluded.turns, "
            "injected_documents = session_log.injected_documents + excluded.injected_documents, "
            "estimated_tokens = session_log.estimated_tokens + excluded.estimated_tokens",
            (
                session_id,
                stamp,
                stamp,
                int(hook_name == CONTEXT_SURFACING),
                new_documents,
                estimated_tokens,
            ),
        )
    return usage_id


def _display_paths(connection: Connection, ids: Sequence[int]) -> dict[int, str]:
    if not ids:
        return {}
    rows = connection.execute(
        "SELECT id, collection || '/' || path FROM documents "
        f"WHERE id IN ({','.join('?' * len(ids))})",
        list(ids),
    ).fetchall()
    paths = {int(row[0]): str(row[1]) for row in rows}
    unknown = [doc for doc in ids if doc not in paths]
    if unknown:
        raise DocumentNotFoundError(f"no document with id {unknown[0]} in the vault")
    return paths


def _already_injected(connection: Connection, session_id: str, ids: Sequence[int]) -> int:
    if not ids:
        return 0
    row = connection.execute(
        "SELECT COUNT(DISTINCT doc_id) FROM recall_events WHERE session_id = ? "
        f"AND doc_id IN ({','.join('?' * len(ids))})",
        [session_id, *ids],
    ).fetchone()
    return int(row[0])


def update_recall_stats(connection: Connection, doc: int, score: float, stamp: str) -> None:
    """Fold one recall into the document's summary (its recall_events row already written).

    ``diversity_score = min(1, max(unique_queries, recall_days) / 5)`` (the spec's);
    ``spacing_score`` is half log-scaled distinct days (full at 7) and half the first-to-last
    span (full at 30 days), so recalls spread over weeks beat a burst on one day.
    """
    connection.execute(
        "INSERT INTO recall_stats (doc_id, recall_count, total_score, max_score, "
        "first_recalled_at, last_recalled_at) VALUES (?, 1, ?, ?, ?, ?) "
        "ON CONFLICT (doc_id) DO UPDATE SET recall_count = recall_stats.recall_count + 1, "
        "total_score = recall_stats.total_score + excluded.total_score, "
        "max_score = CASE WHEN excluded.max_score > recall_stats.max_score "
        "THEN excluded.max_score ELSE recall_stats.max_score END, "
        "first_recalled_at = COALESCE(recall_stats.first_recalled_at, "
        "excluded.first_recalled_at), "
        "last_recalled_at = excluded.last_recalled_at",
        (doc, score, score, stamp, stamp),
    )
    unique_queries, recall_days = connection.execute(
        "SELECT COUNT(DISTINCT NULLIF(query_hash, '')), COUNT(DISTINCT substr(surfaced_at, 1, 10)) "
        "FROM recall_events WHERE doc_id = ?",
        (doc,),
    ).fetchone()
    first = connection.execute(
        "SELECT first_recalled_at FROM recall_stats WHERE doc_id = ?", (doc,)
    ).fetchone()[0]
    span_days = max(0.0, (_parse(stamp) - _parse(str(first))).total_seconds() / 86400)
    diversity = diversity_score(int(unique_queries), int(recall_days))
    spacing = spacing_score(int(recall_days), span_days)
    connection.execute(
        "UPDATE recall_stats SET unique_queries = ?, recall_days = ?, diversity_score = ?, "
        "spacing_score = ? WHERE doc_id = ?",
        (int(unique_queries), int(recall_days), diversity, spacing, doc),
    )


_update_recall_stats = update_recall_stats  # the name it had


def _parse(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def co_activation_count(connection: Connection, doc_id: int) -> int:
    """How often the document was injected together with any other (sum over partners)."""
    row = connection.execute(
        "SELECT (SELECT COALESCE(SUM(count), 0) FROM co_activations WHERE doc_a = ?) + "
        "(SELECT COALESCE(SUM(count), 0) FROM co_activations WHERE doc_b = ?)",
        (doc_id, doc_id),
    ).fetchone()
    return int(row[0])


def co_activation_pairs(
    connection: Connection, doc_ids: Sequence[int]
) -> dict[tuple[int, int], int]:
    """How often each pair of ``doc_ids`` was injected together, keyed ``(low, high)``."""
    ids = sorted(set(doc_ids))
    if len(ids) < 2:
        return {}
    marks = ",".join("?" * len(ids))
    rows = connection.execute(
        f"SELECT doc_a, doc_b, count FROM co_activations "
        f"WHERE doc_a IN ({marks}) AND doc_b IN ({marks})",
        (*ids, *ids),
    ).fetchall()
    return {(int(a), int(b)): int(count) for a, b, count in rows}


CURATION_HOOKS = ("memory_pin", "memory_snooze", "memory_forget")


def log_curation(connection: Connection, action: str, now: datetime) -> None:
    """A ``context_usage`` row for a pin, snooze or forget (session ``""``): what the
    memory-management nudge counts prompts since."""
    with write_transaction(connection):
        connection.execute(
            "INSERT INTO context_usage (session_id, timestamp, hook_name) VALUES ('', ?, ?)",
            (to_iso(now), action),
        )


def prompts_since_curation(connection: Connection, hook_name: str) -> int:
    """``hook_name`` rows (prompts) written since the last pin, snooze or forget."""
    marks = ",".join("?" * len(CURATION_HOOKS))
    row = connection.execute(
        f"SELECT COUNT(*) FROM context_usage WHERE hook_name = ? AND id > "
        f"(SELECT COALESCE(MAX(id), 0) FROM context_usage WHERE hook_name IN ({marks}))",
        (hook_name, *CURATION_HOOKS),
    ).fetchone()
    return int(row[0])


def session_records(connection: Connection, limit: int) -> list[SessionRecord]:
    """The most recently active sessions first."""
    inserted = connection.catalog.insertion_order("session_log")
    rows = connection.execute(
        "SELECT session_id, started_at, last_seen_at, turns, injected_documents, "
        "estimated_tokens, handoff_path, summary, files_changed, ended_at, machine "
        "FROM session_log "
        f"ORDER BY last_seen_at DESC, {inserted} DESC LIMIT ?",
        (limit,),
    ).fetchall()
    return [
        SessionRecord(
            session_id=str(r[0]),
            started_at=str(r[1]),
            last_seen_at=str(r[2]),
            turns=int(r[3]),
            injected_documents=int(r[4]),
            estimated_tokens=int(r[5]),
            handoff_path=None if r[6] is None else str(r[6]),
            summary=None if r[7] is None else str(r[7]),
            files_changed=_file_list(r[8]),
            ended_at=None if r[9] is None else str(r[9]),
            machine=None if r[10] is None else str(r[10]),
        )
        for r in rows
    ]


def _file_list(text: object) -> tuple[str, ...]:
    """``session_log.files_changed`` (a JSON list) as names; anything else as none."""
    if not text:
        return ()
    import json

    try:
        names = json.loads(str(text))
    except (ValueError, RecursionError):
        return ()
    return tuple(str(name) for name in names) if isinstance(names, list) else ()


# -- Stop-hook capture (migration m015) -------------------------------------------------------


def capture_cursor(connection: Connection, session_id: str) -> str | None:
    """The fingerprint of the last turn ``decision-extractor`` read in the session."""
    row = connection.execute(
        "SELECT capture_cursor FROM session_log WHERE session_id = ?", (session_id,)
    ).fetchone()
    return str(row[0]) if row and row[0] else None


def set_capture_cursor(connection: Connection, session_id: str, cursor: str, stamp: str) -> None:
    """Record the last turn read (creating the session's row); call inside a write
    transaction."""
    connection.execute(
        "INSERT INTO session_log (session_id, started_at, last_seen_at, capture_cursor) "
        "VALUES (?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
        "capture_cursor = excluded.capture_cursor, last_seen_at = excluded.last_seen_at",
        (session_id, stamp, stamp, cursor),
    )


def register_session(
    connection: Connection, session_id: str, now: datetime, machine: str | None = None
) -> None:
    """The session's ``session_log`` row, created when it is new (SessionStart), with the
    host it runs on (``machine``; a machine already recorded is kept)."""
    stamp = to_iso(now)
    with write_transaction(connection, retry_seconds=0):
        connection.execute(
            "INSERT INTO session_log (session_id, started_at, last_seen_at, machine) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
            "last_seen_at = excluded.last_seen_at, "
            "machine = COALESCE(session_log.machine, excluded.machine)",
            (session_id, stamp, stamp, machine),
        )


def end_session(
    connection: Connection,
    session_id: str,
    *,
    handoff_path: str,
    summary: str,
    files_changed: Sequence[str],
    stamp: str,
    machine: str | None = None,
    project: str | None = None,
) -> None:
    """Record the session's handoff: path, summary, changed files (JSON list), the project
    it worked in and ``ended_at``; call inside a write transaction (the handoff
    document's)."""
    import json

    connection.execute(
        "INSERT INTO session_log (session_id, started_at, last_seen_at, ended_at, handoff_path, "
        "summary, files_changed, machine, project) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (session_id) DO UPDATE SET ended_at = excluded.ended_at, "
        "last_seen_at = excluded.last_seen_at, handoff_path = excluded.handoff_path, "
        "summary = excluded.summary, files_changed = excluded.files_changed, "
        "machine = COALESCE(excluded.machine, session_log.machine), "
        "project = COALESCE(excluded.project, session_log.project)",
        (
            session_id,
            stamp,
            stamp,
            stamp,
            handoff_path,
            summary,
            json.dumps(list(files_changed), ensure_ascii=False),
            machine,
            project,
        ),
    )


class Handoff(NamedTuple):
    """A session's handoff as ``session_log`` records it."""

    session_id: str
    handoff_path: str
    summary: str
    files_changed: tuple[str, ...]
    ended_at: str


def latest_handoffs(
    connection: Connection,
    limit: int = 1,
    *,
    exclude_session: str = "",
    project: str | None = None,
) -> list[Handoff]:
    """The most recently ended sessions with a handoff, newest first (``exclude_session``
    left out: the session asking); ``project``: only sessions recorded in that project."""
    where = "" if project is None else " AND project = ?"
    inserted = connection.catalog.insertion_order("session_log")
    rows = connection.execute(
        "SELECT session_id, handoff_path, COALESCE(summary, ''), files_changed, ended_at "
        "FROM session_log WHERE handoff_path IS NOT NULL AND ended_at IS NOT NULL "
        f"AND session_id != ?{where} ORDER BY ended_at DESC, {inserted} DESC LIMIT ?",
        (exclude_session, *(() if project is None else (project,)), max(0, limit)),
    ).fetchall()
    return [
        Handoff(str(session_id), str(path), str(summary), _file_list(files), str(ended))
        for session_id, path, summary, files, ended in rows
    ]


def session_prompts(connection: Connection, session_id: str, limit: int) -> list[PromptRecord]:
    """The session's context-surfacing runs, oldest first (at most ``limit``, the newest
    ones): each prompt, its tokens and the documents it was given, in the order injected."""
    import json

    rows = connection.execute(
        "SELECT id, timestamp, turn_index, COALESCE(query_text, ''), estimated_tokens, "
        "injected_paths FROM context_usage WHERE session_id = ? AND hook_name = ? "
        "ORDER BY id DESC LIMIT ?",
        (session_id, CONTEXT_SURFACING, limit),
    ).fetchall()
    ids = [int(row[0]) for row in rows]
    events: dict[tuple[int, str], tuple[float, bool | None]] = {}
    if ids:
        marks = ",".join("?" * len(ids))
        for usage, path, score, referenced, checked in connection.execute(
            "SELECT e.usage_id, d.collection || '/' || d.path, e.search_score, "
            "e.was_referenced, e.checked_at FROM recall_events e "
            f"JOIN documents d ON d.id = e.doc_id WHERE e.usage_id IN ({marks})",
            ids,
        ):
            judged = None if checked is None else bool(referenced)
            events[(int(usage), str(path))] = (float(score), judged)
    trails: dict[int, list[Considered]] = {usage: [] for usage in ids}
    if ids:
        for usage, *row in connection.execute(
            "SELECT usage_id, path, COALESCE(doc_id, 0), score, status, reason, chars "
            f"FROM injection_audit WHERE usage_id IN ({marks}) ORDER BY usage_id, position",
            ids,
        ):
            trails[int(usage)].append(
                Considered(str(row[0]), int(row[1]), float(row[2]), str(row[3]), str(row[4]),
                           int(row[5]))
            )  # fmt: skip
    prompts: list[PromptRecord] = []
    for usage, stamp, turn, text, tokens, paths in reversed(rows):
        try:
            listed = [str(path) for path in json.loads(paths or "[]")]
        except (ValueError, TypeError):  # a row another tool wrote: shown without entries
            listed = []
        entries = tuple(
            InjectedEntry(path, *events.get((int(usage), path), (0.0, None))) for path in listed
        )
        prompts.append(
            PromptRecord(
                int(usage),
                str(stamp),
                int(turn),
                str(text),
                int(tokens),
                entries,
                tuple(trails.get(int(usage), ())),
            )
        )
    return prompts
