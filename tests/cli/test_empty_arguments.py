"""An empty path argument (an unset shell variable: ``memtrove mine "$DIR"``) is a usage
error, never the current folder that ``Path("")`` names; a backfill of a collection that
holds nothing says so."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from memtrove.cli import app


@pytest.mark.parametrize(
    "arguments",
    [
        ["mine", ""],
        ["mine", " ", "--dry-run"],
        ["collection", "add", ""],
        ["bootstrap", "", "--skip-embed"],
        ["import", "clawmem", ""],
        ["import", ""],
    ],
)
def test_an_empty_path_is_refused(
    cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, arguments: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # what an empty path used to name
    (tmp_path / "note.md").write_text("# A note\n\nAbout caching.\n", encoding="utf-8")
    result = cli.invoke(app, arguments)
    assert result.exit_code == 2
    assert "empty" in result.output and "Traceback" not in result.output
    config = tmp_path / "cli" / "config" / "config.yaml"
    assert not config.exists() or str(tmp_path) not in config.read_text(encoding="utf-8")


def test_backfill_of_a_collection_that_holds_nothing(cli: CliRunner, tmp_path: Path) -> None:
    result = cli.invoke(app, ["mine", str(tmp_path), "--backfill-dates", "-c", "nowhere"])
    assert result.exit_code == 1
    assert "no documents were mined into 'nowhere'" in result.output
