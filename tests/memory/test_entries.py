"""Entries: slugs, stores, overwrite and versions, recall versus search, forget."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtrove.errors import EntryExistsError, EntryNotFoundError, InvalidQueryError
from memtrove.memory.slugs import slugify
from memtrove.vault import Vault


@pytest.mark.parametrize(
    ("label", "slug"),
    [
        ("Deploy: Fly.io (prod)", "deploy-fly-io-prod"),
        ("Café Müller", "café-müller"),
        ("東京 オフィス", "東京-オフィス"),
        ("ｆｕｌｌ　ｗｉｄｔｈ", "full-width"),
        ("__snake_case__", "snake-case"),
        ("Ünïcödé 42", "ünïcödé-42"),
    ],
)
def test_slugs_keep_unicode_letters_and_digits(label: str, slug: str) -> None:
    assert slugify(label) == slug


def test_all_symbol_labels_get_distinct_stable_hashes() -> None:
    first, second = slugify("!!!"), slugify("???")
    assert first.startswith("h-") and second.startswith("h-") and first != second
    assert slugify("!!!") == first
    with pytest.raises(InvalidQueryError):
        slugify("   ")


def test_remember_then_refuse_then_overwrite_keeps_the_old_text(vault: Vault) -> None:
    made = vault.memory.remember("Deploy target", "We deploy to Fly.io in ams.", confidence=7)
    assert (
        made.created and made.entry.store == "demo-project" and made.entry.slug == "deploy-target"
    )
    assert made.entry.content == "We deploy to Fly.io in ams." and made.entry.confidence == 7
    with pytest.raises(EntryExistsError, match=r"'Deploy target'.*overwrite"):
        vault.memory.remember("deploy TARGET", "Something else")
    assert vault.memory.entry("Deploy target").content == "We deploy to Fly.io in ams."
    replaced = vault.memory.remember("Deploy target", "We moved to Hetzner.", overwrite=True)
    assert not replaced.created and replaced.entry.content == "We moved to Hetzner."
    versions = vault.memory.entry_versions("Deploy target")
    assert [(v.content, v.reason, v.confidence) for v in versions] == [
        ("We deploy to Fly.io in ams.", "overwrite", 7)
    ]
    vault.memory.remember("Deploy target", "Back on Fly.io.", overwrite=True)
    assert [v.content for v in vault.memory.entry_versions("Deploy target")] == [
        "We moved to Hetzner.",
        "We deploy to Fly.io in ams.",
    ]


def test_stores_branches_and_confidence(vault: Vault) -> None:
    vault.memory.remember("Editor", "Uses Helix", store="global")
    vault.memory.remember("Editor", "This repo wants tabs", branch="feature/x")
    assert vault.memory.entry("Editor", store="global").content == "Uses Helix"
    assert vault.memory.entry("Editor").branch == "feature/x"
    assert [e.label for e in vault.memory.entries(branch="main")] == []
    assert [e.label for e in vault.memory.entries(branch="feature/x")] == ["Editor"]
    for bad in (0, 11, 2.5, True):
        with pytest.raises(InvalidQueryError, match="confidence"):
            vault.memory.remember("Other", "x", confidence=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidQueryError, match="content"):
        vault.memory.remember("Empty", "   ")


def test_recall_stamps_usage_and_search_does_not(vault: Vault, tmp_path: Path) -> None:
    vault.memory.remember("Database choice", "PostgreSQL 16 for the metadata service.")
    vault.memory.remember("Team lunch", "Fridays at noon, the ramen place.")
    vault.memory.remember("Global rule", "Never force-push to main.", store="global")
    searched = vault.memory.search_entries("which database do we use")
    assert searched[0].entry.label == "Database choice"
    assert vault.memory.entry("Database choice").recall_count == 0
    vault._clock = lambda: datetime(2026, 5, 1, tzinfo=UTC)
    recalled = vault.memory.recall("postgresql metadata")
    assert recalled[0].entry.label == "Database choice"
    entry = vault.memory.entry("Database choice")
    assert entry.recall_count == 1 and entry.last_recalled_at == "2026-05-01T00:00:00Z"
    assert vault.memory.entry("Team lunch").recall_count == 0
    assert vault.memory.recall("force-push main")[0].entry.store == "global"  # project + global
    only_project = vault.memory.recall("force-push main", store="demo-project")
    assert "Global rule" not in [r.entry.label for r in only_project]


def test_entries_are_found_by_document_search_too(vault: Vault) -> None:
    vault.memory.remember("Thumbnail worker", "pyvips with a bounded operation cache")
    hits = vault.search("bounded operation cache", collections=["_memtrove"])
    assert [h.path for h in hits] == ["entries/demo-project/thumbnail-worker.md"]
    assert hits[0].title == "Thumbnail worker"


def test_forget_keeps_a_version_and_frees_the_label(vault: Vault, tmp_path: Path) -> None:
    vault.memory.remember("Old idea", "Use MongoDB")
    gone = vault.memory.forget_entry("old idea")
    assert gone.content == "Use MongoDB"
    with pytest.raises(EntryNotFoundError):
        vault.memory.entry("Old idea")
    assert vault.search("MongoDB", collections=["_memtrove"]) == []
    assert vault.memory.entry_versions("Old idea")[0].reason == "forget"
    with pytest.raises(EntryNotFoundError):
        vault.memory.forget_entry("Old idea")
    again = vault.memory.remember("Old idea", "Use Postgres after all")
    assert again.created and vault.search("Postgres", collections=["_memtrove"])
    with sqlite3.connect(tmp_path / "vault.sqlite") as connection:
        kept = connection.execute("SELECT COUNT(*) FROM memory_entry_versions").fetchone()[0]
    assert kept == 1


def test_a_near_entry_is_reported_when_writing(vault: Vault) -> None:
    vault.memory.remember("Deploy target", "We deploy the web app to Fly.io in the ams region.")
    vault.memory.remember("Lunch", "Ramen on Fridays.")
    near = vault.memory.remember("Deployment", "The web app is deployed to Fly.io, region ams.")
    assert [item.label for item in near.similar] == ["Deploy target"]
    assert near.similar[0].score >= 0.55
    far = vault.memory.remember("Cats", "Our office cat is called Miso.")
    assert far.similar == []


def test_archived_entries_leave_recall_duplicates_and_search(vault: Vault) -> None:
    text = "We deploy the web app to Fly.io in the ams region with blue-green releases."
    vault.memory.remember("Deploy A", text)
    vault.memory.remember("Deploy B", text + " ")
    assert vault.memory.find_duplicates().pairs == 1
    archived = vault.memory.archive_entry("Deploy B")
    assert archived.archived
    assert vault.memory.find_duplicates().pairs == 0
    assert [r.entry.label for r in vault.memory.search_entries("Fly.io ams")] == ["Deploy A"]
    assert [e.label for e in vault.memory.entries()] == ["Deploy A"]
    assert {e.label for e in vault.memory.entries(include_archived=True)} == {
        "Deploy A",
        "Deploy B",
    }
    assert len(vault.search("blue-green releases", collections=["_memtrove"])) == 1
    restored = vault.memory.archive_entry("Deploy B", archived=False)
    assert not restored.archived and vault.memory.find_duplicates().pairs == 1
    assert len(vault.search("blue-green releases", collections=["_memtrove"])) == 2
