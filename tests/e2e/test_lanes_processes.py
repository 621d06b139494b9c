"""The consolidation lanes hosted by real processes on one vault: two `memtrove consolidate
--loop` hosts and a `memtrove mcp` host with both lanes on never run a lane twice at once,
the heavy lane journals every attempt with its reason, the merge gates keep Alice and Bob
apart, and a host killed with SIGKILL mid-tick is taken over within the lease TTL."""

from __future__ import annotations

import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
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
