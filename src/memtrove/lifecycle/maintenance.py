"""The lanes' settings, the heavy lane's gates, and the journal of every lane attempt.

The **light lane** ticks every ``MEMTROVE_CONSOLIDATION_INTERVAL`` (5 min): A-MEM backfill of
the three newest unenriched documents, Phase 2 when it last ran six intervals ago (30 min),
Phase 3 when three intervals ago (15 min). The **heavy lane** (off by default) ticks every
``MEMTROVE_HEAVY_LANE_INTERVAL`` (30 min) and runs only inside the quiet-hour window
(``[start, end)`` in local hours, wrapping past midnight when start > end) and while
``context_usage`` saw at most ``MEMTROVE_HEAVY_LANE_MAX_USAGES`` rows in the last 10 minutes;
it consolidates stale-first (or surprisal-first) with the merge guard always enforced.

Every heavy attempt writes ``maintenance_runs`` rows: ``gate``/``skipped`` with the reason
(outside_window, query_rate_high, lease_unavailable), or one row per phase (consolidate,
deductive) going ``started`` -> ``completed`` | ``failed`` | ``skipped``. Light ticks write a
``tick`` row the same way. Rows older than 30 days are pruned.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from memtrove.db.connection import Connection, write_transaction
from memtrove.errors import ConfigError

__all__ = [
    "HEAVY_LEASE",
    "LIGHT_LEASE",
    "LaneSettings",
    "MaintenanceRun",
    "consolidation_check",
    "finish_run",
    "in_window",
    "mark_phase",
    "phase_due",
    "recent_context_usages",
    "recent_runs",
    "record_skip",
    "start_run",
]

LIGHT_LEASE = "light-consolidation"
HEAVY_LEASE = "heavy-maintenance"
RATE_WINDOW = timedelta(minutes=10)
JOURNAL_DAYS = 30
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def stamp(moment: datetime | None = None) -> str:
    """UTC ISO-8601 with microseconds: journal rows of one second still order."""
    moment = moment or datetime.now(UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LaneSettings(NamedTuple):
    """Everything the lanes can be told (defaults as in the README; see :meth:`from_env`)."""

    light: bool = False
    heavy: bool = False
    light_interval: float = 300.0
    heavy_interval: float = 1800.0
    window_start: int | None = None
    window_end: int | None = None
    max_usages: int = 30
    observation_limit: int = 100
    deductive_limit: int = 40
    surprisal: bool = False
    merge_normal: float = 0.93
    merge_strict: float = 0.98
    guard_dry_run: bool = False
    contradiction_policy: str = "link"
    contradiction_min_confidence: float = 0.5
    lease_ttl: float = 60.0

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> LaneSettings:
        """Parse the ``MEMTROVE_*`` lane variables (the caller passes os.environ); a bad value
        is a ConfigError naming the variable."""

        def raw(name: str) -> str:
            return env.get(name, "").strip()

        def flag(name: str) -> bool:
            value = raw(name).lower()
            if value in _TRUE:
                return True
            if value in _FALSE:
                return False
            raise ConfigError(f"{name} must be true or false, not {raw(name)!r}")

        def number(name: str, default: float, low: float, high: float) -> float:
            text = raw(name)
            if not text:
                return default
            try:
                value = float(text)
            except ValueError:
                raise ConfigError(f"{name} must be a number, not {text!r}") from None
            if not low <= value <= high:  # NaN fails this too
                raise ConfigError(f"{name} must be between {low:g} and {high:g}, not {text}")
            return value

        def hour(name: str) -> int | None:
            text = raw(name)
            if not text:
                return None
            if not text.isdigit() or not 0 <= int(text) <= 23:
                raise ConfigError(f"{name} must be an hour from 0 to 23, not {text!r}")
            return int(text)

        policy = raw("MEMTROVE_CONTRADICTION_POLICY").lower() or "link"
        if policy not in ("link", "supersede"):
            raise ConfigError(
                f"MEMTROVE_CONTRADICTION_POLICY must be link or supersede, not {policy!r}"
            )
        day_ms = 86_400_000.0
        return cls(
            light=flag("MEMTROVE_ENABLE_CONSOLIDATION"),
            heavy=flag("MEMTROVE_HEAVY_LANE"),
            light_interval=number("MEMTROVE_CONSOLIDATION_INTERVAL", 300_000, 100, day_ms) / 1000,
            heavy_interval=number("MEMTROVE_HEAVY_LANE_INTERVAL", 1_800_000, 100, day_ms) / 1000,
            window_start=hour("MEMTROVE_HEAVY_LANE_WINDOW_START"),
            window_end=hour("MEMTROVE_HEAVY_LANE_WINDOW_END"),
            max_usages=int(number("MEMTROVE_HEAVY_LANE_MAX_USAGES", 30, 0, 1_000_000)),
            observation_limit=int(number("MEMTROVE_HEAVY_LANE_OBS_LIMIT", 100, 1, 10_000)),
            deductive_limit=int(number("MEMTROVE_HEAVY_LANE_DED_LIMIT", 40, 2, 1_000)),
            surprisal=flag("MEMTROVE_HEAVY_LANE_SURPRISAL"),
            merge_normal=number("MEMTROVE_MERGE_SCORE_NORMAL", 0.93, 0, 1),
            merge_strict=number("MEMTROVE_MERGE_SCORE_STRICT", 0.98, 0, 1),
            guard_dry_run=flag("MEMTROVE_MERGE_GUARD_DRY_RUN"),
            contradiction_policy=policy,
            contradiction_min_confidence=number("MEMTROVE_CONTRADICTION_MIN_CONFIDENCE", 0.5, 0, 1),
            lease_ttl=number("MEMTROVE_LANE_LEASE_TTL", 60, 1, 3600),
        )


def in_window(hour: int, start: int | None, end: int | None) -> bool:
    """Is local ``hour`` inside ``[start, end)``? Wraps past midnight when start > end
    (22-6 is 10 PM to 6 AM); no window (either bound unset) always is; start == end is
    the whole day."""
    if start is None or end is None or start == end:
        return True
    if start < end:
        return start <= hour < end
    return hour >= start or hour < end


def recent_context_usages(connection: Connection, now: datetime) -> int:
    """``context_usage`` rows of the last 10 minutes (the cutoff bound as ISO-8601 with T)."""
    cutoff = (now - RATE_WINDOW).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    row = connection.execute(
        "SELECT COUNT(*) FROM context_usage WHERE timestamp > ?", (cutoff,)
    ).fetchone()
    return int(row[0])


# -- phase cadence ---------------------------------------------------------------------------


def phase_due(connection: Connection, phase: str, every: float, now: datetime) -> bool:
    """Has ``phase`` not run in the last ``every`` seconds (on any host)?"""
    row = connection.execute(
        "SELECT last_run_at FROM consolidation_state WHERE phase = ?", (phase,)
    ).fetchone()
    return row is None or str(row[0]) <= stamp(now - timedelta(seconds=every))


def mark_phase(connection: Connection, phase: str, now: datetime) -> None:
    with write_transaction(connection):
        connection.execute(
            "INSERT INTO consolidation_state (phase, last_run_at) VALUES (?, ?) "
            "ON CONFLICT (phase) DO UPDATE SET last_run_at = excluded.last_run_at",
            (phase, stamp(now)),
        )


# -- the journal -----------------------------------------------------------------------------


class MaintenanceRun(NamedTuple):
    """One ``maintenance_runs`` row."""

    id: int
    lane: str
    phase: str
    status: str
    reason: str | None
    selected_count: int
    processed_count: int
    created_count: int
    rejected_count: int
    null_call_count: int
    metrics: dict[str, Any]
    host: str | None
    pid: int | None
    started_at: str
    finished_at: str | None

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


_COLUMNS = (
    "id, lane, phase, status, reason, selected_count, processed_count, created_count, "
    "rejected_count, null_call_count, metrics_json, host, pid, started_at, finished_at"
)


def start_run(connection: Connection, lane: str, phase: str, selected: int = 0) -> int:
    """Journal an attempt as ``started`` (and prune old rows); :func:`finish_run` closes
    it."""
    with write_transaction(connection):
        prune(connection)
        run_id = connection.insert(
            "INSERT INTO maintenance_runs (lane, phase, status, selected_count, host, pid, "
            "started_at) VALUES (?, ?, 'started', ?, ?, ?, ?)",
            (lane, phase, selected, socket.gethostname(), os.getpid(), stamp()),
        )
        return int(run_id or 0)


def finish_run(
    connection: Connection,
    run_id: int,
    status: str,
    *,
    reason: str | None = None,
    selected: int | None = None,
    processed: int = 0,
    created: int = 0,
    rejected: int = 0,
    null_calls: int = 0,
    metrics: Mapping[str, Any] | None = None,
) -> None:
    with write_transaction(connection):
        connection.execute(
            "UPDATE maintenance_runs SET status = ?, reason = ?, "
            "selected_count = COALESCE(?, selected_count), processed_count = ?, "
            "created_count = ?, rejected_count = ?, null_call_count = ?, metrics_json = ?, "
            "finished_at = ? WHERE id = ?",
            (
                status,
                reason,
                selected,
                processed,
                created,
                rejected,
                null_calls,
                json.dumps(dict(metrics), sort_keys=True) if metrics else None,
                stamp(),
                run_id,
            ),
        )


def record_skip(
    connection: Connection, lane: str, reason: str, metrics: Mapping[str, Any] | None = None
) -> int:
    """Journal a gated attempt (``phase='gate'``, ``status='skipped'``) and prune old rows."""
    now = stamp()
    with write_transaction(connection):
        new_id = connection.insert(
            "INSERT INTO maintenance_runs (lane, phase, status, reason, metrics_json, host, pid, "
            "started_at, finished_at) VALUES (?, 'gate', 'skipped', ?, ?, ?, ?, ?, ?)",
            (
                lane,
                reason,
                json.dumps(dict(metrics), sort_keys=True) if metrics else None,
                socket.gethostname(),
                os.getpid(),
                now,
                now,
            ),
        )
        run_id = int(new_id or 0)
        prune(connection)
        return run_id


def prune(connection: Connection) -> None:
    """Drop journal rows older than 30 days (call inside a write transaction)."""
    cutoff = stamp(datetime.now(UTC) - timedelta(days=JOURNAL_DAYS))
    connection.execute("DELETE FROM maintenance_runs WHERE started_at < ?", (cutoff,))


def recent_runs(
    connection: Connection, *, lane: str | None = None, limit: int = 20
) -> list[MaintenanceRun]:
    """Journal rows, newest first."""
    where = "WHERE lane = ?" if lane else ""
    rows = connection.execute(
        f"SELECT {_COLUMNS} FROM maintenance_runs {where} ORDER BY started_at DESC, id DESC "
        "LIMIT ?",
        ((lane, limit) if lane else (limit,)),
    ).fetchall()
    runs = []
    for row in rows:
        try:
            metrics = json.loads(row[10]) if row[10] else {}
        except (ValueError, RecursionError):
            metrics = {}
        runs.append(
            MaintenanceRun(
                int(row[0]),
                str(row[1]),
                str(row[2]),
                str(row[3]),
                row[4],
                int(row[5]),
                int(row[6]),
                int(row[7]),
                int(row[8]),
                int(row[9]),
                metrics if isinstance(metrics, dict) else {},
                row[11],
                row[12],
                str(row[13]),
                row[14],
            )
        )
    return runs


def consolidation_check(connection: Connection, has_llm: bool) -> Any:
    """The ``doctor`` line on consolidation: what it wrote, when each lane last ran, how it
    runs without an LLM, and ticks a dead host left unfinished (a warning)."""
    from memtrove.results import Check

    active = connection.execute(
        "SELECT COUNT(*) FROM consolidated_observations WHERE status = 'active'"
    ).fetchone()[0]
    last: dict[str, str] = {}
    for lane in ("light", "heavy"):
        row = connection.execute(
            "SELECT status, reason, started_at FROM maintenance_runs WHERE lane = ? "
            "ORDER BY started_at DESC, id DESC LIMIT 1",
            (lane,),
        ).fetchone()
        last[lane] = (
            "never" if row is None else f"{row[0]}{f' ({row[1]})' if row[1] else ''} at {row[2]}"
        )
    cutoff = stamp(datetime.now(UTC) - timedelta(hours=1))
    interrupted = connection.execute(
        "SELECT COUNT(*) FROM maintenance_runs WHERE finished_at IS NULL AND started_at < ?",
        (cutoff,),
    ).fetchone()[0]
    how = (
        "patterns and deductions by the LLM"
        if has_llm
        else "without an LLM: patterns from the facts themselves, no deductive synthesis"
    )
    detail = (
        f"{active} consolidated observation(s); last light tick: {last['light']}; last heavy "
        f"attempt: {last['heavy']}; {how}"
    )
    if interrupted:
        return Check(
            "consolidation",
            "warn",
            f"{detail}; {interrupted} tick(s) never finished (a host stopped mid-tick)",
            "nothing to repair: the next tick takes the lease over; see maintenance_runs",
        )
    fix = ""
    if last["light"] == "never" and last["heavy"] == "never":
        fix = (
            "set MEMTROVE_ENABLE_CONSOLIDATION=true on a long-lived host (memtrove watch), or "
            "run memtrove consolidate"
        )
    return Check("consolidation", "ok", detail, fix)
