"""Hermetic tests: HOME, XDG folders and MEMTROVE_* point into each test's tmp_path."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memtrove import Vault
from memtrove.models.http import COOLDOWN
from tests.postgres_server import OFF as POSTGRES_OFF
from tests.postgres_server import vault_schema

pytest_plugins = ["tests.fakes.model_server"]

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "vault"
# The documented JSON shape of one search result (README, `search --json`).
RESULT_FIELDS = {
    "docid", "collection", "path", "title", "score", "snippet", "content_type", "modified_at"
}  # fmt: skip


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One ``models`` cache folder per test process: what the embedded model keeps there
    (its tokenizer tables) depends only on the installed package, and building it again in
    every test would cost each vector query ~0.15 s."""
    return tmp_path_factory.mktemp("model-cache")


@pytest.fixture(autouse=True)
def isolated_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model_cache: Path
) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".cache" / "memtrove").mkdir(parents=True)
    (home / ".cache" / "memtrove" / "models").symlink_to(model_cache, target_is_directory=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    for name in list(os.environ):
        if name.startswith("MEMTROVE_"):
            monkeypatch.delenv(name, raising=False)
    # The model cooldown is process-wide: an earlier test's refused port, handed out again to
    # this test's fake model server, must not skip a stage here.
    COOLDOWN.clear()
    return home


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    """An empty folder for a test's markdown files."""
    folder = tmp_path / "notes"
    folder.mkdir()
    return folder


ENGINES = ("sqlite",) if POSTGRES_OFF else ("sqlite", "postgresql")


@pytest.fixture(params=ENGINES)
def vault(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Vault]:
    """A new vault, once on a SQLite file and once in a PostgreSQL schema of its own
    (``MEMTROVE_TEST_POSTGRES=off``: SQLite only)."""
    if request.param == "sqlite":
        opened = Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config")
        yield opened
        opened.close()
        return
    with vault_schema() as location:
        opened = Vault.open(location, config_dir=tmp_path / "config")
        yield opened
        opened.close()


@pytest.fixture
def example_copy(tmp_path: Path) -> Path:
    """A writable copy of examples/vault."""
    target = tmp_path / "example"
    shutil.copytree(EXAMPLES, target)
    return target


def write(folder: Path, relative: str, text: str | bytes) -> Path:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def where(vault: Vault) -> Path | str:
    """Where ``vault`` lives, to open it again from another connection or process: its
    file, or its server URL."""
    return vault.path if vault.path is not None else vault.location


def sqlite_only(vault: Vault, what: str) -> None:
    """Skip on a server vault: the test checks ``what``, which only a SQLite file has."""
    if vault.path is None:
        pytest.skip(f"SQLite only: {what}")


def text_rows(connection: Any, index: str, first: int, last: int | None = None) -> int:
    """Rows of the text index ``index`` (documents, archived, passages) with ids from
    ``first`` to ``last`` (default: ``first`` alone), as the vault's engine stores them."""
    last = first if last is None else last
    if connection.dialect == "sqlite":
        sql = f"SELECT COUNT(*) FROM {index}_fts WHERE rowid BETWEEN ? AND ?"
        return int(connection.execute(sql, (first, last)).fetchone()[0])
    code = {"documents": 0, "archived": 1, "passages": 2}[index]
    sql = "SELECT COUNT(*) FROM text_rows WHERE idx = ? AND doc_id BETWEEN ? AND ?"
    return int(connection.execute(sql, (code, first, last)).fetchone()[0])


def totals_drifted(connection: Any, index: str = "documents") -> bool:
    """Whether the text index's recorded row count differs from its rows (a removal since
    the last recount), as the vault's engine records it."""
    if connection.dialect == "sqlite":
        from memtrove.db.sqlite.fts_totals import fts_totals_drifted

        return fts_totals_drifted(connection, f"{index}_fts")
    code = {"documents": 0, "archived": 1, "passages": 2}[index]
    recorded = connection.execute("SELECT rows FROM text_totals WHERE idx = ?", (code,))
    row = recorded.fetchone()
    return (0 if row is None else int(row[0])) != text_rows(connection, index, 0, 1 << 62)
