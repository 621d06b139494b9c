"""Store hygiene: three signals, silent when the store is healthy.

1. Near-duplicate pairs awaiting a verdict (the same pairs ``find_duplicates`` lists).
2. Entries neither updated nor recalled for :data:`STALE_DAYS` days (archived ones aside).
3. Entries scoped to git branches that no longer exist; skipped outside a git repository,
   where every branch would look gone.

Nothing is ever changed here: the report says what to tend, the agent does it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from memtrove.db.connection import Connection
from memtrove.memory.dedup import DEFAULT_THRESHOLD, find_duplicates
from memtrove.memory.git import list_branches
from memtrove.memory.slugs import store_name
from memtrove.results import HygieneReport
from memtrove.text import to_iso

__all__ = ["STALE_DAYS", "hygiene_report"]

STALE_DAYS = 90


def hygiene_report(
    connection: Connection,
    store: str,
    *,
    model: str,
    worktree: Path | None,
    now: datetime,
    threshold: float = DEFAULT_THRESHOLD,
) -> HygieneReport:
    store = store_name(store)
    duplicates = find_duplicates(connection, store, model, threshold).pairs
    cutoff = to_iso(now - timedelta(days=STALE_DAYS))
    stale = int(
        connection.execute(
            "SELECT COUNT(*) FROM memory_entries WHERE store = ? AND archived = 0 "
            "AND updated_at < ? AND (last_recalled_at IS NULL OR last_recalled_at < ?)",
            (store, cutoff, cutoff),
        ).fetchone()[0]
    )
    scoped = {
        str(branch): int(count)
        for branch, count in connection.execute(
            "SELECT branch, COUNT(*) FROM memory_entries WHERE store = ? AND archived = 0 "
            "AND branch IS NOT NULL GROUP BY branch",
            (store,),
        ).fetchall()
    }
    orphaned: dict[str, int] = {}
    if worktree is None:
        check = "skipped: no working tree"
    else:
        branches = list_branches(worktree)
        if branches is None:
            check = "skipped: not a git repository"
        else:
            check = "checked"
            existing = set(branches)
            orphaned = {b: n for b, n in scoped.items() if b not in existing}
    return HygieneReport(store, duplicates, stale, orphaned, check)
