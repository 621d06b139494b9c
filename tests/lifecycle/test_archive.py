"""Lifecycle sweeps on a real vault: who is archived, that archived documents leave every
search and come back intact, archived-only search, restore selections, purge."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memtrove import Vault
from memtrove.errors import ConfigError, DocumentNotFoundError, InvalidQueryError
from tests.conftest import write

NOW = datetime(2036, 1, 1, tzinfo=UTC)  # ten years on: every note is long unused

NOTES = {
    "old-cache.md": "# Cache eviction\n\nThe zephyrine cache evicts entries after an hour.\n",
    "old-queue.md": "# Queue retries\n\nThe zephyrine queue retries three times, then parks.\n",
    "pinned.md": "# Pinned runbook\n\nThe zephyrine runbook: restart the broker first.\n",
    "decision.md": (
        "---\ntype: decision\n---\n# Decision: zephyrine broker\n\n"
        "We decided to keep the zephyrine broker on one node.\n"
    ),
    "journal/day.md": "# Journal\n\nA zephyrine journal entry about the broker.\n",
}


def config(vault: Vault, text: str) -> None:
    vault.config_file.write_text(vault.config_file.read_text() + text, encoding="utf-8")


@pytest.fixture
def notes_vault(tmp_path: Path, notes: Path) -> Iterator[Vault]:
    for relative, text in NOTES.items():
        write(notes, relative, text)
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as vault:
        vault.add_collection(notes, name="notes")
        vault.update()
        vault.embed()
        vault.curation.pin("notes/pinned.md")
        vault._clock = lambda: NOW
        yield vault


def snapshot(vault: Vault, path: str) -> dict[str, Any]:
    """Everything a restore must bring back, read from the tables themselves."""
    connection = vault._connection
    row = connection.execute(
        "SELECT d.id, d.hash, c.doc, d.pinned, d.confidence, d.access_count, d.docid "
        "FROM documents d JOIN content c ON c.hash = d.hash WHERE d.path = ?",
        (path,),
    ).fetchone()
    doc_id, body_hash = row[0], row[1]
    return {
        "content": hashlib.sha256(row[2].encode()).hexdigest(),
        "hash": body_hash,
        "pinned": row[3],
        "confidence": row[4],
        "access_count": row[5],
        "docid": row[6],
        "fragments": connection.execute(
            "SELECT COUNT(*) FROM fragments WHERE hash = ?", (body_hash,)
        ).fetchone()[0],
        "vectors": connection.execute(
            "SELECT COUNT(*) FROM content_vectors WHERE hash = ?", (body_hash,)
        ).fetchone()[0],
        "relations": connection.execute(
            "SELECT COUNT(*) FROM memory_relations WHERE source_id = ? OR target_id = ?",
            (doc_id, doc_id),
        ).fetchone()[0],
    }


def ranking(vault: Vault) -> list[tuple[str, float]]:
    return [(r.path, r.score) for r in vault.search("zephyrine broker queue", limit=20)]


def paths(results: Any) -> set[str]:
    return {result.path for result in results}


def test_a_dry_run_lists_candidates_and_writes_nothing(notes_vault: Vault) -> None:
    report = notes_vault.lifecycle.sweep()
    assert report.dry_run and report.archived == 0
    listed = {candidate.path for candidate in report.documents}
    assert listed == {"old-cache.md", "old-queue.md", "journal/day.md"}  # not pinned, decision
    assert all("unused" in candidate.reason for candidate in report.documents)
    assert notes_vault.lifecycle.status().archived == 0
    assert len(notes_vault.search("zephyrine", limit=20)) == 5
    data = report.to_dict()
    assert data["dry_run"] is True and data["candidates"] == 3 and "archived" not in data


def test_recent_use_and_the_policy_keep_documents(notes_vault: Vault) -> None:
    notes_vault._clock = lambda: datetime.now(UTC) + timedelta(days=30)
    assert notes_vault.lifecycle.sweep().candidates == 0  # indexed today: not 90 days unused
    notes_vault._clock = lambda: NOW
    config(
        notes_vault,
        "lifecycle:\n  archive_after_days: none\n  type_overrides: {note: 5000}\n"
        "  collection_overrides: {notes: 3000}\n",
    )
    assert {c.path for c in notes_vault.lifecycle.sweep().documents} == {
        "old-cache.md", "old-queue.md", "journal/day.md"
    }  # fmt: skip
    config(notes_vault, "  exempt_collections: [notes]\n")
    assert notes_vault.lifecycle.sweep().candidates == 0
    notes_vault.curation.snooze("notes/old-cache.md", "2036-06-01")
    notes_vault.config_file.write_text(
        notes_vault.config_file.read_text().split("lifecycle:")[0], encoding="utf-8"
    )
    assert "old-cache.md" not in {c.path for c in notes_vault.lifecycle.sweep().documents}


def test_archived_documents_leave_every_search_and_come_back_intact(notes_vault: Vault) -> None:
    first = notes_vault.get("notes/old-cache.md")
    second = notes_vault.get("notes/old-queue.md")
    notes_vault.graph.relate(first.docid, second.docid, "supporting")
    notes_vault.curation.pin("notes/old-cache.md")
    notes_vault.curation.pin("notes/old-cache.md", unpin=True)
    before = {path: snapshot(notes_vault, path) for path in ("old-cache.md", "old-queue.md")}
    ranked = ranking(notes_vault)
    report = notes_vault.lifecycle.sweep(apply=True)
    assert not report.dry_run and report.archived == 3
    gone = {"old-cache.md", "old-queue.md", "journal/day.md"}
    assert paths(notes_vault.search("zephyrine", limit=20)) == {"pinned.md", "decision.md"}
    assert not gone & paths(notes_vault.vsearch("zephyrine cache eviction", limit=20))
    assert not gone & paths(notes_vault.query("zephyrine cache eviction", limit=20))
    assert not gone & paths(notes_vault.intent.intent_search("why zephyrine cache", limit=20))
    assert not gone & paths(notes_vault.intent.retrieve("zephyrine cache eviction")[1])
    with pytest.raises(DocumentNotFoundError):
        notes_vault.graph.relations_of("notes/old-queue.md")  # out of the graph too
    assert notes_vault.lifecycle.status().archived == 3
    notes_vault.update()  # unchanged files stay archived
    assert notes_vault.lifecycle.status().archived == 3
    restored = notes_vault.lifecycle.restore(all=True)
    assert restored.restored == 3
    assert {path: snapshot(notes_vault, path) for path in before} == before
    assert ranking(notes_vault) == ranked  # BM25 totals too: the same scores as before
    assert len(notes_vault.search("zephyrine", limit=20)) == 5
    assert "old-cache.md" in paths(notes_vault.vsearch("zephyrine cache eviction", limit=20))
    assert len(notes_vault.graph.relations_of("notes/old-queue.md")) == 1
    assert notes_vault.lifecycle.status().archived == 0


def test_an_edited_archived_file_comes_back(notes_vault: Vault, notes: Path) -> None:
    notes_vault.lifecycle.sweep(apply=True)
    write(notes, "old-cache.md", NOTES["old-cache.md"] + "\nNow also the zephyrine hot set.\n")
    notes_vault.update()
    assert "old-cache.md" in paths(notes_vault.search("zephyrine hot set"))
    assert notes_vault.lifecycle.search("hot set") == []
    assert notes_vault.lifecycle.status().archived == 2


def test_forgetting_an_archived_document_wins_over_restore(notes_vault: Vault) -> None:
    notes_vault.lifecycle.sweep(apply=True)
    forgotten = notes_vault.curation.forget("notes/old-cache.md")
    assert not forgotten.active
    assert notes_vault.lifecycle.status().archived == 2
    assert "old-cache.md" not in {item.path for item in notes_vault.lifecycle.search("zephyrine")}
    restored = notes_vault.lifecycle.restore(all=True)
    assert set(restored.documents) == {"notes/journal/day.md", "notes/old-queue.md"}
    assert "old-cache.md" not in paths(notes_vault.search("zephyrine", limit=20))
    notes_vault.update()  # an unchanged forgotten file stays forgotten
    assert "old-cache.md" not in paths(notes_vault.search("zephyrine", limit=20))
    assert notes_vault.lifecycle.purge(confirm=True).purged == 0  # purge is for archived only


def test_lifecycle_search_finds_archived_documents_only(notes_vault: Vault) -> None:
    notes_vault.lifecycle.sweep(apply=True)
    found = notes_vault.lifecycle.search("zephyrine")
    assert {item.path for item in found} == {"old-cache.md", "old-queue.md", "journal/day.md"}
    assert all(item.archived_at and 0 <= item.score < 1 for item in found)
    assert [item.path for item in notes_vault.lifecycle.search("eviction")] == ["old-cache.md"]
    with pytest.raises(InvalidQueryError):
        notes_vault.lifecycle.search("   ")


def test_restore_by_query_or_collection(notes_vault: Vault, tmp_path: Path) -> None:
    notes_vault.lifecycle.sweep(apply=True)
    with pytest.raises(InvalidQueryError, match="say what to restore"):
        notes_vault.lifecycle.restore()
    assert notes_vault.lifecycle.restore(query="eviction").documents == ["notes/old-cache.md"]
    assert notes_vault.lifecycle.restore(collection="other").restored == 0
    assert notes_vault.lifecycle.restore(collection="notes").restored == 2
    assert notes_vault.lifecycle.restore(all=True).restored == 0


def test_purge_needs_confirmation_and_deletes_archived_documents_only(
    notes_vault: Vault, notes: Path
) -> None:
    with pytest.raises(InvalidQueryError, match="confirm"):
        notes_vault.lifecycle.purge()
    assert notes_vault.lifecycle.purge(confirm=True).purged == 0  # nothing archived yet
    notes_vault.lifecycle.sweep(apply=True)
    body_hash = snapshot(notes_vault, "old-queue.md")["hash"]
    report = notes_vault.lifecycle.purge(confirm=True, query="queue")
    assert report.documents == ["notes/old-queue.md"] and report.bodies == 1
    connection = notes_vault._connection
    for table in ("content", "fragments", "content_vectors"):
        count = connection.execute(f"SELECT COUNT(*) FROM {table} WHERE hash = ?", (body_hash,))
        assert count.fetchone()[0] == 0, table
    assert notes_vault.lifecycle.status().archived == 2
    assert len(notes_vault.search("zephyrine", limit=20)) == 2  # active ones untouched
    assert notes_vault.lifecycle.purge(confirm=True, older_than_days=1).purged == 0
    notes_vault.update()  # the file is still there: indexed again, as new
    assert "old-queue.md" in paths(notes_vault.search("zephyrine queue"))


def test_sweep_purges_after_purge_after_days(notes_vault: Vault) -> None:
    config(notes_vault, "lifecycle:\n  purge_after_days: 30\n")
    notes_vault.lifecycle.sweep(apply=True)
    notes_vault._clock = lambda: NOW + timedelta(days=31)
    report = notes_vault.lifecycle.sweep(apply=True)
    assert report.purged == 3 and notes_vault.lifecycle.status().archived == 0


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ("lifecycle: 5", "must be a mapping"),
        ("lifecycle:\n  archive_after_days: -1", "archive_after_days"),
        ("lifecycle:\n  archive_after_days: true", "archive_after_days"),
        ("lifecycle:\n  type_overrides: {decision: 30}", "durable"),
        ("lifecycle:\n  type_overrides: [note]", "mapping"),
        ("lifecycle:\n  exempt_collections: {a: 1}", "list of collection names"),
        ("lifecycle:\n  archive_after: 30", "unknown key"),
        ("lifecycle:\n  dry_run: maybe", "true or false"),
    ],
)
def test_a_bad_policy_names_its_key(notes_vault: Vault, section: str, message: str) -> None:
    config(notes_vault, section + "\n")
    with pytest.raises(ConfigError, match=message):
        notes_vault.lifecycle.sweep()
    with pytest.raises(ConfigError, match=r"config\.yaml"):
        notes_vault.lifecycle.status()


def test_status_reports_the_policy_and_counts(notes_vault: Vault) -> None:
    notes_vault.curation.forget("notes/journal/day.md")
    status = notes_vault.lifecycle.status()
    assert (status.active, status.inactive, status.forgotten, status.pinned) == (4, 1, 1, 1)
    assert status.never_accessed == 4
    data = status.to_dict()
    assert data["policy"]["archive_after_days"] == 90
    assert "decision" in data["policy"]["durable_types"]
    assert status.text().startswith("active 4, inactive 1, archived 0, forgotten 1")
