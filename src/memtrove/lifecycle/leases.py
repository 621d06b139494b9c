"""Token-fenced worker leases, so two processes never run the same long job at once.

A lease row names the job (``embedding``), the holder's random token, an expiry and the
holder itself (host, pid namespace, pid, process start time). Taking a lease succeeds when no
row exists, the existing one has expired, or its holder is provably dead: it ran on this same
host and pid namespace and its pid is gone, is a zombie, or now belongs to a process that
started at another time (a recycled pid). A holder on another host cannot be checked, so its
lease waits out the TTL (60 s). The holder renews the lease as it makes progress and releases
it at the end; every renew and release is fenced by the token, so a holder whose lease was
taken over can neither extend nor delete the new holder's row. Times come from the
database's clock (:meth:`Connection.clock <memtrove.db.engine.Connection.clock>`), so hosts
sharing a server vault agree on expiries whatever their own clocks say.

The start time is read from ``/proc/<pid>/stat`` (field 22, clock ticks since boot) where
it exists; elsewhere liveness rests on the pid alone, which errs on the side of waiting.
"""

from __future__ import annotations

import os
import secrets
import socket
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memtrove.db.connection import Connection, write_transaction
from memtrove.errors import LeaseHeldError

__all__ = ["LEASE_TTL_SECONDS", "Holder", "Lease"]

LEASE_TTL_SECONDS = 60.0
_PROC = Path("/proc")


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class Holder:
    """Who holds a lease: enough to tell, on the same host, whether it still runs."""

    host: str | None
    pid_namespace: str | None
    pid: int | None
    started: int | None

    @classmethod
    def current(cls) -> Holder:
        """This process."""
        pid = os.getpid()
        return cls(socket.gethostname(), _pid_namespace(), pid, _start_ticks(pid))

    def describe(self) -> str:
        """``pid 1234 on host-a`` for messages (empty when the row names no holder)."""
        if self.pid is None:
            return ""
        return f"pid {self.pid} on {self.host or 'an unknown host'}"

    def provably_dead(self) -> bool:
        """True only when this holder ran here and is certainly gone; otherwise False."""
        here = Holder.current()
        if self.pid is None or self.pid <= 0 or self.host is None:
            return False
        if (self.host, self.pid_namespace) != (here.host, here.pid_namespace):
            return False  # another machine or container: its pids mean nothing here
        if self.pid == here.pid:
            return False  # this very process (another connection of it)
        if here.started is not None:  # /proc works here: compare start times
            try:
                state = _proc_state(self.pid)
            except (OSError, ValueError, IndexError):
                return False  # unreadable (hidden by hidepid, say): cannot prove anything
            if state is not None:
                status, started = state
                recycled = self.started is not None and started != self.started
                return status in ("Z", "X") or recycled
        # Absent from /proc, or no /proc at all: the kernel has the last word (a process of
        # another user hidden from /proc still answers EPERM).
        return not _pid_exists(self.pid)


def _pid_namespace() -> str | None:
    """Linux pid namespace (``pid:[4026531836]``), so container pids are not mixed up."""
    try:
        return os.readlink(_PROC / "self" / "ns" / "pid")
    except OSError:
        return None


def _proc_state(pid: int) -> tuple[str, int] | None:
    """(state letter, start ticks) from ``/proc/<pid>/stat``, or None if no such process.

    The command name (field 2) is in parentheses and may itself hold spaces or ``)``, so
    fields are counted from the last ``)``: state is field 3, start time field 22.
    """
    try:
        text = (_PROC / str(pid) / "stat").read_text(encoding="ascii", errors="replace")
    except (FileNotFoundError, ProcessLookupError, NotADirectoryError):
        return None
    fields = text[text.rindex(")") + 1 :].split()
    return fields[0], int(fields[19])


def _start_ticks(pid: int) -> int | None:
    try:
        state = _proc_state(pid)
    except (OSError, ValueError, IndexError):
        return None
    return None if state is None else state[1]


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, owned by someone else
    except OSError:
        return True  # cannot tell: assume alive, the TTL still frees it
    return True


def _holder_of(row: tuple[object, ...]) -> Holder:
    host, namespace, pid, started = row

    def number(value: object) -> int | None:
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return Holder(
        host if isinstance(host, str) else None,
        namespace if isinstance(namespace, str) else None,
        number(pid),
        number(started),
    )


class Lease:
    """A held lease; use as a context manager or call :meth:`release`."""

    def __init__(self, connection: Connection, name: str, token: str, ttl: float) -> None:
        self._connection = connection
        self.name = name
        self.token = token
        self._ttl = ttl

    @classmethod
    def acquire(cls, connection: Connection, name: str, ttl: float = LEASE_TTL_SECONDS) -> Lease:
        """Take the lease or raise :class:`LeaseHeldError` naming its holder and expiry."""
        token = secrets.token_hex(16)
        holder = Holder.current()
        with write_transaction(connection):
            now = connection.clock()
            row = connection.execute(
                "SELECT expires_at, holder_host, holder_pid_namespace, holder_pid, "
                "holder_started FROM worker_leases WHERE worker_name = ?",
                (name,),
            ).fetchone()
            if row is not None and str(row[0]) > _iso(now):
                current = _holder_of(tuple(row[1:]))
                if not current.provably_dead():
                    who = current.describe()
                    raise LeaseHeldError(
                        f"another process{f' ({who})' if who else ''} is running the {name} "
                        f"job (its lease expires at {row[0]}); wait for it to finish"
                    )
            connection.execute(
                "INSERT INTO worker_leases (worker_name, lease_token, acquired_at, expires_at, "
                "holder_host, holder_pid_namespace, holder_pid, holder_started) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (worker_name) DO UPDATE SET "
                "lease_token = excluded.lease_token, acquired_at = excluded.acquired_at, "
                "expires_at = excluded.expires_at, holder_host = excluded.holder_host, "
                "holder_pid_namespace = excluded.holder_pid_namespace, "
                "holder_pid = excluded.holder_pid, holder_started = excluded.holder_started",
                (
                    name,
                    token,
                    _iso(now),
                    _iso(now + timedelta(seconds=ttl)),
                    holder.host,
                    holder.pid_namespace,
                    holder.pid,
                    holder.started,
                ),
            )
        return cls(connection, name, token, ttl)

    def renew(self) -> None:
        """Push the expiry forward; raise if another process took the lease meanwhile.

        Call it inside the caller's write transaction (or alone: it is one statement).
        """
        expires = _iso(self._connection.clock() + timedelta(seconds=self._ttl))
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
