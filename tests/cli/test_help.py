"""``memtrove help [command...]``: the same text as ``--help``."""

from __future__ import annotations

from typer.testing import CliRunner

from memtrove.cli.application import app


def test_help_prints_what_dash_dash_help_prints() -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["help"]).output == runner.invoke(app, ["--help"]).output
    nested = runner.invoke(app, ["help", "eval", "run"])
    assert nested.exit_code == 0
    assert nested.output == runner.invoke(app, ["eval", "run", "--help"]).output


def test_help_on_an_unknown_command_is_a_usage_error() -> None:
    answer = CliRunner().invoke(app, ["help", "no-such"])
    assert answer.exit_code == 2 and "no command 'no-such'" in answer.output
