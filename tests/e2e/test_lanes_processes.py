"""The consolidation lanes hosted by real processes on one vault: two `memtrove consolidate
--loop` hosts and a `memtrove mcp` host with both lanes on never run a lane twice at once,
the heavy lane journals every attempt with its reason, the merge gates keep Alice and Bob
apart, and a host killed with SIGKILL mid-tick is taken over within the lease TTL; the same
with two `memtrove watch` hosts and a `memtrove mcp` host, all stopped by SIGTERM in bounded
time."""

from __future__ import annotations

import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from memtrove import Vault
from tests.fakes.model_server import ModelServer
from tests.lifecycle.consolidation_helpers import observe

ALICE = "Alice decided to use PostgreSQL for the billing service"
BOB = "Bob decided to use PostgreSQL for the billing service"
TTL = 3


def seeded(tmp_path: Path) -> dict[str, str]:
    vault = tmp_path / "vault.sqlite"
    with Vault.open(vault, config_dir=tmp_path / "config") as opened:
        for name, fact in (("a1", ALICE), ("b1", BOB), ("a2", ALICE), ("b2", BOB)):
            observe(opened, name, [fact])
    return {
        **os.environ,
        "MEMTROVE_VAULT": str(vault),
        "MEMTROVE_CONFIG_DIR": str(tmp_path / "config"),
        "MEMTROVE_ENABLE_CONSOLIDATION": "true",
        "MEMTROVE_HEAVY_LANE": "true",
        "MEMTROVE_CONSOLIDATION_INTERVAL": "250",
        "MEMTROVE_HEAVY_LANE_INTERVAL": "300",
        "MEMTROVE_LANE_LEASE_TTL": str(TTL),
    }


def host(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "memtrove", "consolidate", "--loop"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
    )


def query(env: dict[str, str], sql: str, *args: object) -> list[Any]:
    with sqlite3.connect(env["MEMTROVE_VAULT"], timeout=10) as connection:
        return connection.execute(sql, args).fetchall()


def runs(env: dict[str, str]) -> list[tuple[object, ...]]:
    return query(
        env,
        "SELECT lane, phase, status, reason, pid, started_at, finished_at FROM maintenance_runs "
        "ORDER BY started_at, id",
    )


def mcp_host(env: dict[str, str], seconds: float, stderr: Path) -> list[str]:
    """A stdio MCP session kept open for ``seconds``; the tools it listed."""
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "memtrove", "mcp"], env=env
    )
    names: list[str] = []

    async def main() -> None:
        with stderr.open("w") as errlog:
            async with (
                stdio_client(parameters, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                await anyio.sleep(seconds)
                names.extend(tool.name for tool in (await session.list_tools()).tools)

    anyio.run(main)
    return names


def stop(process: subprocess.Popen[bytes]) -> int:
    process.send_signal(signal.SIGTERM)
    return process.wait(timeout=60)


def assert_never_overlapping(rows: list[tuple[object, ...]], lane: str) -> None:
    work = [r for r in rows if r[0] == lane and r[1] != "gate"]
    assert work, f"the {lane} lane never ran"
    for before, after in itertools.pairwise(work):
        assert before[6] is not None and str(before[6]) <= str(after[5]), (before, after)


@pytest.mark.slow
def test_three_hosts_run_each_lane_once_at_a_time(tmp_path: Path) -> None:
    env = seeded(tmp_path)
    first, second = host(env, tmp_path / "one.log"), host(env, tmp_path / "two.log")
    try:
        hour = time.localtime().tm_hour  # the MCP host's quiet window: an hour that is not now
        mcp_env = {
            **env,
            "MEMTROVE_HEAVY_LANE_WINDOW_START": str((hour + 1) % 24),
            "MEMTROVE_HEAVY_LANE_WINDOW_END": str((hour + 2) % 24),
        }
        tools = mcp_host(mcp_env, 6.0, tmp_path / "mcp.log")
        assert "query" in tools
    finally:
        codes = [stop(first), stop(second)]
    assert codes == [0, 0], (tmp_path / "one.log").read_text() + (tmp_path / "two.log").read_text()
    warning = (tmp_path / "mcp.log").read_text()
    assert "WARNING the heavy lane runs in a per-session stdio host" in warning
    assert "Traceback" not in warning
    rows = runs(env)
    assert_never_overlapping(rows, "light")
    assert_never_overlapping(rows, "heavy")
    assert all(r[6] is not None for r in rows), "every host drained its tick at stop"
    heavy = [r for r in rows if r[0] == "heavy"]
    assert all(r[3] for r in heavy if r[2] == "skipped"), "every skip names its reason"
    reasons = {r[3] for r in heavy if r[1] == "gate"}
    assert "outside_window" in reasons  # the MCP host's window excludes now
    assert {r[1] for r in heavy if r[2] == "completed"} == {"consolidate"}
    assert {(r[1], r[3]) for r in heavy if r[1] == "deductive"} == {("deductive", "no_llm")}
    # The lease made the work happen once: two rows, Alice's and Bob's, never merged.
    patterns = query(env, "SELECT observation, proof_count FROM consolidated_observations")
    assert sorted(p[0].split()[0] for p in patterns) == ["Alice", "Bob"]
    assert [p[1] for p in patterns] == [2, 2]
    assert query(env, "SELECT COUNT(*) FROM worker_leases")[0][0] == 0  # released at stop


@pytest.mark.slow
def test_a_host_killed_mid_tick_is_taken_over_within_the_ttl(
    tmp_path: Path, model_server: ModelServer
) -> None:
    env = seeded(tmp_path)
    env["MEMTROVE_HEAVY_LANE"] = "false"
    model_server.slow_seconds = 25.0
    model_server.set_mode("chat", "slow")  # the A-MEM note hangs: the tick holds the lease
    stuck = host({**env, "MEMTROVE_LLM_URL": model_server.url}, tmp_path / "stuck.log")
    try:
        deadline = time.monotonic() + 60
        while not query(
            env,
            "SELECT 1 FROM worker_leases WHERE worker_name = 'light-consolidation' "
            "AND holder_pid = ?",
            stuck.pid,
        ):
            assert stuck.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        while not model_server.requests_to("chat"):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        stuck.send_signal(signal.SIGKILL)
        stuck.wait(timeout=30)
    finally:
        if stuck.poll() is None:
            stuck.kill()
    taker = host(env, tmp_path / "taker.log")
    try:
        deadline = time.monotonic() + 60
        while not query(
            env,
            "SELECT 1 FROM maintenance_runs WHERE lane = 'light' AND status = 'completed' "
            "AND pid = ?",
            taker.pid,
        ):
            assert taker.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        assert stop(taker) == 0
    rows = runs(env)
    interrupted = [r for r in rows if r[4] == stuck.pid]
    assert [(r[1], r[2], r[6]) for r in interrupted] == [("tick", "started", None)]
    # The dead holder's lease is reclaimed at once (same host, pid gone), never waited out.
    assert not [r for r in rows if r[4] == taker.pid and r[3] == "lease_unavailable"]
    assert sorted(p[0].split()[0] for p in query(
        env, "SELECT observation FROM consolidated_observations")) == ["Alice", "Bob"]  # fmt: skip


def memtrove(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memtrove", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_consolidate_and_reflect_commands(tmp_path: Path) -> None:
    env = seeded(tmp_path)
    preview = memtrove(env, "consolidate", "--dry-run", "--json")
    assert preview.returncode == 0, preview.stderr
    answer = json.loads(preview.stdout)
    assert answer["dry_run"] and answer["phase2"]["created"] == 2
    assert answer["phase3"]["skipped"] == "no_llm"
    done = memtrove(env, "consolidate")
    assert done.returncode == 0 and done.stderr == ""
    assert "enrichment: 3 document(s)" in done.stdout  # the 3 newest of 4
    assert "created 2" in done.stdout  # Alice's and Bob's, Bob's refused into Alice's
    assert "1 merge(s) refused by the name-aware gate" in done.stdout
    assert len(query(env, "SELECT id FROM consolidated_observations")) == 2
    bad_days = memtrove(env, "reflect", "0")
    assert bad_days.returncode == 2 and bad_days.stderr.count("\n") == 1
    bad_env = memtrove({**env, "MEMTROVE_HEAVY_LANE_WINDOW_START": "25"}, "consolidate")
    assert bad_env.returncode == 1
    assert bad_env.stderr == (
        "memtrove: error: MEMTROVE_HEAVY_LANE_WINDOW_START must be an hour from 0 to 23, not '25'\n"
    )


def watch_host(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "memtrove", "watch", "--no-embed"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
    )


def journal_stamp() -> str:
    """Now, in the journal's ``started_at`` format (UTC, microseconds)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def light_holder(env: dict[str, str]) -> int | None:
    found = query(
        env, "SELECT holder_pid FROM worker_leases WHERE worker_name = 'light-consolidation'"
    )
    return int(found[0][0]) if found and found[0][0] is not None else None


def test_two_watch_hosts_and_an_mcp_host_share_the_lanes_and_survive_a_kill(
    tmp_path: Path, model_server: ModelServer
) -> None:
    env = {**seeded(tmp_path), "MEMTROVE_LLM_URL": model_server.url}
    model_server.slow_seconds = 8.0
    model_server.set_mode("chat", "slow")  # a tick's model call hangs a while: mid-tick
    hour = time.localtime().tm_hour  # the MCP host's quiet window: an hour that is not now
    mcp_env = {
        **env,
        "MEMTROVE_HEAVY_LANE_WINDOW_START": str((hour + 1) % 24),
        "MEMTROVE_HEAVY_LANE_WINDOW_END": str((hour + 2) % 24),
    }
    hosts = {
        "watch-1": watch_host(env, tmp_path / "watch-1.log"),
        "watch-2": watch_host(env, tmp_path / "watch-2.log"),
    }
    holder = 0
    try:
        deadline = time.monotonic() + 60
        while not query(  # a watch host holds the light lease and is inside a tick
            env,
            "SELECT 1 FROM maintenance_runs WHERE lane = 'light' AND phase = 'tick' "
            "AND finished_at IS NULL AND pid = ?",
            holder := light_holder(env) or 0,
        ):
            assert all(p.poll() is None for p in hosts.values()), "a watch host died on start"
            assert time.monotonic() < deadline, "no watch host took the light lane"
            time.sleep(0.05)
        hosts["mcp"] = subprocess.Popen(  # a stdio host whose client stays connected
            [sys.executable, "-m", "memtrove", "mcp"],
            env=mcp_env,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=(tmp_path / "mcp.log").open("w"),
        )
        while not query(  # the MCP host is hosting the lanes too
            env, "SELECT 1 FROM maintenance_runs WHERE pid = ?", hosts["mcp"].pid
        ):
            assert hosts["mcp"].poll() is None, "the MCP host died on start"
            assert time.monotonic() < deadline, "the MCP host never hosted a lane"
            time.sleep(0.05)
        assert light_holder(env) == holder, "the tick ended before the kill: slow_seconds"
        pids = {process.pid: name for name, process in hosts.items()}
        victim = hosts.pop(pids[holder])  # the other hosts are stopped in the finally
        killed_at = journal_stamp()  # the victim holds the lease until this moment at least
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=30)  # reaped: its pid is gone, as after a crash
        model_server.set_mode("chat", "ok")
        # Another host takes the lane over within the lease TTL and completes a tick.
        deadline = time.monotonic() + TTL + 30
        while not query(
            env,
            "SELECT 1 FROM maintenance_runs WHERE lane = 'light' AND phase = 'tick' "
            "AND status = 'completed' AND pid != ? AND started_at > ?",
            holder,
            killed_at,
        ):
            assert all(p.poll() is None for p in hosts.values()), "a host died"
            assert time.monotonic() < deadline, "no host took the light lane over"
            time.sleep(0.1)
    finally:
        for process in hosts.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        codes: dict[str, int | str] = {}
        for name, process in hosts.items():
            try:
                codes[name] = process.wait(timeout=50)  # the drain is bounded (15 s + 30 s)
            except subprocess.TimeoutExpired:
                process.kill()
                codes[name] = "hung"
    logs = {name: (tmp_path / f"{name}.log").read_text() for name in pids.values()}
    assert set(codes.values()) == {0}, (codes, logs)
    assert not any("Traceback" in text for text in logs.values()), logs
    rows = runs(env)
    interrupted = [r for r in rows if r[4] == holder and r[6] is None]
    assert ("light", "tick", "started") in [(r[0], r[1], r[2]) for r in interrupted]
    assert all(r[2] == "started" for r in interrupted)  # what the kill cut short, and only it
    for lane in ("light", "heavy"):  # the lease: each lane's work never overlaps
        work = [r for r in rows if r[0] == lane and r[1] != "gate" and r not in interrupted]
        assert work or lane == "heavy", f"the {lane} lane never ran"
        for before, after in itertools.pairwise(work):
            assert before[6] is not None and str(before[6]) <= str(after[5]), (before, after)
        for row in (r for r in interrupted if r[0] == lane):  # the killed tick overlapped none
            assert all(str(r[6]) <= str(row[5]) or str(r[5]) >= killed_at for r in work)
    heavy = [r for r in rows if r[0] == "heavy"]
    assert heavy, "the heavy lane never journaled an attempt"
    assert all(r[3] for r in heavy if r[2] in ("skipped", "failed")), "every attempt has a reason"
    assert all(r[6] is not None for r in heavy if r not in interrupted), "drained at stop"
    assert "outside_window" in {r[3] for r in heavy if r[1] == "gate"}  # the MCP host's window
    assert "WARNING the heavy lane runs in a per-session stdio host" in logs["mcp"]
    assert {r[4] for r in rows} == set(pids), "every host journaled its attempts"
    assert query(env, "SELECT COUNT(*) FROM worker_leases")[0][0] == 0  # released at stop
