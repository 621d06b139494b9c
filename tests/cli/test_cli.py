from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memtrove.cli import app
from tests.conftest import EXAMPLES, RESULT_FIELDS, write


def run(cli: CliRunner, *args: str, code: int = 0) -> str:
    result = cli.invoke(app, list(args))
    assert result.exit_code == code, (result.output, result.stderr)
    return result.output


def test_init_and_path(cli: CliRunner, tmp_path: Path) -> None:
    assert "vault ready" in run(cli, "init")
    assert run(cli, "path").strip() == str(tmp_path / "cli" / "vault.sqlite")
    assert (tmp_path / "cli" / "vault.sqlite").exists()


def test_global_vault_option_wins(cli: CliRunner, tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite"
    assert run(cli, "--vault", str(other), "path").strip() == str(other)


def test_bootstrap_search_get_list_status(cli: CliRunner) -> None:
    out = run(cli, "bootstrap", str(EXAMPLES), "--name", "demo")
    assert "+30 ~0 =0 -0" in out
    assert "already covers" in run(cli, "bootstrap", str(EXAMPLES), "--name", "demo")

    payload = json.loads(run(cli, "search", "refresh", "token", "rotation", "-n", "3", "--json"))
    assert payload["query"] == "refresh token rotation"
    assert len(payload["results"]) == 3
    first = payload["results"][0]
    assert set(first) == RESULT_FIELDS
    human = run(cli, "search", "refresh token rotation", "-n", "2")
    assert first["path"] in human and " 1. " in human

    text = run(
        cli, "get", "#" + first["docid"], "--from-line", "2", "--max-lines", "3", "--line-numbers"
    )
    assert [line.split()[0] for line in text.splitlines()] == ["2", "3", "4"]
    as_json = json.loads(run(cli, "get", f"demo/{first['path']}", "--json"))
    assert as_json["docid"] == first["docid"] and as_json["total_lines"] > 3

    listed = json.loads(run(cli, "list", "-n", "4", "-c", "demo", "--json"))
    assert len(listed) == 4 and {"confidence", "access_count"} <= set(listed[0])
    status = json.loads(run(cli, "status", "--json"))
    assert status["documents"] == 30
    assert "30 active" in run(cli, "status")
    assert "demo" in run(cli, "collection", "list")
    assert json.loads(run(cli, "collection", "list", "--json"))[0]["documents"] == 30


def test_filters_and_min_score(cli: CliRunner) -> None:
    run(cli, "bootstrap", str(EXAMPLES), "--name", "demo")
    decisions = json.loads(run(cli, "search", "token", "-t", "decision", "--json"))["results"]
    assert decisions and {r["content_type"] for r in decisions} == {"decision"}
    assert json.loads(run(cli, "search", "token", "--min-score", "0.99", "--json"))["results"] == []
    assert json.loads(run(cli, "search", "token", "-c", "demo,other", "--json"))["results"]
    assert "no results" in run(cli, "search", "zzzzqqq")


def test_update_reports_skips_and_json(cli: CliRunner, notes: Path) -> None:
    write(notes, "good.md", "# Good\n\nfine")
    write(notes, "bin.md", b"\x00\x01binary")
    run(cli, "collection", "add", str(notes), "--name", "n")
    out = run(cli, "update")
    assert "+1 ~0 =0 -0" in out and "skipped 1: binary file" in out and "n/bin.md" not in out
    report = json.loads(run(cli, "update", "--json"))
    assert report["summary"] == "+0 ~0 =1 -0" and report["skipped"][0]["reason"] == "binary file"
    assert "removed collection n" in run(cli, "collection", "remove", "n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("get", "#ffffff"), "no document '#ffffff'"),
        (("collection", "add", "/definitely/not/here"), "does not exist"),
        (("collection", "remove", "ghost"), "no collection named 'ghost'"),
        (("update", "-c", "ghost"), "no collection named 'ghost'"),
        (("search", "x", "-t", "bogus"), "unknown content type"),
        (("search", "x", "--since", "yesterday"), "ISO date"),
    ],
)
def test_user_errors_are_one_line_exit_1(
    cli: CliRunner, args: tuple[str, ...], message: str
) -> None:
    assert cli.invoke(app, ["init"]).exit_code == 0
    result = cli.invoke(app, list(args))
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert result.stderr.startswith("memtrove: error: ")
    assert "Traceback" not in result.output


def test_usage_errors_exit_2(cli: CliRunner) -> None:
    assert cli.invoke(app, ["search"]).exit_code == 2
    assert cli.invoke(app, ["search", "x", "-n", "0"]).exit_code == 2
    assert cli.invoke(app, ["no-such-command"]).exit_code == 2


@pytest.mark.parametrize(
    "args",
    [
        ("search", "refresh token"),
        ("vsearch", "refresh token"),
        ("query", "refresh token"),
        ("get", "#abcdef"),
        ("list",),
        ("status",),
        ("intent-search", "why did we choose it"),
        ("kg", "postgres"),
        ("collection", "list"),
        ("lifecycle", "status"),
        ("export", "out.jsonl"),
    ],
)
def test_a_read_command_never_creates_a_vault(
    cli: CliRunner, tmp_path: Path, args: tuple[str, ...]
) -> None:
    vault = tmp_path / "elsewhere" / "vault.sqlite"
    result = cli.invoke(app, ["--vault", str(vault), *args])
    assert result.exit_code == 1, result.output
    assert result.stderr == (
        f"memtrove: error: no vault at {vault}: create one with `memtrove init` or "
        "`memtrove bootstrap FOLDER`, or name yours with --vault or MEMTROVE_VAULT\n"
    )
    assert not vault.exists() and not vault.parent.exists()
