"""Token-fenced job leases: one holder at a time, expiry takeover, fenced renew and release."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrove.db.connection import Connection, open_connection, write_transaction
from memtrove.db.migrations import migrate
from memtrove.errors import LeaseHeldError
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
