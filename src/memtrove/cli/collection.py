"""``memtrove collection add|list|remove``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from memtrove.cli.common import console, fail, given_path, open_vault, print_json
from memtrove.config import DEFAULT_PATTERN, check_stale_after_days
from memtrove.results import StaleAfterDays

app = typer.Typer(help="Manage the folders the vault indexes.", no_args_is_help=True)


@app.command("add")
def add(
    ctx: typer.Context,
    path: Path = typer.Argument(..., help="Folder of markdown to index.", parser=given_path),
    name: str | None = typer.Option(None, "--name", help="Name (default: the folder's name)."),
    pattern: str = typer.Option(DEFAULT_PATTERN, "--pattern", help="Glob of files to index."),
    exclude: list[str] | None = typer.Option(
        None, "--exclude", help="Glob never indexed, e.g. '**/*.ru.md' (repeatable)."
    ),
    no_surface: bool = typer.Option(
        False, "--no-surface", help="Searchable, but never injected automatically by hooks."
    ),
    stale_after_days: str = typer.Option(
        "auto", "--stale-after-days", help="Days until stale, 'none' (never) or 'auto'."
    ),
) -> None:
    """Add a collection; `memtrove update` indexes it."""
    stale = _stale_after_days(stale_after_days)
    with open_vault(ctx) as vault:
        collection = vault.add_collection(
            path,
            name=name,
            pattern=pattern,
            exclude=exclude or (),
            surface=not no_surface,
            stale_after_days=stale,
        )
    console.print(
        f"added collection {collection.name}: {collection.path} ({collection.pattern})",
        markup=False,
    )
    settings = []
    if collection.exclude:
        settings.append("exclude " + ", ".join(collection.exclude))
    if not collection.surface:
        settings.append("surface false")
    if collection.stale_after_days != "auto":
        settings.append(f"stale_after_days {collection.stale_after_days or 'none'}")
    if settings:
        console.print("  " + "; ".join(settings), markup=False)
    console.print("run `memtrove update` to index it")


def _stale_after_days(value: str) -> StaleAfterDays:
    try:
        return check_stale_after_days(value)
    except ValueError as error:
        raise fail(f"--stale-after-days {error}", code=2) from None


@app.command("list")
def list_collections(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List collections with their paths, patterns and document counts."""
    with open_vault(ctx, create=False) as vault:
        status = vault.status()
    if as_json:
        print_json([c._asdict() for c in status.collections])
        return
    if not status.collections:
        console.print("no collections yet: memtrove collection add <path>")
        return
    table = Table("name", "documents", "pattern", "path", box=None)
    for c in status.collections:
        path = c.path if c.path_exists else f"{c.path} (missing)"
        table.add_row(c.name, str(c.documents), c.pattern, path)
    console.print(table)


@app.command("remove")
def remove(ctx: typer.Context, name: str = typer.Argument(..., help="Collection name.")) -> None:
    """Remove a collection; its documents leave search results."""
    with open_vault(ctx) as vault:
        vault.remove_collection(name)
    console.print(f"removed collection {name}")
