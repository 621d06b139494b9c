"""Worker leases on a server vault read the database's clock: a host whose own clock runs
two hours ahead still sees another host's lease as held, and its renewals are stamped by
the server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest

from memtrove.db.migrations import migrate
from memtrove.db.postgres.connection import open_postgres
from memtrove.errors import LeaseHeldError
from memtrove.lifecycle import leases
from memtrove.lifecycle.leases import Holder, Lease


class _AheadClock(datetime):
    @classmethod
    def now(cls, tz: Any = None) -> Any:
        return datetime.now(tz) + timedelta(hours=2)


def test_leases_follow_the_database_clock(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    first = open_postgres(url)
    migrate(cast(Any, first), label="vault")
    second = open_postgres(url)
    try:
        held = Lease.acquire(first, "embedding", ttl=60)
        # Another host, alive (its pid cannot be checked from here), with a fast clock.
        first.execute(
            "UPDATE worker_leases SET holder_host = 'elsewhere', holder_pid = 1 "
            "WHERE worker_name = 'embedding'"
        )
        monkeypatch.setattr(leases, "datetime", _AheadClock)
        assert not Holder("elsewhere", None, 1, None).provably_dead()
        with pytest.raises(LeaseHeldError, match="embedding"):
            Lease.acquire(second, "embedding", ttl=60)
        server_now = second.clock()
        assert abs(server_now - datetime.now(UTC)) < timedelta(minutes=5)
        held.renew()
        expires = first.execute(
            "SELECT expires_at FROM worker_leases WHERE worker_name = 'embedding'"
        ).fetchone()[0]
        stamped = datetime.strptime(str(expires), "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
        assert timedelta(0) < stamped - server_now <= timedelta(seconds=61)
        held.release()
        Lease.acquire(second, "embedding", ttl=60).release()
    finally:
        first.close()
        second.close()
