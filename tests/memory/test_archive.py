"""Archiving entries: kept, but out of recall, duplicates, hygiene and search; restored by
``--restore`` or an overwrite. On SQLite and PostgreSQL, through the CLI and the Vault."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memtrove.cli import app
from memtrove.errors import EntryNotFoundError
from memtrove.vault import Vault
from tests.conftest import ENGINES
from tests.postgres_server import vault_schema

DEPLOY = "We deploy the web app to Fly.io in the ams region with blue-green releases."


@pytest.fixture(params=ENGINES)
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Where a vault lives: a SQLite file, or a PostgreSQL schema of its own."""
    if request.param == "sqlite":
        yield str(tmp_path / "vault.sqlite")
        return
    with vault_schema() as url:
        yield url


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(folder)], check=True)
    return folder


def cli(location: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(app, ["--vault", location, *args])
    assert result.exit_code == code, (result.output, result.stderr)
    return result.output if code == 0 else result.stderr


def test_archive_and_restore_from_the_cli(location: str) -> None:
    for label in ("Deploy A", "Deploy B"):
        cli(location, "remember", label, DEPLOY, "--store", "demo")
    assert json.loads(cli(location, "duplicates", "--store", "demo", "--json"))["pairs"] == 1

    assert cli(location, "archive", "deploy a", "--store", "demo") == "archived demo :: Deploy A\n"
    assert json.loads(cli(location, "duplicates", "--store", "demo", "--json"))["pairs"] == 0
    hygiene = json.loads(cli(location, "hygiene", "--store", "demo", "--json"))
    assert hygiene["duplicate_pairs"] == 0
    recalled = json.loads(cli(location, "recall", "fly.io", "ams", "--store", "demo", "--json"))
    assert [item["label"] for item in recalled] == ["Deploy B"]

    restored = json.loads(cli(location, "archive", "Deploy A", "--store", "demo", "--restore",
                              "--json"))  # fmt: skip
    assert restored["label"] == "Deploy A" and restored["archived"] is False
    recalled = json.loads(cli(location, "recall", "fly.io", "ams", "--store", "demo", "--json"))
    assert sorted(item["label"] for item in recalled) == ["Deploy A", "Deploy B"]
    assert json.loads(cli(location, "duplicates", "--store", "demo", "--json"))["pairs"] == 1

    error = cli(location, "archive", "Nothing here", "--store", "demo", code=1)
    assert error.startswith("memtrove: error: no entry 'Nothing here'") and error.count("\n") == 1


def test_archive_without_a_vault_is_one_line(tmp_path: Path) -> None:
    error = cli(str(tmp_path / "none.sqlite"), "archive", "x", code=1)
    assert error.startswith("memtrove: error:") and error.count("\n") == 1
    assert not (tmp_path / "none.sqlite").exists()


def test_archived_entries_leave_staleness_branches_and_search(location: str, repo: Path) -> None:
    vault = Vault.open(location, config_dir=Path(repo.parent / "config"))
    try:
        vault.memory.project_store = "demo"
        vault._clock = lambda: datetime(2026, 1, 1, tzinfo=UTC)
        vault.memory.remember("Old note", "Written long ago about the ams region.")
        vault.memory.remember("Gone branch", "Scoped to a deleted branch.", branch="feature/x")
        vault._clock = lambda: datetime(2026, 6, 1, tzinfo=UTC)
        before = vault.memory.hygiene(worktree=repo)
        assert (before.stale_entries, before.orphaned_branches) == (2, {"feature/x": 1})

        archived = vault.memory.archive_entry("Old note")
        assert archived.archived and archived.content == "Written long ago about the ams region."
        vault.memory.archive_entry("Gone branch")
        after = vault.memory.hygiene(worktree=repo)
        assert after.healthy and (after.stale_entries, after.orphaned_branches) == (0, {})
        assert vault.memory.entries() == []
        kept = vault.memory.entries(include_archived=True)
        assert sorted((e.label, e.archived) for e in kept) == [
            ("Gone branch", True),
            ("Old note", True),
        ]
        assert vault.memory.recall("ams region") == []
        assert list(vault.search("ams region")) == []

        # writing the label again (with overwrite) brings the entry back, its text a version
        vault.memory.remember("Old note", "Rewritten about the ams region.", overwrite=True)
        assert [e.label for e in vault.memory.entries()] == ["Old note"]
        assert [item.entry.label for item in vault.memory.recall("ams region")] == ["Old note"]
        with pytest.raises(EntryNotFoundError):
            vault.memory.archive_entry("never written")
    finally:
        vault.close()
