"""recall_stats rebuilt from recall_events (diversity, spacing, negatives), pin and snooze
candidates in the lifecycle status, and the attention decay scoring applies."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.index.types import CONTENT_TYPES
from memtrove.lifecycle.policy import DURABLE_TYPES
from memtrove.lifecycle.recall import NO_VERDICT, diversity_score, spacing_score
from memtrove.retrieval.scoring import ATTENTION_DECAY_TYPES, confidence_score
from tests.conftest import write

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def recalled(tmp_path: Path, notes: Path) -> Iterator[Vault]:
    for name in ("useful", "noise", "quiet"):
        write(notes, f"{name}.md", f"# {name.title()}\n\nThe {name} note about brokers.\n")
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as vault:
        vault.add_collection(notes, name="notes")
        vault.update()
        ids = {name: vault.get(f"notes/{name}.md").doc_id for name in ("useful", "noise")}
        for day in range(6):  # one session a day, two turns each
            vault._clock = lambda day=day: START + timedelta(days=day * 3)
            session = f"session-{day}"
            for turn in range(2):
                vault.sessions.log_context_usage(
                    session,
                    "context-surfacing",
                    injected=[(ids["useful"], 0.8), (ids["noise"], 0.4)],
                    turn_index=turn,
                    query_text=f"question {day} {turn}",
                )
        # The feedback loop judged every turn but the last of each session, and found
        # "useful" used in each.
        vault._connection.execute(
            "UPDATE recall_events SET checked_at = surfaced_at, was_referenced = (doc_id = ?) "
            "WHERE turn_index = 0",
            (ids["useful"],),
        )
        vault._clock = lambda: START + timedelta(days=20)
        yield vault


def stats(vault: Vault, name: str) -> tuple[object, ...]:
    row = vault._connection.execute(
        "SELECT recall_count, unique_queries, recall_days, diversity_score, spacing_score, "
        "negative_count, first_recalled_at, last_recalled_at FROM recall_stats r "
        "JOIN documents d ON d.id = r.doc_id WHERE d.path = ?",
        (f"{name}.md",),
    ).fetchone()
    return () if row is None else tuple(row)


def test_recompute_matches_the_events(recalled: Vault) -> None:
    running = stats(recalled, "noise")
    assert recalled.lifecycle.recompute_recall_stats() == 2
    # The same counts and scores as the hooks folded in as they went ...
    assert stats(recalled, "noise")[:5] == running[:5]
    count, queries, days, diversity, spacing, negatives, first, last = stats(recalled, "noise")
    assert (count, queries, days) == (12, 12, 6)
    assert diversity == diversity_score(12, 6) == 1.0
    assert spacing == pytest.approx(spacing_score(6, 15.0))
    # ... plus negatives: judged and not used (turn 1 of each session is not judged yet).
    assert negatives == 6
    assert stats(recalled, "useful")[5] == 0
    assert (first, last) == ("2026-03-02T09:00:00Z", "2026-03-17T09:00:00Z")


def test_only_judged_events_are_negatives(recalled: Vault) -> None:
    connection = recalled._connection
    connection.execute("UPDATE session_log SET ended_at = '2026-03-20T00:00:00Z'")
    recalled.lifecycle.recompute_recall_stats()  # an ended session's last turn is still unjudged
    assert stats(recalled, "noise")[5] == 6 and stats(recalled, "useful")[5] == 0
    connection.execute(  # checked without a verdict: the turn had left the window
        "UPDATE recall_events SET checked_at = surfaced_at, was_referenced = ? "
        "WHERE turn_index = 1 AND session_id IN ('session-0', 'session-1')",
        (NO_VERDICT,),
    )
    connection.execute(
        "UPDATE recall_events SET checked_at = surfaced_at WHERE turn_index = 1 "
        "AND session_id = 'session-2'"
    )
    recalled.lifecycle.recompute_recall_stats()
    assert stats(recalled, "noise")[5] == 7 and stats(recalled, "useful")[5] == 1


def test_rows_without_events_go(recalled: Vault) -> None:
    recalled._connection.execute(
        "DELETE FROM recall_events WHERE doc_id = (SELECT id FROM documents WHERE path = ?)",
        ("noise.md",),
    )
    assert recalled.lifecycle.recompute_recall_stats() == 1
    assert stats(recalled, "noise") == ()


def test_status_suggests_pins_and_snoozes(recalled: Vault) -> None:
    recalled.lifecycle.recompute_recall_stats()
    status = recalled.lifecycle.status()
    assert [item.path for item in status.pin_candidates] == ["useful.md"]
    assert [item.path for item in status.snooze_candidates] == ["noise.md"]
    assert status.snooze_candidates[0].negative_count == 6
    assert "pin? #" in status.text() and "snooze? #" in status.text()
    recalled.curation.pin("notes/useful.md")
    recalled.curation.snooze("notes/noise.md", "2026-06-01")
    status = recalled.lifecycle.status()
    assert status.pin_candidates == [] and status.snooze_candidates == []


def test_attention_decay_spares_durable_types() -> None:
    assert DURABLE_TYPES.isdisjoint(ATTENTION_DECAY_TYPES)
    assert DURABLE_TYPES.issubset(CONTENT_TYPES)
    now = datetime(2026, 6, 1, tzinfo=UTC)
    four_weeks = now - timedelta(weeks=4)
    for content_type in ATTENTION_DECAY_TYPES:  # 5 % a week unseen
        decayed = confidence_score(0.8, content_type, four_weeks, None, now)
        assert decayed == pytest.approx(0.8 * 0.95**4)
    long_ago = now - timedelta(weeks=100)
    assert confidence_score(0.8, "note", long_ago, None, now) == pytest.approx(0.4)  # floor
    for content_type in DURABLE_TYPES:
        assert confidence_score(0.8, content_type, long_ago, None, now) == 0.8


def test_negatives_of_one_session_alone_suggest_no_snooze(recalled: Vault) -> None:
    """A note surfaced and unused again and again in one long session says little about
    the note: it is proposed for snoozing only once several sessions left it unused."""
    connection = recalled._connection
    sessions = [
        str(row[0])
        for row in connection.execute(
            "SELECT DISTINCT session_id FROM recall_events e JOIN documents d ON d.id = e.doc_id "
            "WHERE d.path = 'noise.md' AND e.checked_at IS NOT NULL AND e.was_referenced = 0 "
            "ORDER BY session_id"
        )
    ]
    assert len(sessions) >= 3
    connection.execute(  # the same judged events, all in one session
        "UPDATE recall_events SET session_id = ? WHERE session_id IN ({})".format(
            ",".join("?" * len(sessions))
        ),
        (sessions[0], *sessions),
    )
    recalled.lifecycle.recompute_recall_stats()
    assert stats(recalled, "noise")[5] == 6  # as many negatives as before
    assert recalled.lifecycle.status().snooze_candidates == []
