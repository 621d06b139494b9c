"""The ``import_runs`` table: one row per ``import`` of an export file or a ClawMem vault,
written when the run starts and completed when it ends, however it ends (a failed run keeps
its error's first line)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import UTC, datetime
from typing import Any, NamedTuple

from memtrove.db.connection import Connection, write_transaction
from memtrove.results import Check
from memtrove.text import to_iso

__all__ = ["ImportRun", "ImportRunRecord", "import_checks", "last_import_runs", "recorded_import"]

_COLUMNS = "id, kind, source, started_at, finished_at, status, dry_run, records, added, error"


class ImportRun(NamedTuple):
    """One recorded import (``import_status``, ``doctor``)."""

    id: int
    kind: str
    source: str
    started_at: str
    finished_at: str | None
    status: str
    dry_run: bool
    records: int
    added: int
    error: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "source": self.source,
            "startedAt": self.started_at,
            "finishedAt": self.finished_at,
            "status": self.status,
            "dryRun": self.dry_run,
            "records": self.records,
            "added": self.added,
            "error": self.error,
        }

    def line(self) -> str:
        verb = "would import" if self.dry_run else "imported"
        outcome = f"{verb} {self.added} of {self.records} records"
        if self.status != "done":
            outcome = self.status + (f": {self.error}" if self.error else "")
        return f"#{self.id} {self.kind} {self.source} {self.started_at}: {outcome}"


class ImportRunRecord:
    """What a run in progress reports when it is done (see :func:`recorded_import`)."""

    def __init__(self) -> None:
        self.records = 0
        self.added = 0
        self.report: Mapping[str, Any] | None = None

    def done(self, records: int, added: int, report: Mapping[str, Any]) -> None:
        self.records, self.added, self.report = records, added, report


@contextmanager
def recorded_import(
    connection: Connection,
    kind: str,
    source: str,
    *,
    dry_run: bool,
    guard: AbstractContextManager[Any] | None = None,
) -> Iterator[ImportRunRecord]:
    """Record the run around the ``with`` block: ``running`` first, then ``done`` with the
    counts the block gave :meth:`ImportRunRecord.done`, or ``failed`` with its error.
    ``guard`` (the vault's lock) is held while the row is written, not over the block."""
    record = ImportRunRecord()
    lock = guard if guard is not None else nullcontext()
    with lock, write_transaction(connection):
        inserted = connection.insert(
            "INSERT INTO import_runs (kind, source, started_at, dry_run) VALUES (?, ?, ?, ?)",
            (kind, source, to_iso(datetime.now(UTC)), int(dry_run)),
        )
    run_id = int(inserted or 0)
    try:
        yield record
    except BaseException as error:
        reason = " ".join(str(error).split())[:300] or type(error).__name__
        with lock:
            _finish(connection, run_id, "failed", record, reason)
        raise
    with lock:
        _finish(connection, run_id, "done", record, None)


def _finish(
    connection: Connection, run_id: int, status: str, record: ImportRunRecord, error: str | None
) -> None:
    report = json.dumps(record.report, ensure_ascii=False) if record.report else None
    with write_transaction(connection):
        connection.execute(
            "UPDATE import_runs SET finished_at = ?, status = ?, records = ?, added = ?,"
            " error = ?, report = ? WHERE id = ?",
            (
                to_iso(datetime.now(UTC)),
                status,
                record.records,
                record.added,
                error,
                report,
                run_id,
            ),
        )


def last_import_runs(connection: Connection, limit: int) -> list[ImportRun]:
    """The newest import runs first."""
    rows = connection.execute(
        f"SELECT {_COLUMNS} FROM import_runs ORDER BY id DESC LIMIT ?", (limit,)
    ).fetchall()
    return [
        ImportRun(
            _count(row[0]),
            str(row[1]),
            str(row[2]),
            str(row[3]),
            None if row[4] is None else str(row[4]),
            str(row[5]),
            bool(_count(row[6])),
            _count(row[7]),
            _count(row[8]),
            None if row[9] is None else str(row[9]),
        )
        for row in rows
    ]


def _count(value: object) -> int:
    """A stored count as an int (0 for what a damaged or edited file holds instead)."""
    if isinstance(value, int):
        return value
    try:
        return int(str(value))
    except ValueError:
        return 0


def import_checks(connection: Connection) -> list[Check]:
    """``doctor``: the last import run, when there was one (a warning unless it was done)."""
    runs = last_import_runs(connection, 1)
    if not runs:
        return []
    run = runs[0]
    if run.status == "done":
        return [Check("last import", "ok", run.line())]
    command = "memtrove import clawmem" if run.kind == "clawmem" else "memtrove import"
    fix = f"see its error, then `{command} {run.source}` again (what already arrived is kept)"
    return [Check("last import", "warn", run.line(), fix)]
