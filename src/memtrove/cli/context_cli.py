"""``memtrove update-context``: per-folder ``CLAUDE.md`` files from the vault's decisions and
sessions, opt-in with ``directory_context: true`` in ``config.yaml`` (ClawMem's spelling
``directoryContext`` is read too)."""

from __future__ import annotations

import typer

from memtrove.cli.common import console, fail, open_vault, print_json, user_errors
from memtrove.cli.lean.output import printable
from memtrove.config import CollectionConfig
from memtrove.vault.context_files import update_directory_context

__all__ = ["register", "update_context"]

SETTING = "directory_context"
_SPELLINGS = (SETTING, "directoryContext")


def register(app: typer.Typer) -> None:
    app.command("update-context")(update_context)


def update_context(
    ctx: typer.Context, as_json: bool = typer.Option(False, "--json", help="Print JSON.")
) -> None:
    """Write each collection folder's CLAUDE.md block: the decisions (last 30 days) that
    name the folder and the recent sessions that changed files in it. Text above the
    block's marker is kept."""
    with open_vault(ctx, create=False) as vault, user_errors():
        config = CollectionConfig(vault.config_file)
        values = [config.section(name) for name in _SPELLINGS]
        given = [value for value in values if value is not None]
        if any(not isinstance(value, bool) for value in given):
            raise fail(f"{vault.config_file}: '{SETTING}' must be true or false")
        if not any(given):
            raise fail(
                f"update-context is off: set '{SETTING}: true' in {vault.config_file} "
                "to let memtrove write CLAUDE.md files into collection folders"
            )
        report = update_directory_context(vault)
    if as_json:
        print_json(report.to_dict())
        return
    for written in report.written:
        console.print(f"wrote {printable(written)}/CLAUDE.md", markup=False)
    console.print(
        f"{len(report.written)} CLAUDE.md written, {report.unchanged} folders unchanged "
        f"(of {report.folders})",
        markup=False,
    )
