"""Durable flags about the vault's health (table ``vault_flags``, migration m025).

The one flag today is ``embed_geometry_taint``: the embedder's geometry failed the canary
(:mod:`memtrove.index.canary`), or a run could not verify it, so the stored vectors and the
vectors the embedder makes now may not be comparable. It outlives the process that set it:
``doctor`` fails and ``status`` warns until a run proves the geometry sound again. Its value
is JSON: the reason (one line), whether vectors were written under it, and since when.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from memtrove.db.connection import Connection
from memtrove.text import now_iso

__all__ = ["TAINT_FLAG", "Taint", "clear_flag", "clear_taint", "read_taint", "set_taint"]

TAINT_FLAG = "embed_geometry_taint"


@dataclass(frozen=True)
class Taint:
    """Why the vault's vectors are not trusted, and whether unverified vectors were stored
    (then only a full verified re-embed, ``embed --force``, clears it)."""

    reason: str
    vectors_written: bool
    since: str

    def describe(self) -> str:
        written = (
            "vectors were written under it"
            if self.vectors_written
            else "no vector was written under it"
        )
        return f"since {self.since}: {self.reason} ({written})"


def _flag(connection: Connection, flag: str) -> tuple[str, str] | None:
    row = connection.execute(
        "SELECT value, updated_at FROM vault_flags WHERE flag = ?", (flag,)
    ).fetchone()
    return (str(row[0]), str(row[1])) if row else None


def _set_flag(connection: Connection, flag: str, value: str) -> None:
    connection.execute(
        "INSERT INTO vault_flags (flag, value, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT (flag) DO UPDATE SET value = excluded.value, "
        "updated_at = excluded.updated_at",
        (flag, value, now_iso()),
    )


def clear_flag(connection: Connection, flag: str) -> bool:
    """Remove ``flag`` (inside a write transaction); whether it was set."""
    cursor = connection.execute("DELETE FROM vault_flags WHERE flag = ?", (flag,))
    return bool(cursor.rowcount)


def read_taint(connection: Connection) -> Taint | None:
    """The geometry taint, or None when the vault's vectors are trusted."""
    stored = _flag(connection, TAINT_FLAG)
    if stored is None:
        return None
    value, updated_at = stored
    try:
        data = json.loads(value)
    except ValueError:
        data = None
    if not isinstance(data, dict):  # written by hand or another tool: trust nothing
        return Taint(value, True, updated_at)
    return Taint(
        str(data.get("reason") or "no reason recorded"),
        bool(data.get("vectors_written", True)),
        str(data.get("since") or updated_at),
    )


def set_taint(connection: Connection, reason: str, *, vectors_written: bool) -> Taint:
    """Set (or update) the geometry taint, inside a write transaction. A taint under which
    vectors were written stays so: a later refusal does not make those vectors sound."""
    before = read_taint(connection)
    taint = Taint(
        reason,
        vectors_written or (before is not None and before.vectors_written),
        before.since if before is not None else now_iso(),
    )
    value = {"reason": taint.reason, "vectors_written": taint.vectors_written, "since": taint.since}
    _set_flag(connection, TAINT_FLAG, json.dumps(value))
    return taint


def clear_taint(connection: Connection) -> bool:
    """Remove the geometry taint (inside a write transaction); whether there was one."""
    return clear_flag(connection, TAINT_FLAG)
