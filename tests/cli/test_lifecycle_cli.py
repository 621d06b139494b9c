"""``memtrove lifecycle`` in-process: usage errors are one line and exit 2, and what status,
sweep and search print (real runs against a vault: tests/e2e/test_lifecycle_processes.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memtrove.cli import app
from tests.conftest import write


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["restore"], "say what to restore: --query Q, --collection C or --all"),
        (["purge"], "purge deletes archived documents for good: add --yes to confirm"),
        (["sweep", "--apply", "--dry-run"], "--apply and --dry-run contradict each other"),
    ],
)
def test_usage_errors(cli: CliRunner, arguments: list[str], message: str) -> None:
    result = cli.invoke(app, ["lifecycle", *arguments])
    assert result.exit_code == 2
    assert result.output == f"memtrove: error: {message}\n"


def test_status_sweep_and_search_print(cli: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / "notes", "a.md", "# A\n\nA note about ospreys.\n")
    assert cli.invoke(app, ["collection", "add", str(tmp_path / "notes")]).exit_code == 0
    assert cli.invoke(app, ["update"]).exit_code == 0
    status = cli.invoke(app, ["lifecycle", "status"])
    assert status.exit_code == 0 and status.output.startswith("active 1, inactive 0, archived 0")
    sweep = cli.invoke(app, ["lifecycle", "sweep"])
    assert sweep.output.endswith("dry run: 0 documents would be archived (--apply archives them)\n")
    found = cli.invoke(app, ["lifecycle", "search", "ospreys"])
    assert found.exit_code == 0 and found.output == "no archived documents match\n"
    data = json.loads(cli.invoke(app, ["lifecycle", "search", "ospreys", "--json"]).output)
    assert data == {"count": 0, "results": []}
    bad = cli.invoke(app, ["lifecycle", "search", '"'])
    assert bad.exit_code == 1 and bad.output.startswith("memtrove: error: ")
