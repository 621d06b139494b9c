"""The ``mine_runs`` table: one row per run, which also says which collections are mined
(memtrove owns their documents; no folder backs them)."""

from __future__ import annotations

import json

from memtrove.db.connection import Connection, write_transaction
from memtrove.mine.report import MineReport, MineRun
from memtrove.results import Check

__all__ = [
    "finish_run",
    "forget_mined",
    "last_runs",
    "mined_checks",
    "mined_collections",
    "start_run",
]

_COLUMNS = (
    "id, collection, source, started_at, finished_at, status, files, conversations, "
    "exchanges, written, unchanged"
)


def _has_table(connection: Connection) -> bool:
    return connection.catalog.has_table("mine_runs")


def start_run(connection: Connection, collection: str, source: str, now: str) -> int:
    with write_transaction(connection):
        run_id = connection.insert(
            "INSERT INTO mine_runs (collection, source, started_at) VALUES (?, ?, ?)",
            (collection, source, now),
        )
    return int(run_id or 0)


def finish_run(
    connection: Connection, run_id: int, report: MineReport | None, now: str, status: str
) -> None:
    """Record how run ``run_id`` ended (``report`` None: it failed before one was made)."""
    with write_transaction(connection):
        if report is None:
            connection.execute(
                "UPDATE mine_runs SET finished_at = ?, status = ? WHERE id = ?",
                (now, status, run_id),
            )
            return
        connection.execute(
            "UPDATE mine_runs SET finished_at = ?, status = ?, files = ?, conversations = ?, "
            "exchanges = ?, written = ?, unchanged = ?, report = ? WHERE id = ?",
            (
                now,
                status,
                report.files,
                report.conversations,
                report.exchanges,
                report.written,
                report.unchanged,
                json.dumps(report.to_dict(), ensure_ascii=False),
                run_id,
            ),
        )


def last_runs(connection: Connection, limit: int, collection: str | None = None) -> list[MineRun]:
    """The newest runs first (of ``collection`` only, when given)."""
    if not _has_table(connection):
        return []
    where, arguments = ("WHERE collection = ?", (collection,)) if collection else ("", ())
    rows = connection.execute(
        f"SELECT {_COLUMNS} FROM mine_runs {where} ORDER BY id DESC LIMIT ?",
        (*arguments, limit),
    ).fetchall()
    return [MineRun(*row) for row in rows]


def mined_collections(connection: Connection) -> list[tuple[str, str]]:
    """(name, folder of its latest run) of every collection a run has written to."""
    if not _has_table(connection):
        return []
    rows = connection.execute(
        "SELECT collection, source FROM mine_runs WHERE id IN "
        "(SELECT MAX(id) FROM mine_runs GROUP BY collection) ORDER BY collection"
    ).fetchall()
    return [(str(name), str(source)) for name, source in rows]


def forget_mined(connection: Connection, collection: str) -> int:
    """Take a mined collection's documents out of search and forget its runs, in one
    transaction (their text stays; mining again brings them back); how many documents."""
    from memtrove.index.indexer import deactivate_documents

    with write_transaction(connection):
        ids = [
            int(row[0])
            for row in connection.execute(
                "SELECT id FROM documents WHERE collection = ? AND active = 1", (collection,)
            )
        ]
        deactivate_documents(connection, ids)
        connection.execute("DELETE FROM mine_runs WHERE collection = ?", (collection,))
    return len(ids)


def mined_checks(connection: Connection) -> list[Check]:
    """``doctor``: each mined collection, its documents and its last run."""
    if not _has_table(connection):
        return []
    from memtrove.index.documents import collection_counts

    counts = collection_counts(connection)
    checks: list[Check] = []
    for name, _source in mined_collections(connection):
        runs = last_runs(connection, 1, name)
        if not runs:
            continue
        run = runs[0]
        detail = (
            f"{counts.get(name, 0)} documents; last run #{run.id} {run.status} "
            f"{run.finished_at or run.started_at}: {run.exchanges} exchanges from {run.source}"
        )
        if run.status == "done":
            checks.append(Check(f"mined {name}", "ok", detail))
        else:
            fix = f"`memtrove mine {run.source} -c {name}` again (reruns are idempotent)"
            checks.append(Check(f"mined {name}", "warn", detail, fix))
    return checks
