"""Token-fenced job leases: one holder at a time, expiry takeover, fenced renew and release,
and a lease whose holder is provably dead (killed, or its pid recycled) reclaimed at once."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtrove.db.connection import Connection, open_connection, write_transaction
from memtrove.db.migrations import migrate
from memtrove.errors import LeaseHeldError
from memtrove.lifecycle import leases
from memtrove.lifecycle.leases import LEASE_TTL_SECONDS, Lease


@pytest.fixture
def vault_file(tmp_path: Path) -> Path:
    path = tmp_path / "vault.sqlite"
    connection = open_connection(path)
    migrate(connection, label="test")
    connection.close()
    return path


@pytest.fixture
def first(vault_file: Path) -> Iterator[Connection]:
    """One process's connection to the vault."""
    connection = open_connection(vault_file)
    yield connection
    connection.close()


@pytest.fixture
def second(vault_file: Path) -> Iterator[Connection]:
    """Another process's connection to the same vault."""
    connection = open_connection(vault_file)
    yield connection
    connection.close()


def _row(connection: Connection, name: str = "embedding") -> tuple[str, str] | None:
    row = connection.execute(
        "SELECT lease_token, expires_at FROM worker_leases WHERE worker_name = ?", (name,)
    ).fetchone()
    return None if row is None else (str(row[0]), str(row[1]))


def _holder(connection: Connection, name: str = "embedding") -> str | None:
    row = _row(connection, name)
    return None if row is None else row[0]


def _expire(connection: Connection, name: str = "embedding") -> None:
    with write_transaction(connection):
        connection.execute(
            "UPDATE worker_leases SET expires_at = '2000-01-01T00:00:00.000000Z' "
            "WHERE worker_name = ?",
            (name,),
        )


def test_a_held_lease_refuses_a_second_holder(first: Connection, second: Connection) -> None:
    lease = Lease.acquire(first, "embedding")
    row = _row(second)
    assert row is not None and row[0] == lease.token and len(lease.token) == 32
    with pytest.raises(LeaseHeldError) as caught:
        Lease.acquire(second, "embedding")
    message = str(caught.value)
    assert "embedding" in message and row[1] in message and "\n" not in message
    assert caught.value.status == 409
    assert _row(second) == row  # the refused attempt changed nothing


def test_release_frees_the_lease_and_other_names_are_independent(
    first: Connection, second: Connection
) -> None:
    lease = Lease.acquire(first, "embedding")
    other = Lease.acquire(second, "consolidation")
    lease.release()
    assert _row(second) is None
    again = Lease.acquire(second, "embedding")
    assert again.token != lease.token
    again.release()
    other.release()
    assert first.execute("SELECT COUNT(*) FROM worker_leases").fetchone()[0] == 0


def test_context_manager_releases_even_on_error(first: Connection, second: Connection) -> None:
    with pytest.raises(RuntimeError), Lease.acquire(first, "embedding"):
        assert _row(second) is not None
        raise RuntimeError("the job crashed")
    assert _row(second) is None
    Lease.acquire(second, "embedding").release()


def test_an_expired_lease_is_taken_over_and_the_old_holder_is_fenced(
    first: Connection, second: Connection
) -> None:
    stale = Lease.acquire(first, "embedding")
    _expire(first)  # the first process died: its lease ran out
    fresh = Lease.acquire(second, "embedding")
    assert _holder(first) == fresh.token
    # The old holder wakes up: it can neither renew nor tear down the new holder's lease.
    with pytest.raises(LeaseHeldError, match="taken over"):
        stale.renew()
    stale.release()
    assert _holder(first) == fresh.token
    fresh.release()
    assert _row(first) is None


def test_a_negative_ttl_gives_an_already_expired_lease(
    first: Connection, second: Connection
) -> None:
    Lease.acquire(first, "embedding", ttl=-1)
    Lease.acquire(second, "embedding").release()


def test_renew_pushes_the_expiry_forward(first: Connection, second: Connection) -> None:
    lease = Lease.acquire(first, "embedding", ttl=-1)  # as good as expired
    before = _row(first)
    # The holder renews (with the usual TTL) before anyone takes the lease over.
    Lease(first, "embedding", lease.token, LEASE_TTL_SECONDS).renew()
    after = _row(first)
    assert before is not None and after is not None
    assert after[0] == before[0] and after[1] > before[1]
    with pytest.raises(LeaseHeldError):
        Lease.acquire(second, "embedding")
    lease.release()
    assert _row(first) is None


# -- holders: a lease of a dead process is reclaimed at once -----------------------------------

HOLDER = """
import sys, time
from pathlib import Path
from memtrove.db.connection import open_connection
from memtrove.lifecycle.leases import Lease
Lease.acquire(open_connection(Path(sys.argv[1])), "embedding")
print("held", flush=True)
time.sleep(600)
"""
LINUX_PROC = Path("/proc/self/stat").exists()
FUTURE = "2999-01-01T00:00:00.000000Z"


@pytest.fixture
def holder_process(vault_file: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process that took the embedding lease through the library and now sleeps."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(vault_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line == "held\n", process.stderr.read() if process.stderr else ""
        yield process
    finally:
        process.kill()
        process.wait()


def _holder_columns(connection: Connection) -> tuple[object, ...]:
    row = connection.execute(
        "SELECT holder_host, holder_pid_namespace, holder_pid, holder_started "
        "FROM worker_leases WHERE worker_name = 'embedding'"
    ).fetchone()
    return tuple(row)


def _plant(
    connection: Connection,
    *,
    host: object,
    namespace: object,
    pid: object,
    started: object,
    expires: str = FUTURE,
) -> None:
    """A lease row as another process would have left it."""
    with write_transaction(connection):
        connection.execute(
            "INSERT INTO worker_leases (worker_name, lease_token, acquired_at, expires_at, "
            "holder_host, holder_pid_namespace, holder_pid, holder_started) "
            "VALUES ('embedding', 'planted', '2026-01-01T00:00:00.000000Z', ?, ?, ?, ?, ?)",
            (expires, host, namespace, pid, started),
        )


def _dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _start_ticks(pid: int) -> int:
    text = Path(f"/proc/{pid}/stat").read_text()
    return int(text[text.rindex(")") + 1 :].split()[19])


def test_a_lease_records_its_holder(first: Connection) -> None:
    lease = Lease.acquire(first, "embedding")
    host, namespace, pid, started = _holder_columns(first)
    assert (host, pid) == (socket.gethostname(), os.getpid())
    if LINUX_PROC:
        assert started == _start_ticks(os.getpid())
        assert namespace == os.readlink("/proc/self/ns/pid")
    lease.release()


def test_a_lease_held_by_a_live_process_is_refused(
    holder_process: subprocess.Popen[str], first: Connection
) -> None:
    assert _holder_columns(first)[2] == holder_process.pid
    with pytest.raises(LeaseHeldError) as caught:
        Lease.acquire(first, "embedding")
    message = str(caught.value)
    assert f"pid {holder_process.pid} on {socket.gethostname()}" in message
    assert "\n" not in message


def test_a_lease_of_a_killed_holder_is_reclaimed_at_once(
    holder_process: subprocess.Popen[str], first: Connection
) -> None:
    holder_process.send_signal(signal.SIGKILL)
    holder_process.wait()
    row = _row(first)
    assert row is not None and row[1] > datetime.now(UTC).isoformat()  # far from expiry
    started = time.monotonic()
    lease = Lease.acquire(first, "embedding")
    assert time.monotonic() - started < 5
    assert _holder(first) == lease.token and _holder_columns(first)[2] == os.getpid()
    lease.release()


@pytest.mark.skipif(not LINUX_PROC, reason="zombies are told apart through /proc")
def test_a_killed_holder_not_yet_reaped_is_dead(
    holder_process: subprocess.Popen[str], first: Connection
) -> None:
    """Killed but not waited for, the holder is a zombie: its pid exists, it holds nothing."""
    holder_process.send_signal(signal.SIGKILL)
    deadline = time.monotonic() + 10
    stat = Path(f"/proc/{holder_process.pid}/stat")
    while stat.read_text().rsplit(")", 1)[1].split()[0] != "Z":
        assert time.monotonic() < deadline
        time.sleep(0.01)
    Lease.acquire(first, "embedding").release()


@pytest.mark.skipif(not LINUX_PROC, reason="start times come from /proc")
def test_a_recycled_pid_is_not_taken_for_the_holder(
    holder_process: subprocess.Popen[str], first: Connection
) -> None:
    """The recorded pid runs, but it started at another time: another process, reclaimed."""
    host, namespace, pid, started = _holder_columns(first)
    assert pid == holder_process.pid and started == _start_ticks(holder_process.pid)
    with write_transaction(first):
        first.execute("DELETE FROM worker_leases")
    _plant(first, host=host, namespace=namespace, pid=pid, started=int(str(started)) - 1)
    lease = Lease.acquire(first, "embedding")
    assert _holder(first) == lease.token
    lease.release()


@pytest.mark.parametrize(
    "place",
    ["another host", "another pid namespace", "no holder recorded", "malformed holder"],
)
def test_a_holder_that_cannot_be_checked_waits_for_the_ttl(first: Connection, place: str) -> None:
    dead = _dead_pid()
    namespace = os.readlink("/proc/self/ns/pid") if LINUX_PROC else None
    holder: dict[str, object] = {
        "another host": {"host": "elsewhere.example", "namespace": namespace, "pid": dead},
        "another pid namespace": {
            "host": socket.gethostname(),
            "namespace": "pid:[1]",
            "pid": dead,
        },
        "no holder recorded": {"host": None, "namespace": None, "pid": None},
        "malformed holder": {"host": socket.gethostname(), "namespace": namespace, "pid": "x"},
    }[place]
    _plant(first, started=None, **holder)
    with pytest.raises(LeaseHeldError):
        Lease.acquire(first, "embedding")
    _expire(first)
    Lease.acquire(first, "embedding").release()


def test_without_proc_the_pid_alone_decides(
    holder_process: subprocess.Popen[str],
    first: Connection,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where there is no /proc (macOS), a live pid holds the lease and a gone one does not."""
    monkeypatch.setattr(leases, "_PROC", Path("/nonexistent-proc"))
    with write_transaction(first):
        first.execute("DELETE FROM worker_leases")
    here = socket.gethostname()
    _plant(first, host=here, namespace=None, pid=holder_process.pid, started=None)
    with pytest.raises(LeaseHeldError):
        Lease.acquire(first, "embedding")
    with write_transaction(first):
        first.execute("UPDATE worker_leases SET holder_pid = ?", (_dead_pid(),))
    Lease.acquire(first, "embedding").release()
