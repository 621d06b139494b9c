"""Hermetic tests: HOME, XDG folders and MEMTROVE_* point into each test's tmp_path."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.models.http import COOLDOWN

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


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    opened = Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config")
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
