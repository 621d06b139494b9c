"""The lanes' settings and gates, the journal, the light and heavy ticks in one process,
LaneHost's start/stop, and reflect."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memtrove import Vault
from memtrove.config import Settings
from memtrove.db.connection import write_transaction
from memtrove.errors import ConfigError, InvalidQueryError, LeaseHeldError
from memtrove.index.internal import write_internal
from memtrove.lifecycle.leases import Lease
from memtrove.lifecycle.maintenance import (
    HEAVY_LEASE,
    LIGHT_LEASE,
    LaneSettings,
    in_window,
    recent_context_usages,
)
from memtrove.models.registry import Models, ModelSettings
from memtrove.text import to_iso
from memtrove.vault.lanes import LaneHost
from tests.conftest import where
from tests.fakes.model_server import ModelServer
from tests.lifecycle.consolidation_helpers import observe, rows

ALICE = "Alice decided to use PostgreSQL for the billing service"


def test_lane_settings_defaults_and_env() -> None:
    assert LaneSettings.from_env({}) == LaneSettings()
    lanes = LaneSettings.from_env(
        {
            "MEMTROVE_ENABLE_CONSOLIDATION": "true",
            "MEMTROVE_HEAVY_LANE": "1",
            "MEMTROVE_CONSOLIDATION_INTERVAL": "250",
            "MEMTROVE_HEAVY_LANE_INTERVAL": "60000",
            "MEMTROVE_HEAVY_LANE_WINDOW_START": "22",
            "MEMTROVE_HEAVY_LANE_WINDOW_END": "6",
            "MEMTROVE_HEAVY_LANE_MAX_USAGES": "5",
            "MEMTROVE_HEAVY_LANE_SURPRISAL": "yes",
            "MEMTROVE_MERGE_GUARD_DRY_RUN": "true",
            "MEMTROVE_CONTRADICTION_POLICY": "Supersede",
            "MEMTROVE_LANE_LEASE_TTL": "2",
        }
    )
    assert (lanes.light, lanes.heavy, lanes.light_interval, lanes.heavy_interval) == (
        True, True, 0.25, 60.0,
    )  # fmt: skip
    assert (lanes.window_start, lanes.window_end, lanes.max_usages) == (22, 6, 5)
    assert lanes.surprisal and lanes.guard_dry_run and lanes.contradiction_policy == "supersede"
    assert lanes.lease_ttl == 2.0


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("MEMTROVE_HEAVY_LANE", "maybe"),
        ("MEMTROVE_HEAVY_LANE_WINDOW_START", "24"),
        ("MEMTROVE_HEAVY_LANE_WINDOW_END", "-1"),
        ("MEMTROVE_CONSOLIDATION_INTERVAL", "10"),
        ("MEMTROVE_MERGE_SCORE_NORMAL", "1.5"),
        ("MEMTROVE_MERGE_SCORE_STRICT", "nan"),
        ("MEMTROVE_CONTRADICTION_POLICY", "delete"),
        ("MEMTROVE_HEAVY_LANE_MAX_USAGES", "many"),
    ],
)
def test_bad_lane_settings_name_their_variable(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=name):
        LaneSettings.from_env({name: value})


@pytest.mark.parametrize(
    ("hour", "start", "end", "inside"),
    [
        (3, None, None, True),
        (3, 22, None, True),
        (23, 22, 6, True),
        (0, 22, 6, True),
        (5, 22, 6, True),
        (6, 22, 6, False),
        (12, 22, 6, False),
        (22, 22, 6, True),
        (1, 1, 5, True),
        (5, 1, 5, False),
        (0, 1, 5, False),
        (9, 4, 4, True),
    ],
)
def test_the_quiet_window_wraps_past_midnight(
    hour: int, start: int | None, end: int | None, inside: bool
) -> None:
    assert in_window(hour, start, end) is inside


def usage(vault: Vault, moment: datetime, count: int = 1) -> None:
    with write_transaction(vault._connection):
        vault._connection.executemany(
            "INSERT INTO context_usage (session_id, timestamp, hook_name) "
            "VALUES ('s', ?, 'context-surfacing')",
            [(to_iso(moment),)] * count,
        )


def test_the_rate_gate_counts_the_last_ten_minutes(vault: Vault) -> None:
    now = datetime.now(UTC)
    usage(vault, now - timedelta(minutes=11), 5)
    usage(vault, now - timedelta(minutes=2), 3)
    assert recent_context_usages(vault._connection, now) == 3


def reasons(vault: Vault, lane: str = "heavy") -> list[tuple[str, str, str | None]]:
    return [
        (r.phase, r.status, r.reason)
        for r in reversed(vault.consolidation.maintenance_runs(lane=lane))
    ]


def test_every_heavy_attempt_is_journaled_with_its_reason(vault: Vault) -> None:
    noon = datetime.now().astimezone().replace(hour=12, minute=0)
    night = LaneSettings(window_start=22, window_end=6, max_usages=2)
    assert vault.consolidation.heavy_lane_tick(night, now=noon).reason == "outside_window"
    usage(vault, datetime.now(UTC), 3)
    open_window = LaneSettings(max_usages=2)
    assert vault.consolidation.heavy_lane_tick(open_window).reason == "query_rate_high"
    with Lease.acquire(vault._connection, HEAVY_LEASE):
        assert (
            vault.consolidation.heavy_lane_tick(LaneSettings(max_usages=10)).reason
            == "lease_unavailable"
        )
    observe(vault, "a1", [ALICE])
    observe(vault, "a2", [ALICE])
    tick = vault.consolidation.heavy_lane_tick(LaneSettings(max_usages=10))
    assert tick.status == "completed"
    assert reasons(vault) == [
        ("gate", "skipped", "outside_window"),
        ("gate", "skipped", "query_rate_high"),
        ("gate", "skipped", "lease_unavailable"),
        ("consolidate", "completed", None),
        ("deductive", "skipped", "no_llm"),
    ]
    runs = vault.consolidation.maintenance_runs(lane="heavy")
    consolidate = next(r for r in runs if r.phase == "consolidate")
    assert consolidate.metrics["selector"] == "stale-first" and consolidate.created_count == 1
    assert consolidate.finished_at is not None and consolidate.started_at <= consolidate.finished_at
    gate = runs[-1]
    assert gate.metrics == {"end": 6, "hour": 12, "start": 22}
    assert len(rows(vault)) == 1
    # The lease was released: the next process can take it.
    Lease.acquire(vault._connection, HEAVY_LEASE).release()


def test_the_heavy_lane_enforces_the_guard_even_in_dry_run(vault: Vault) -> None:
    lanes = LaneSettings(guard_dry_run=True)
    observe(vault, "a1", [ALICE])
    observe(vault, "a2", [ALICE])
    vault.consolidation.heavy_lane_tick(lanes)
    observe(vault, "b1", [ALICE.replace("Alice", "Bob")])
    observe(vault, "b2", [ALICE.replace("Alice", "Bob")])
    vault.consolidation.heavy_lane_tick(lanes)
    assert len(rows(vault)) == 2


def test_surprisal_without_vectors_falls_back_to_stale_first(vault: Vault) -> None:
    observe(vault, "a1", [ALICE])
    vault.consolidation.heavy_lane_tick(LaneSettings(surprisal=True))
    [run] = [
        r for r in vault.consolidation.maintenance_runs(lane="heavy") if r.phase == "consolidate"
    ]
    assert run.metrics["selector"] == "surprisal-fallback-stale"


def test_surprisal_with_vectors_selects_its_batch(vault: Vault) -> None:
    for i in range(8):
        observe(vault, f"o{i}", [f"observation {i} about {'cats' if i % 2 else 'trains'}"])
    vault.embed()
    vault.consolidation.heavy_lane_tick(LaneSettings(surprisal=True, observation_limit=4))
    [run] = [
        r for r in vault.consolidation.maintenance_runs(lane="heavy") if r.phase == "consolidate"
    ]
    assert run.metrics["selector"] == "surprisal" and run.metrics["candidateCount"] == 4
    assert run.selected_count == 4


def test_the_light_tick_runs_each_phase_on_its_cadence(vault: Vault) -> None:
    lanes = LaneSettings(light_interval=3600)
    first = vault.consolidation.light_lane_tick(lanes)
    assert first.status == "completed" and first.report is not None
    assert first.report.phase2 is not None and first.report.phase3 is not None
    second = vault.consolidation.light_lane_tick(lanes)
    assert second.report is not None and second.report.enrichment is not None
    assert second.report.phase2 is None and second.report.phase3 is None
    with write_transaction(vault._connection):  # three intervals later: Phase 3 only
        vault._connection.execute(
            "UPDATE consolidation_state SET last_run_at = ? WHERE phase = 'phase3'",
            ("2000-01-01T00:00:00.000000Z",),
        )
    third = vault.consolidation.light_lane_tick(lanes)
    assert third.report is not None and third.report.phase2 is None and third.report.phase3
    assert [s for _, s, _ in reasons(vault, "light")] == ["completed"] * 3


def test_the_light_tick_skips_while_another_holds_the_lease(vault: Vault) -> None:
    with Lease.acquire(vault._connection, LIGHT_LEASE):
        assert vault.consolidation.light_lane_tick(LaneSettings()).reason == "lease_unavailable"
        with pytest.raises(LeaseHeldError, match="light-consolidation"):
            vault.consolidation.consolidate()
    assert reasons(vault, "light") == [("gate", "skipped", "lease_unavailable")]


def test_consolidate_runs_every_phase_and_enriches(vault: Vault, notes: Path) -> None:
    (notes / "a.md").write_text("# Billing\n\nPostgreSQL for billing.\n", encoding="utf-8")
    vault.add_collection(notes)
    vault.update()
    observe(vault, "a1", [ALICE])
    observe(vault, "a2", [ALICE])
    preview = vault.consolidation.consolidate(dry_run=True)
    assert preview.dry_run and preview.enrichment is None and rows(vault) == []
    assert vault.consolidation.maintenance_runs() == []
    report = vault.consolidation.consolidate()
    assert report.enrichment is not None and report.enrichment["documents"] == 3
    assert report.phase2 is not None and report.phase2.created == 1
    assert "phase 3: skipped (no llm)" in report.text()
    assert report.to_dict()["phase2"]["created"] == 1
    # The consolidated observations are visible: in the report and in reflect.
    [pattern] = report.to_dict()["consolidated_observations"]
    assert pattern["proof_count"] == 2 and pattern["status"] == "active"
    assert "consolidated observations: 1 active" in report.text()
    assert f"  2x {pattern['observation']}" in report.text()
    assert vault.consolidation.consolidate(dry_run=True).observations == (pattern,)
    [tick] = [run for run in vault.consolidation.maintenance_runs() if run.phase == "tick"]
    assert "consolidated_observations" not in tick.metrics  # the journal keeps the phases
    reflection = vault.consolidation.reflect(14)
    assert reflection.to_dict()["patterns"] == [pattern]
    assert f"  2x {pattern['observation']}  (" in reflection.text()


def test_reflect_finds_repeated_phrases_and_co_activations(vault: Vault) -> None:
    connection = vault._connection
    now = to_iso(datetime.now(UTC))
    with write_transaction(connection):
        ids = [
            write_internal(
                connection,
                "_memtrove",
                f"agent/decisions/{i}.md",
                f"# Decision {i}\n\nWe use the billing service queue for retries, "
                "not the billing service cron.\n",
                "decision",
                now,
            )
            for i in range(2)
        ]
        ids.append(
            write_internal(connection, "_memtrove", "agent/antipatterns/a.md",
                           "# Never retry forever\n\nAvoid it.\n", "antipattern", now)
        )  # fmt: skip
        connection.execute(
            "INSERT INTO co_activations (doc_a, doc_b, count, last_seen) VALUES (?, ?, 4, ?)",
            (ids[0], ids[1], now),
        )
    reflection = vault.consolidation.reflect(14)
    assert reflection.decisions == 2
    phrases = {p["phrase"]: p["count"] for p in reflection.phrases}
    assert phrases["billing service"] == 4 and "the billing" not in phrases
    assert [a["title"] for a in reflection.antipatterns] == ["Never retry forever"]
    assert reflection.co_activations[0]["count"] == 4
    assert "billing service" in reflection.text()
    with pytest.raises(InvalidQueryError):
        vault.consolidation.reflect(0)


def test_a_lane_host_ticks_and_drains(tmp_path: Path, vault: Vault) -> None:
    settings = Settings(where(vault), tmp_path / "config")
    observe(vault, "a1", [ALICE])
    observe(vault, "a2", [ALICE])
    seen: list[str] = []
    host = LaneHost(
        settings.vault_path, settings, light=True, heavy=True,
        lanes=LaneSettings(light_interval=0.1, heavy_interval=0.15),
        on_tick=lambda tick: seen.append(f"{tick.lane}:{tick.status}:{tick.reason}"),
    )  # fmt: skip
    host.start()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not {"light", "heavy"} <= {s.split(":")[0] for s in seen}:
        time.sleep(0.05)
    assert host.stop() and not host.running
    assert any(s.startswith("light:") for s in seen) and any(s.startswith("heavy:") for s in seen)
    assert len(rows(vault)) == 1  # one lane consolidated them, never both
    runs = vault.consolidation.maintenance_runs(limit=1000)
    assert all(r.finished_at is not None for r in runs)
    with pytest.raises(RuntimeError):
        host.start()


def test_a_stuck_tick_is_abandoned_at_stop_and_finishes_safely(
    tmp_path: Path, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(tmp_path / "slow.sqlite", tmp_path / "config")
    with Vault.open(settings.vault_path, config_dir=settings.config_dir) as seeded:
        observe(seeded, "a1", [ALICE])
    model_server.slow_seconds = 1.0
    model_server.set_mode("chat", "slow")  # the A-MEM note hangs the first tick
    monkeypatch.setattr("memtrove.vault.lanes.LIGHT_DRAIN_SECONDS", 0.2)
    host = LaneHost(
        settings.vault_path,
        settings,
        light=True,
        heavy=False,
        lanes=LaneSettings(light_interval=0.05),
        models=Models(ModelSettings(llm_url=model_server.url)),
    )
    host.start()
    deadline = time.monotonic() + 20
    while not model_server.requests_to("chat"):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert host.stop() is False  # abandoned after the drain bound, still running
    while host.running:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    with Vault.open(settings.vault_path, config_dir=settings.config_dir) as reopened:
        [tick] = reopened.consolidation.maintenance_runs(lane="light")
        assert tick.status == "completed" and tick.finished_at is not None
        assert reopened._connection.execute("SELECT COUNT(*) FROM worker_leases").fetchone()[0] == 0


def test_doctor_says_how_consolidation_runs(vault: Vault) -> None:
    def check() -> Any:
        return next(c for c in vault.doctor(timeout=2).checks if c.name == "consolidation")

    fresh = check()
    assert fresh.status == "ok" and "last light tick: never" in fresh.detail
    assert "no deductive synthesis" in fresh.detail and "MEMTROVE_ENABLE_CONSOLIDATION" in fresh.fix
    vault.consolidation.light_lane_tick(LaneSettings())
    assert "last light tick: completed at" in check().detail and check().fix == ""
    with write_transaction(vault._connection):  # a host killed mid-tick, long ago
        vault._connection.execute(
            "INSERT INTO maintenance_runs (lane, phase, status, started_at) "
            "VALUES ('heavy', 'consolidate', 'started', '2000-01-01T00:00:00.000000Z')"
        )
    interrupted = check()
    assert interrupted.status == "warn" and "1 tick(s) never finished" in interrupted.detail


def test_journal_rows_older_than_30_days_are_pruned(vault: Vault) -> None:
    with write_transaction(vault._connection):
        vault._connection.executemany(
            "INSERT INTO maintenance_runs (lane, phase, status, started_at, finished_at) "
            "VALUES ('light', 'tick', 'completed', ?, ?)",
            [
                (stamp, stamp)
                for stamp in ("2000-01-01T00:00:00.000000Z", to_iso(datetime.now(UTC)))
            ],
        )
    vault.consolidation.light_lane_tick(LaneSettings())
    runs = vault.consolidation.maintenance_runs()
    assert len(runs) == 2 and not any(r.started_at.startswith("2000") for r in runs)


@pytest.mark.parametrize(("expires_in", "status"), [(60, "skipped"), (-1, "completed")])
def test_a_lease_left_on_another_host_waits_out_its_ttl(
    vault: Vault, expires_in: int, status: str
) -> None:
    expires = datetime.now(UTC) + timedelta(seconds=expires_in)
    with write_transaction(vault._connection):
        vault._connection.execute(
            "INSERT INTO worker_leases (worker_name, lease_token, acquired_at, expires_at, "
            "holder_host, holder_pid) VALUES (?, 'theirs', ?, ?, 'another-host', 1)",
            (HEAVY_LEASE, to_iso(datetime.now(UTC)), expires.strftime("%Y-%m-%dT%H:%M:%S.%fZ")),
        )
    assert vault.consolidation.heavy_lane_tick(LaneSettings()).status == status


def test_a_failing_phase_is_journaled_as_failed(vault: Vault) -> None:
    observe(vault, "a1", [ALICE])
    with write_transaction(vault._connection):  # a damaged vault: Phase 2 cannot read
        vault._connection.execute("ALTER TABLE consolidated_observations RENAME TO broken")
    tick = vault.consolidation.heavy_lane_tick(LaneSettings())
    assert (tick.status, tick.reason) == ("failed", "phase2_exception")
    [run] = vault.consolidation.maintenance_runs(lane="heavy")
    assert (run.phase, run.status, run.reason) == ("consolidate", "failed", "phase2_exception")
    assert "consolidated_observations" in run.metrics["error"] and run.finished_at is not None
    Lease.acquire(vault._connection, HEAVY_LEASE).release()  # released despite the failure
    light = vault.consolidation.light_lane_tick(LaneSettings())
    assert (light.status, light.reason) == ("failed", "tick_exception")
