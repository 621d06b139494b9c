"""Staleness: per-collection thresholds, agent-written by default, checkout mtimes are no date."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.db.connection import write_transaction
from memtrove.index.internal import MEMORY_COLLECTION, write_internal
from memtrove.index.staleness import CHECKOUT_MIN_DOCUMENTS
from tests.conftest import write

NOW = datetime(2030, 6, 1, tzinfo=UTC)


def at(path: Path, days_ago: float, minutes: float = 0) -> Path:
    """Give ``path`` an mtime ``days_ago`` days (plus ``minutes``) before NOW."""
    moment = NOW - timedelta(days=days_ago) + timedelta(minutes=minutes)
    ns = int(moment.timestamp()) * 1_000_000_000
    os.utime(path, ns=(ns, ns))
    return path


def typed(kind: str, title: str, date: str | None = None) -> str:
    dated = f"date: {date}\n" if date else ""
    return f"---\ntype: {kind}\n{dated}---\n# {title}\n\nSome words about {title}.\n"


@pytest.fixture
def clocked(vault: Vault) -> Vault:
    vault._clock = lambda: NOW
    return vault


def stale(vault: Vault) -> list[str]:
    listed = [f"{d.collection}/{d.path}" for d in vault.stale_documents(50)]
    assert vault.documents.index_stats().stale_documents == len(listed)
    return listed


def test_by_default_only_agent_written_documents_go_stale(clocked: Vault, notes: Path) -> None:
    at(write(notes, "handoff.md", typed("handoff", "Handoff")), 200)
    at(write(notes, "progress.md", typed("progress", "Progress")), 150)
    at(write(notes, "reference.md", typed("note", "Reference")), 300)
    at(write(notes, "decision.md", typed("decision", "Decision")), 300)
    at(write(notes, "fresh-handoff.md", typed("handoff", "Fresh")), 10)
    clocked.add_collection(notes, name="notes")
    clocked.update()
    assert clocked.collections()[0].stale_after_days == "auto"
    assert stale(clocked) == ["notes/handoff.md", "notes/progress.md"]  # oldest first


def test_stale_after_days_per_collection_including_none(clocked: Vault, tmp_path: Path) -> None:
    logs, manual = tmp_path / "logs", tmp_path / "manual"
    at(write(logs, "a.md", "# A\n\nnotes"), 40)
    at(write(logs, "b.md", "# B\n\nnotes"), 20)
    at(write(manual, "handoff.md", typed("handoff", "Old handoff")), 400)
    clocked.add_collection(logs, name="logs", stale_after_days=30)
    clocked.add_collection(manual, name="manual", stale_after_days=None)
    clocked.update()
    assert stale(clocked) == ["logs/a.md"]
    clocked._clock = lambda: NOW + timedelta(days=15)
    assert stale(clocked) == ["logs/a.md", "logs/b.md"]


def test_collections_not_in_the_config_get_the_default_rule(clocked: Vault, notes: Path) -> None:
    at(write(notes, "h.md", typed("handoff", "H")), 100)
    at(write(notes, "n.md", typed("note", "N")), 100)
    clocked.add_collection(notes, name="gone", stale_after_days=1)
    clocked.update()
    assert stale(clocked) == ["gone/h.md", "gone/n.md"]
    clocked.config_file.write_text("collections: {}\n")  # documents stay until removed
    assert stale(clocked) == ["gone/h.md"]


def test_internal_collections_are_checked_whole(clocked: Vault) -> None:
    with write_transaction(clocked._connection):
        write_internal(
            clocked._connection, MEMORY_COLLECTION, "decisions/old.md", "# Old\n\nA decision.",
            "decision", "2026-01-01T00:00:00Z",
        )  # fmt: skip
    clocked._clock = lambda: datetime.now(UTC) + timedelta(days=91)
    assert stale(clocked) == [f"{MEMORY_COLLECTION}/decisions/old.md"]
    clocked._clock = lambda: datetime.now(UTC) + timedelta(days=89)
    assert stale(clocked) == []


def test_a_checked_out_folder_has_unknown_dates(clocked: Vault, notes: Path) -> None:
    """Files that all arrived at once (a clone): their mtimes date nothing; a frontmatter
    date still does."""
    paths = [write(notes, f"doc-{i}.md", f"# Doc {i}\n\nwords") for i in range(6)]
    for index, path in enumerate(paths):
        at(path, 200, minutes=index)  # a checkout spread over a few minutes
    at(write(notes, "dated.md", typed("note", "Dated", "2029-01-01")), 1)
    clocked.add_collection(notes, name="repo", stale_after_days=30)
    clocked.update()
    assert stale(clocked) == ["repo/dated.md"]
    # Edited over months: the mtimes are evidence again.
    for index, path in enumerate(paths):
        at(path, 100 + 10 * index)
    clocked.update()
    assert len(stale(clocked)) == 7


def test_the_checkout_rule_needs_a_clear_majority_and_a_few_files(
    clocked: Vault, tmp_path: Path
) -> None:
    few, split = tmp_path / "few", tmp_path / "split"
    for i in range(CHECKOUT_MIN_DOCUMENTS - 1):  # too few to tell a checkout from a session
        at(write(few, f"{i}.md", f"# {i}\n\nx"), 100)
    for i in range(10):  # 7 of 10 at once: under 80%, so file times count
        at(write(split, f"{i}.md", f"# {i}\n\ny"), 100 if i < 7 else 100 + 30 * i)
    clocked.add_collection(few, name="few", stale_after_days=30)
    clocked.add_collection(split, name="split", stale_after_days=30)
    clocked.update()
    found = stale(clocked)
    assert len([r for r in found if r.startswith("few/")]) == CHECKOUT_MIN_DOCUMENTS - 1
    assert len([r for r in found if r.startswith("split/")]) == 10


def test_pinned_and_snoozed_documents_are_not_stale(clocked: Vault, notes: Path) -> None:
    for name in ("a", "b", "c"):
        at(write(notes, f"{name}.md", typed("handoff", name.upper())), 120)
    clocked.add_collection(notes, name="notes")
    clocked.update()
    assert len(stale(clocked)) == 3
    clocked.curation.pin("notes/a.md")
    clocked.curation.snooze("notes/b.md", "2030-07-01")
    assert stale(clocked) == ["notes/c.md"]
    clocked._clock = lambda: NOW + timedelta(days=45)  # the snooze has ended
    assert stale(clocked) == ["notes/b.md", "notes/c.md"]
    assert [d.path for d in clocked.stale_documents(1)] == ["b.md"]
