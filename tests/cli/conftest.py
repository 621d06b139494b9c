"""The CLI in-process: a CliRunner whose global vault and config live in tmp_path/cli."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("MEMTROVE_VAULT", str(tmp_path / "cli" / "vault.sqlite"))
    monkeypatch.setenv("MEMTROVE_CONFIG_DIR", str(tmp_path / "cli" / "config"))
    return CliRunner()
