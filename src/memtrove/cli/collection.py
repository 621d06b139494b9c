"""``memtrove collection add|list|remove``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from memtrove.cli.common import console, open_vault, print_json
from memtrove.config import DEFAULT_PATTERN

app = typer.Typer(help="Manage the folders the vault indexes.", no_args_is_help=True)


@app.command("add")
def add(
    ctx: typer.Context,
    path: Path = typer.Argument(..., help="Folder of markdown to index."),
    name: str | None = typer.Option(None, "--name", help="Name (default: the folder's name)."),
    pattern: str = typer.Option(DEFAULT_PATTERN, "--pattern", help="Glob of files to index."),
) -> None:
    """Add a collection; `memtrove update` indexes it."""
    with open_vault(ctx) as vault:
        collection = vault.add_collection(path, name=name, pattern=pattern)
    console.print(f"added collection {collection.name}: {collection.path} ({collection.pattern})")
    console.print("run `memtrove update` to index it")


@app.command("list")
def list_collections(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List collections with their paths, patterns and document counts."""
    with open_vault(ctx) as vault:
        status = vault.status()
    if as_json:
        print_json([c.__dict__ for c in status.collections])
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
