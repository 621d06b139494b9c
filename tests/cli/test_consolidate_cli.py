"""``memtrove consolidate`` and ``reflect`` in-process: duplicate mode, usage errors, and
what they print."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memtrove.cli import app


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--apply"], "--apply goes with N or --duplicates"),
        (["5", "--apply", "--dry-run"], "--apply and --dry-run contradict each other"),
        (["--duplicates", "--loop"], "N and --duplicates take neither --loop nor --no-llm"),
        (["0"], "N must be from 1 to 10000"),
    ],
)
def test_usage_errors(cli: CliRunner, arguments: list[str], message: str) -> None:
    result = cli.invoke(app, ["consolidate", *arguments])
    assert result.exit_code == 2
    assert result.output == f"memtrove: error: {message}\n"


def test_duplicates_and_reflect_print(cli: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("# A\n\nOspreys.\n", encoding="utf-8")
    assert cli.invoke(app, ["collection", "add", str(tmp_path / "notes")]).exit_code == 0
    assert cli.invoke(app, ["update"]).exit_code == 0
    result = cli.invoke(app, ["consolidate", "--duplicates"])
    assert result.exit_code == 0
    assert result.output == (
        "dry run: nothing archived; 0 low-confidence document(s) checked, 0 duplicate(s), "
        "0 archived\n"
    )
    data = json.loads(cli.invoke(app, ["consolidate", "10", "--apply", "--json"]).output)
    assert data == {"checked": 0, "pairs": [], "archived": 0, "dry_run": False}
    light = json.loads(cli.invoke(app, ["consolidate", "--dry-run", "--json"]).output)
    assert light["consolidated_observations"] == []
    reflected = cli.invoke(app, ["reflect"])
    assert reflected.exit_code == 0 and "consolidated patterns: none" in reflected.output
    assert json.loads(cli.invoke(app, ["reflect", "--json"]).output)["patterns"] == []
