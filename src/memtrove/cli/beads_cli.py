"""``memtrove beads sync``: a project's Beads issues (``bd list --json``) into the vault."""

from __future__ import annotations

from pathlib import Path

import typer

from memtrove.cli.common import console, open_vault, print_json, user_errors
from memtrove.cli.lean.output import printable
from memtrove.vault.beads import beads_area

__all__ = ["app", "register"]

app = typer.Typer(
    help="Beads issues (the bd issue tracker) as searchable memories.",
    no_args_is_help=True,
)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="beads")


@app.command("sync")
def sync(
    ctx: typer.Context,
    project: Path | None = typer.Option(
        None, "--project", "-p", help="The project folder holding .beads/ (default: here)."
    ),
    timeout: float = typer.Option(
        30.0, "--timeout", min=1, max=600, help="Seconds bd may take (1-600)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Run `bd list --json --limit 0` in the project and index its issues: one document
    per issue, causal/supporting/semantic edges from their dependencies."""
    with open_vault(ctx) as vault, user_errors():
        report = beads_area(vault).sync(project, timeout=timeout)
    if as_json:
        print_json(report.to_dict())
        return
    console.print(
        f"beads: {printable(report.project)}: {printable(report.summary())}", markup=False
    )
