"""`memtrove embed` killed with SIGKILL mid-run: the next run takes over at once."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from tests.conftest import EXAMPLES
from tests.fakes.model_server import ModelServer


def memtrove(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memtrove", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def lease_holder(vault: Path) -> int | None:
    with sqlite3.connect(vault) as connection:
        row = connection.execute(
            "SELECT holder_pid FROM worker_leases WHERE worker_name = 'embedding'"
        ).fetchone()
    return None if row is None else int(row[0])


def test_an_embed_killed_while_holding_the_lease_does_not_block_the_next(
    tmp_path: Path, model_server: ModelServer
) -> None:
    vault = tmp_path / "vault.sqlite"
    env = {
        **os.environ,
        "MEMTROVE_VAULT": str(vault),
        "MEMTROVE_CONFIG_DIR": str(tmp_path / "config"),
        "MEMTROVE_EMBED_URL": model_server.url,
        "MEMTROVE_EMBED_DIMENSIONS": "64",  # no probe before the lease is taken
    }
    added = memtrove("collection", "add", str(EXAMPLES), "--name", "demo", env=env)
    assert added.returncode == 0, added.stderr
    assert memtrove("update", env=env).returncode == 0
    model_server.slow_seconds = 25.0
    model_server.set_mode("embeddings", "slow")  # every batch hangs: the run holds the lease
    first = subprocess.Popen(
        [sys.executable, "-m", "memtrove", "embed"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while lease_holder(vault) != first.pid:
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        refused = memtrove("embed", env=env)  # the holder runs: refused, one line
        assert refused.returncode == 1
        assert f"pid {first.pid}" in refused.stderr and len(refused.stderr.splitlines()) == 1
        first.send_signal(signal.SIGKILL)
        first.wait()
    finally:
        first.kill()
        first.wait()
    model_server.reset()
    # The dead holder's lease is still unexpired: a live holder's would refuse the next run
    # at once (as above), so the next run succeeding shows it took the lease over.
    with sqlite3.connect(vault) as connection:
        expires = connection.execute(
            "SELECT expires_at FROM worker_leases WHERE worker_name = 'embedding'"
        ).fetchone()[0]
    assert datetime.fromisoformat(expires.replace("Z", "+00:00")) > datetime.now(UTC)
    second = memtrove("embed", env=env)
    assert second.returncode == 0, second.stderr
    assert "embedded" in second.stdout
    assert lease_holder(vault) is None
