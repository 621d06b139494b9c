"""Token-fenced worker leases, so two processes never run the same long job at once.

A lease row names the job (``embedding``), the holder's random token and an expiry. Taking a
lease succeeds when no row exists or the existing one has expired; the holder renews it as it
makes progress and releases it at the end. A holder that dies simply lets it expire (TTL 60 s),
so a crashed run never blocks the next one for long.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta

from memtrove.db.connection import Connection, write_transaction
from memtrove.errors import LeaseHeldError

__all__ = ["LEASE_TTL_SECONDS", "Lease"]

LEASE_TTL_SECONDS = 60.0


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Lease:
    """A held lease; use as a context manager or call :meth:`release`."""

    def __init__(self, connection: Connection, name: str, token: str, ttl: float) -> None:
        self._connection = connection
        self.name = name
        self.token = token
        self._ttl = ttl

    @classmethod
    def acquire(cls, connection: Connection, name: str, ttl: float = LEASE_TTL_SECONDS) -> Lease:
        """Take the lease or raise :class:`LeaseHeldError` naming when it expires."""
        token = secrets.token_hex(16)
        now = datetime.now(UTC)
        with write_transaction(connection):
            row = connection.execute(
                "SELECT expires_at FROM worker_leases WHERE worker_name = ?", (name,)
            ).fetchone()
            if row is not None and str(row[0]) > _iso(now):
                raise LeaseHeldError(
                    f"another process is running the {name} job (its lease expires at "
                    f"{row[0]}); wait for it to finish"
                )
            connection.execute(
                "INSERT INTO worker_leases (worker_name, lease_token, acquired_at, expires_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (worker_name) DO UPDATE SET "
                "lease_token = excluded.lease_token, acquired_at = excluded.acquired_at, "
                "expires_at = excluded.expires_at",
                (name, token, _iso(now), _iso(now + timedelta(seconds=ttl))),
            )
        return cls(connection, name, token, ttl)

    def renew(self) -> None:
        """Push the expiry forward; raise if another process took the lease meanwhile.

        Call it inside the caller's write transaction (or alone: it is one statement).
        """
        expires = _iso(datetime.now(UTC) + timedelta(seconds=self._ttl))
        cursor = self._connection.execute(
            "UPDATE worker_leases SET expires_at = ? WHERE worker_name = ? AND lease_token = ?",
            (expires, self.name, self.token),
        )
        if cursor.rowcount != 1:
            raise LeaseHeldError(f"the {self.name} lease was taken over by another process")

    def release(self) -> None:
        with write_transaction(self._connection):
            self._connection.execute(
                "DELETE FROM worker_leases WHERE worker_name = ? AND lease_token = ?",
                (self.name, self.token),
            )

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
