"""``consolidate N``: low-confidence duplicates archived (never deleted) on a real vault."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.errors import InvalidQueryError
from memtrove.lifecycle.duplicates import word_jaccard
from tests.conftest import write

BROKER = "The kestrel broker keeps one queue per tenant and retries failed jobs three times."
NOTES = {
    "broker.md": f"# Kestrel broker queues\n\n{BROKER}\n",
    "broker-copy.md": f"# Kestrel broker queues\n\n{BROKER} Copied from the wiki.\n",
    "unrelated.md": "# Kestrel broker queues\n\nA different text about owls and hedgerows.\n",
    "pinned-copy.md": f"# Kestrel broker queues\n\n{BROKER} Pinned copy.\n",
}


def set_confidence(vault: Vault, path: str, value: float) -> None:
    vault._connection.execute("UPDATE documents SET confidence = ? WHERE path = ?", (value, path))


@pytest.fixture
def dupes(tmp_path: Path, notes: Path) -> Iterator[Vault]:
    for relative, text in NOTES.items():
        write(notes, relative, text)
    for number in range(12):  # the rest of a vault: BM25 needs terms that are not everywhere
        write(notes, f"filler-{number}.md", f"# Filler {number}\n\nGardening log {number}.\n")
    write(tmp_path / "other", "broker.md", NOTES["broker-copy.md"])  # another collection
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as vault:
        vault.add_collection(notes, name="notes")
        vault.add_collection(tmp_path / "other", name="other")
        vault.update()
        set_confidence(vault, "broker.md", 0.8)
        set_confidence(vault, "broker-copy.md", 0.3)
        set_confidence(vault, "unrelated.md", 0.2)
        set_confidence(vault, "pinned-copy.md", 0.1)
        vault._connection.execute(
            "UPDATE documents SET confidence = 0.1 WHERE collection = 'other'"
        )
        vault.curation.pin("notes/pinned-copy.md")
        yield vault


def test_word_jaccard() -> None:
    assert word_jaccard("A b c", "a B d") == pytest.approx(2 / 4)
    assert word_jaccard("", "") == 0.0


def test_a_dry_run_lists_the_weaker_duplicate_and_writes_nothing(dupes: Vault) -> None:
    report = dupes.consolidation.consolidate_duplicates()
    assert report.dry_run and report.archived == 0
    assert [(p.archived, p.kept) for p in report.pairs] == [
        ("notes/broker-copy.md", "notes/broker.md")
    ]  # the pinned copy is never archived; other collections are not compared
    assert report.checked == 4  # the fillers keep their default confidence
    assert "--apply" in report.text()
    assert dupes.lifecycle.status().archived == 0


def test_apply_archives_and_restore_brings_it_back(dupes: Vault) -> None:
    report = dupes.consolidation.consolidate_duplicates(50, apply=True)
    assert report.archived == 1 and not report.dry_run
    [archived] = dupes.lifecycle.search("kestrel")
    assert archived.path == "broker-copy.md"
    assert archived.reason == "duplicate of notes/broker.md"
    paths = {r.path for r in dupes.search("kestrel broker", limit=20)}
    assert "broker-copy.md" not in paths and "broker.md" in paths
    # nothing left to archive
    assert dupes.consolidation.consolidate_duplicates(apply=True).archived == 0
    assert dupes.lifecycle.restore(all=True).documents == ["notes/broker-copy.md"]
    assert report.to_dict()["pairs"][0]["kept"] == "notes/broker.md"


def test_a_small_n_checks_only_the_least_confident(dupes: Vault) -> None:
    # pinned-copy (0.1) and other/broker (0.1)
    report = dupes.consolidation.consolidate_duplicates(2)
    assert report.checked == 2 and report.pairs == []
    with pytest.raises(InvalidQueryError, match="N must be"):
        dupes.consolidation.consolidate_duplicates(0)
