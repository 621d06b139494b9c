"""The lean read commands' parser: click's rules for what it takes, the Typer CLI for the rest."""

from __future__ import annotations

import inspect

import pytest

from memtrove.cli import retrieval
from memtrove.cli.lean import understood
from memtrove.cli.lean.parsing import NotUnderstood, parse
from memtrove.vault import Vault


def test_defaults_are_the_typer_commands() -> None:
    """Left out, ``--candidate-limit`` is Vault.query's default, as the Typer command's is."""
    typer_default = inspect.signature(retrieval.query).parameters["candidate_limit"].default
    vault_default = inspect.signature(Vault.query).parameters["candidate_limit"].default
    assert typer_default.default == vault_default
    parsed = parse(["query", "a", "b"])
    assert (parsed.command, parsed.vault, parsed.arguments) == ("query", None, ["a", "b"])
    assert parsed.options == {
        "limit": 10,
        "collection": None,
        "content_type": None,
        "since": None,
        "until": None,
        "min_score": 0.0,
        "as_json": False,
        "intent": None,
        "full": False,
        "diverse": True,
        "candidate_limit": None,
    }
    assert parse(["get", "#abc"]).options == {
        "from_line": 1,
        "max_lines": None,
        "line_numbers": False,
        "as_json": False,
    }
    assert parse(["status"]).options == {"as_json": False}


@pytest.mark.parametrize(
    ("argv", "arguments", "options"),
    [
        (["search", "a", "-n", "3", "b"], ["a", "b"], {"limit": 3}),
        (["search", "a", "-n3", "--num=4", "--limit", "5"], ["a"], {"limit": 5}),
        (
            ["search", "-c", "x", "a", "-cy,z", "--collection=w"],
            ["a"],
            {"collection": ["x", "y,z", "w"]},
        ),
        (
            ["search", "a", "-t", "note", "--type", "decision"],
            ["a"],
            {"content_type": ["note", "decision"]},
        ),
        (["search", "a", "--since", "-3d", "--until="], ["a"], {"since": "-3d", "until": ""}),
        (
            ["search", "a", "--min-score", "0.25", "--json"],
            ["a"],
            {"min_score": 0.25, "as_json": True},
        ),
        (["search", "--", "-n", "--json"], ["-n", "--json"], {"limit": 10, "as_json": False}),
        (["search", "-", "a"], ["-", "a"], {}),
        (["query", "a", "--no-diverse", "--diverse", "--no-diverse"], ["a"], {"diverse": False}),
        (["query", "a", "--intent", "--json", "--full"], ["a"], {"intent": "--json", "full": True}),
        (["query", "a", "--candidate-limit", "1000"], ["a"], {"candidate_limit": 1000}),
        (
            ["get", "--from-line", "2", "x/y.md", "--max-lines=1"],
            ["x/y.md"],
            {"from_line": 2, "max_lines": 1},
        ),
        (["status", "--json"], [], {"as_json": True}),
    ],
)
def test_command_lines_it_takes(
    argv: list[str], arguments: list[str], options: dict[str, object]
) -> None:
    parsed = parse(argv)
    assert parsed.arguments == arguments
    assert {key: parsed.options[key] for key in options} == options


def test_the_global_vault_option() -> None:
    assert parse(["--vault", "v.sqlite", "status"]).vault == "v.sqlite"
    assert parse(["--vault=a", "--vault", "b", "status"]).vault == "b"
    assert parse(["--vault", "-odd", "status"]).vault == "-odd"


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["list"],
        ["--version", "search", "a"],
        ["--vault", "", "search", "a"],
        ["--vault"],
        ["-h", "search"],
        ["search"],
        ["search", "--help"],
        ["search", "a", "-h"],
        ["search", "a", "--vault", "x"],
        ["search", "a", "--bogus"],
        ["search", "a", "-x"],
        ["search", "a", "-5"],
        ["search", "a", "-n"],
        ["search", "a", "-n", "0"],
        ["search", "a", "-n", "1001"],
        ["search", "a", "-n", "07"],
        ["search", "a", "-n", "1_0"],
        ["search", "a", "-n", " 5"],
        ["search", "a", "-n=5"],
        ["search", "a", "--min-score", "1.5"],
        ["search", "a", "--min-score", "nan"],
        ["search", "a", "--min-score", "1e-3"],
        ["search", "a", "--json=1"],
        ["search", "a", "--full"],
        ["query", "a", "--candidate-limit", "0"],
        ["get"],
        ["get", "a", "b"],
        ["get", "a", "--from-line", "0"],
        ["get", "a", "--max-lines", "-1"],
        ["status", "x"],
    ],
)
def test_command_lines_left_to_typer(argv: list[str]) -> None:
    with pytest.raises(NotUnderstood):
        parse(argv)
    assert understood(argv) is None


def test_switches_that_leave_everything_to_typer() -> None:
    assert understood(["status"], {}) is not None
    assert understood(["status"], {"MEMTROVE_LEAN": "off"}) is None
    assert understood(["status"], {"_MEMTROVE_COMPLETE": "bash_source"}) is None
