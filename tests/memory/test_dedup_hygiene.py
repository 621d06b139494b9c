"""Duplicate clusters and verdicts; the three hygiene signals, each alone, and silence."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memtrove.errors import EntryNotFoundError, InvalidQueryError
from memtrove.text import to_iso
from memtrove.vault import Vault

DEPLOY = "We deploy the web app to Fly.io in the ams region with blue-green releases."


def fill(vault: Vault) -> None:
    vault.memory.remember("Deploy A", DEPLOY)
    vault.memory.remember("Deploy B", DEPLOY + " ")
    vault.memory.remember(
        "Deploy C", "We deploy the web app to Fly.io in the ams region, blue-green."
    )
    vault.memory.remember("Lunch", "Ramen on Fridays at noon.")
    vault.memory.remember("Lunch 2", "Ramen on Fridays at noon!")


def test_clusters_and_output(vault: Vault) -> None:
    fill(vault)
    report = vault.memory.find_duplicates()
    sizes = [len({p.slug_a for p in c} | {p.slug_b for p in c}) for c in report.clusters]
    assert sizes == [3, 2]
    lines = report.lines()
    assert lines[0] == "Cluster of 3:" and "Cluster of 2:" in lines
    assert lines[1].startswith("  [score:0.9") and lines[1].endswith("] Deploy A <-> Deploy B")
    assert all(p.slug_a < p.slug_b for c in report.clusters for p in c)
    assert report.to_dict()["pairs"] == report.pairs
    assert vault.memory.find_duplicates(threshold=0.9999).pairs <= report.pairs
    with pytest.raises(InvalidQueryError):
        vault.memory.find_duplicates(threshold=0)


def test_verdicts_hide_pairs_until_either_entry_changes(vault: Vault) -> None:
    fill(vault)
    before = vault.memory.find_duplicates().pairs
    assert vault.memory.dedup_mark_checked("Lunch 2", "Lunch", "supplement") == ("lunch", "lunch-2")
    assert vault.memory.find_duplicates().pairs == before - 1
    # an overwrite clears the verdict
    vault.memory.remember("Lunch", "Ramen on Fridays at noon.", overwrite=True)
    assert vault.memory.find_duplicates().pairs == before
    vault.memory.dedup_mark_checked("lunch", "lunch-2", "duplicate")
    vault.memory.forget_entry("Lunch 2")
    assert all(
        "lunch-2" not in (p.slug_a, p.slug_b)
        for c in vault.memory.find_duplicates().clusters
        for p in c
    )
    with pytest.raises(InvalidQueryError, match="status must be one of"):
        vault.memory.dedup_mark_checked("Deploy A", "Deploy B", "maybe")
    with pytest.raises(EntryNotFoundError):
        vault.memory.dedup_mark_checked("Deploy A", "Nope", "unrelated")
    with pytest.raises(InvalidQueryError, match="two different"):
        vault.memory.dedup_mark_checked("Deploy A", "deploy a", "unrelated")


def git(directory: Path, *arguments: str) -> None:
    subprocess.run(["git", "-C", str(directory), *arguments], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    git(
        folder,
        "-c",
        "user.email=a@b",
        "-c",
        "user.name=a",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
    )
    git(folder, "branch", "feature/live")
    return folder


def test_a_healthy_store_is_silent(vault: Vault, repo: Path) -> None:
    vault.memory.remember("Only", "One entry, recently written.", branch="feature/live")
    report = vault.memory.hygiene(worktree=repo)
    assert report.healthy and report.lines() == [] and report.branch_check == "checked"


def test_duplicates_alone(vault: Vault, repo: Path) -> None:
    vault.memory.remember("Deploy A", DEPLOY)
    vault.memory.remember("Deploy B", DEPLOY + " ")
    report = vault.memory.hygiene(worktree=repo)
    assert (report.duplicate_pairs, report.stale_entries, report.orphaned_branches) == (1, 0, {})
    assert len(report.lines()) == 1 and "near-duplicate" in report.lines()[0]


def test_stale_alone(vault: Vault, repo: Path) -> None:
    vault._clock = lambda: datetime(2026, 1, 1, tzinfo=UTC)
    vault.memory.remember("Old", "Written long ago.")
    vault.memory.remember("Recalled", "Written long ago, recalled lately.")
    vault._clock = lambda: datetime(2026, 3, 15, tzinfo=UTC)
    vault.memory.recall("recalled lately")
    vault._clock = lambda: datetime(2026, 4, 15, tzinfo=UTC)  # 105 days after writing
    report = vault.memory.hygiene(worktree=repo)
    assert (report.duplicate_pairs, report.stale_entries, report.orphaned_branches) == (0, 1, {})
    assert "90 days" in report.lines()[0]


def test_orphaned_branches_alone_and_skipped_outside_git(
    vault: Vault, repo: Path, tmp_path: Path
) -> None:
    vault.memory.remember(
        "Gone branch", "Scoped to a branch that was deleted.", branch="feature/gone"
    )
    vault.memory.remember("Live branch", "Scoped to a branch that exists.", branch="feature/live")
    report = vault.memory.hygiene(worktree=repo)
    assert report.orphaned_branches == {"feature/gone": 1}
    assert (report.duplicate_pairs, report.stale_entries) == (0, 0)
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    skipped = vault.memory.hygiene(worktree=outside)
    assert skipped.healthy and skipped.branch_check == "skipped: not a git repository"


def test_archived_and_other_stores_do_not_count(vault: Vault, repo: Path) -> None:
    vault.memory.remember("Deploy A", DEPLOY, store="global")
    vault.memory.remember("Deploy B", DEPLOY + " ", store="global")
    assert vault.memory.hygiene(worktree=repo).healthy
    assert vault.memory.hygiene(store="global", worktree=repo).duplicate_pairs == 1
    assert to_iso(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(days=1)) == "2026-01-02T00:00:00Z"
