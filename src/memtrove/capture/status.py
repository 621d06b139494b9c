"""The ``doctor`` line on Stop-hook capture: how it runs, and what it has written."""

from __future__ import annotations

from memtrove.capture.handoff import HANDOFFS_FOLDER
from memtrove.capture.store import MEMORY_COLLECTION, OBSERVATIONS_FOLDER
from memtrove.db.connection import Connection
from memtrove.results import Check

__all__ = ["capture_check"]


def capture_check(connection: Connection, has_llm: bool) -> Check:
    """Observations, handoffs and judged recall events so far, and the path capture takes
    (observer LLM, or the heuristic without one)."""
    observations, handoffs = connection.execute(
        "SELECT COALESCE(SUM(CASE WHEN path LIKE ? THEN 1 ELSE 0 END), 0), "
        "COALESCE(SUM(CASE WHEN path LIKE ? THEN 1 ELSE 0 END), 0) FROM documents "
        "WHERE collection = ? AND active = 1",
        (f"{OBSERVATIONS_FOLDER}/%", f"{HANDOFFS_FOLDER}/%", MEMORY_COLLECTION),
    ).fetchone()
    judged, referenced = connection.execute(
        "SELECT COUNT(*), COALESCE(SUM(CASE WHEN was_referenced = 1 THEN 1 ELSE 0 END), 0) "
        "FROM recall_events "
        "WHERE checked_at IS NOT NULL"
    ).fetchone()
    done = (
        f"{observations} observation(s), {handoffs} handoff(s), {judged} recall event(s) "
        f"judged ({referenced} used)"
    )
    if has_llm:
        return Check("capture", "ok", f"Stop hooks ask the observer LLM (fail-open); {done}")
    detail = (
        "Stop hooks run without an LLM: observations by decision, preference and "
        f"error-then-fix wording (fewer, no triples), regex handoffs; {done}"
    )
    return Check("capture", "ok", detail, "set MEMTROVE_LLM_URL for observer observations")
