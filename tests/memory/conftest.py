"""A vault for memory-store tests (the embedded model; no folders needed)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrove.vault import Vault


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    opened = Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config")
    opened.memory.project_store = "demo-project"
    yield opened
    opened.close()
