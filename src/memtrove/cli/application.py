"""The ``memtrove`` Typer application: every command group registered on one app.

Every command opens the vault, calls one Vault method, and prints. memtrove's errors become
one line on stderr and exit status 1; usage errors exit 2. The read commands usually run
without it (see :mod:`memtrove.cli.lean`), which prints exactly what they print here.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from memtrove import __version__
from memtrove.cli import (
    agents,
    beads_cli,
    collection,
    consolidate_cli,
    curate,
    diary_cli,
    enrich_cli,
    evaluate,
    graph_build_cli,
    health,
    hooks_cli,
    hosts_cli,
    indexing,
    intent_cli,
    knowledge_cli,
    lifecycle_cli,
    memory_cli,
    mine_cli,
    portable_cli,
    profile_cli,
    reading,
    retrieval,
    rules_cli,
    serve,
    service_cli,
    watch_cli,
)
from memtrove.cli.common import CliState
from memtrove.cli.lean import finished
from memtrove.config import Settings
from memtrove.locations import is_server_url

__all__ = ["app", "main"]

app = typer.Typer(
    name="memtrove",
    help="Local-first memory for AI coding agents: index markdown, search it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"memtrove {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    vault: str | None = typer.Option(
        None,
        "--vault",
        envvar="MEMTROVE_VAULT",
        help="Vault file, or postgresql://... URL (env MEMTROVE_VAULT).",
    ),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    # A file's name is taken as a Path (which tidies its spelling); a URL never is.
    location = vault if vault is None or is_server_url(vault) else Path(vault)
    ctx.obj = CliState(Settings.from_env(vault=location))


app.add_typer(collection.app, name="collection")
indexing.register(app)
reading.register(app)
retrieval.register(app)
intent_cli.register(app)
health.register(app)
agents.register(app)
hooks_cli.register(app)
hosts_cli.register(app)
curate.register(app)
serve.register(app)
memory_cli.register(app)
knowledge_cli.register(app)
graph_build_cli.register(app)
enrich_cli.register(app)
consolidate_cli.register(app)
rules_cli.register(app)
portable_cli.register(app)
profile_cli.register(app)
mine_cli.register(app)
app.add_typer(evaluate.app, name="eval")
app.add_typer(lifecycle_cli.app, name="lifecycle")
watch_cli.register(app)
service_cli.register(app)
diary_cli.register(app)
beads_cli.register(app)


@app.command("help")
def help_command(
    ctx: typer.Context,
    command: list[str] = typer.Argument(None, help="A command, e.g. `eval run`."),
) -> None:
    """Print memtrove's help, or a command's (the same as `--help`)."""
    parent = ctx.find_root()
    target = parent.command
    for name in command or []:
        found = target.get_command(parent, name) if hasattr(target, "get_command") else None
        if found is None or found.hidden:
            shown = " ".join(command or [])
            raise typer.BadParameter(f"no command {shown!r}: see memtrove --help")
        parent = type(ctx)(found, info_name=name, parent=parent)
        target = found
    typer.echo(target.get_help(parent))


def main() -> None:
    """Console-script entry point: never a traceback for an unexpected failure."""
    try:
        app()
    except SystemExit as done:  # how app() ends: output still buffered must reach its reader
        sys.exit(finished(done.code))
    except Exception as error:  # last resort; known errors are handled per command
        if os.environ.get("MEMTROVE_DEBUG"):
            raise
        message = " ".join(str(error).split()) or type(error).__name__
        print(f"memtrove: error: unexpected {type(error).__name__}: {message}", file=sys.stderr)
        sys.exit(1)
