"""`memtrove collection add` with per-collection settings, and what `update` says it skipped."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from memtrove.cli import app
from tests.cli.test_cli import run
from tests.conftest import write


def config(tmp_path: Path) -> dict[str, object]:
    data = yaml.safe_load((tmp_path / "cli" / "config" / "config.yaml").read_text())
    assert isinstance(data, dict)
    return data


def messy_folder(notes: Path) -> None:
    write(notes, "good.md", "# Good\n\nfine")
    write(notes, "other.md", "# Other\n\nfine too")
    for index in range(3):
        write(notes, f"guide-{index}.ru.md", "# Guide\n\nin Russian")
    write(notes, "i18n/de/guide.md", "# Guide\n\nin German")
    write(notes, "bin.md", b"\x00\x01binary")
    big = notes / "big.md"
    with big.open("wb") as handle:
        handle.truncate(5 * 1024 * 1024 + 1)


def test_collection_add_sets_the_per_collection_keys(
    cli: CliRunner, notes: Path, tmp_path: Path
) -> None:
    out = run(
        cli, "collection", "add", str(notes), "--name", "docs",
        "--exclude", "**/*.ru.md", "--exclude", "i18n/", "--no-surface",
        "--stale-after-days", "none",
    )  # fmt: skip
    assert "added collection docs" in out
    assert "exclude **/*.ru.md, i18n; surface false; stale_after_days none" in out
    entry = config(tmp_path)["collections"]["docs"]  # type: ignore[index]
    assert entry == {
        "path": str(notes.resolve()),
        "pattern": "**/*.md",
        "exclude": ["**/*.ru.md", "i18n"],
        "surface": False,
        "stale_after_days": None,
    }
    run(cli, "collection", "add", str(notes), "--name", "logs", "--stale-after-days", "30")
    assert config(tmp_path)["collections"]["logs"]["stale_after_days"] == 30  # type: ignore[index]
    run(cli, "collection", "add", str(notes), "--name", "plain")
    assert set(config(tmp_path)["collections"]["plain"]) == {"path", "pattern"}  # type: ignore[index]


def test_collection_add_refuses_a_bad_setting_in_one_line(cli: CliRunner, notes: Path) -> None:
    result = cli.invoke(app, ["collection", "add", str(notes), "--stale-after-days", "soon"])
    assert result.exit_code == 2
    assert result.stderr.startswith("memtrove: error: --stale-after-days must be a number")
    assert result.stderr.count("\n") == 1
    result = cli.invoke(app, ["collection", "add", str(notes), "--exclude", " "])
    assert result.exit_code == 1 and "exclude glob ' ' is empty" in result.stderr


def test_update_prints_one_line_per_skip_reason(cli: CliRunner, notes: Path) -> None:
    messy_folder(notes)
    run(cli, "collection", "add", str(notes), "--name", "n", "--exclude", "**/*.ru.md",
        "--exclude", "i18n/**")  # fmt: skip
    out = run(cli, "update")
    lines = out.splitlines()
    assert lines[0].startswith("+2 ~0 =0 -0")
    assert lines[1:] == [
        "skipped 4: excluded by pattern",
        "skipped 1: binary file",
        "skipped 1: larger than 5 MB",
    ]
    verbose = run(cli, "update", "--verbose").splitlines()
    assert verbose[1:] == [
        "skipped 4: excluded by pattern",
        "  n/guide-0.ru.md",
        "  n/guide-1.ru.md",
        "  n/guide-2.ru.md",
        "  n/i18n/de/guide.md",
        "skipped 1: binary file",
        "  n/bin.md",
        "skipped 1: larger than 5 MB",
        "  n/big.md (5,242,881 bytes)",
    ]
    report = json.loads(run(cli, "update", "--json"))
    assert report["skipped_by_reason"] == {
        "excluded by pattern": 4,
        "binary file": 1,
        "larger than 5 MB": 1,
    }
    assert len(report["skipped"]) == 6 and report["summary"] == "+0 ~0 =2 -0"


def test_update_with_nothing_skipped_prints_only_the_summary(cli: CliRunner, notes: Path) -> None:
    write(notes, "a.md", "# A\n\nfine")
    run(cli, "collection", "add", str(notes), "--name", "n")
    assert len(run(cli, "update", "-v").splitlines()) == 1
    assert json.loads(run(cli, "update", "--json"))["skipped_by_reason"] == {}


def test_a_bad_key_in_config_yaml_fails_update_in_one_line(
    cli: CliRunner, notes: Path, tmp_path: Path
) -> None:
    run(cli, "collection", "add", str(notes), "--name", "docs")
    path = tmp_path / "cli" / "config" / "config.yaml"
    path.write_text(path.read_text() + "    surface: sometimes\n")
    result = cli.invoke(app, ["update"])
    assert result.exit_code == 1
    assert result.stderr == (
        f"memtrove: error: {path}: collection 'docs': 'surface' must be true or false, "
        "not 'sometimes'\n"
    )
