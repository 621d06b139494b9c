"""``memtrove init|bootstrap|update|status|path``."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from memtrove.cli import agents
from memtrove.cli.common import (
    console,
    fail,
    given_path,
    open_vault,
    print_json,
    state,
    user_errors,
)
from memtrove.cli.lean.output import error
from memtrove.cli.lean.views import print_status, print_update
from memtrove.cli.retrieval import print_embed_report, run_embed
from memtrove.config import CollectionConfig, cache_dir
from memtrove.errors import MemtroveError
from memtrove.index.embedding import EmbedReport
from memtrove.index.pull import DEFAULT_TIMEOUT, PullResult, run_update_command
from memtrove.locations import shown_location
from memtrove.results import UpdateReport
from memtrove.vault import Vault


def register(app: typer.Typer) -> None:
    app.command("init")(init)
    app.command("bootstrap")(bootstrap)
    app.command("update")(update)
    app.command("status")(status)
    app.command("path")(path)


def init(ctx: typer.Context) -> None:
    """Create the vault (and apply its schema) if it does not exist yet."""
    with open_vault(ctx) as vault:
        console.print(f"vault ready: {vault.location}")
        console.print(f"config: {vault.config_file}")
    console.print("next: memtrove collection add <folder>  then  memtrove update")


def bootstrap(
    ctx: typer.Context,
    folder: Path = typer.Argument(..., help="Folder of markdown to index.", parser=given_path),
    name: str | None = typer.Option(None, "--name", help="Collection name."),
    skip_embed: bool = typer.Option(False, "--skip-embed", help="Index only; embed later."),
    setup_claude: bool = typer.Option(
        False, "--setup-claude", help="Then connect Claude Code: setup hooks and setup mcp."
    ),
) -> None:
    """Create the vault, add FOLDER as a collection (or reuse it), index it and embed it."""
    with open_vault(ctx) as vault:
        resolved = folder.expanduser().resolve()
        existing = next(
            (c for c in vault.collections() if c.path == resolved and (name in (None, c.name))),
            None,
        )
        if existing is None:
            existing = vault.add_collection(folder, name=name)
            console.print(f"added collection {existing.name}: {existing.path}")
        else:
            console.print(f"collection {existing.name} already covers {existing.path}")
        report = _run_update(vault, [existing.name])
        print_update(report)
        embedded = None if skip_embed else _embed_after_update(vault, report, as_json=False)
    if embedded is not None:
        print_embed_report(embedded)
    if setup_claude:
        agents.setup_claude(ctx)
    if embedded is not None and embedded.errors:
        raise typer.Exit(1)


def update(
    ctx: typer.Context,
    collection: list[str] | None = typer.Option(
        None, "--collection", "-c", help="Only this collection (repeatable)."
    ),
    embed: bool = typer.Option(False, "--embed", help="Then embed what is new or changed."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="List every skipped file under its reason."
    ),
    pull: bool = typer.Option(
        False, "--pull", help="First run each collection's `update:` command in its folder."
    ),
    pull_timeout: float = typer.Option(
        DEFAULT_TIMEOUT, "--pull-timeout", min=1, help="Seconds each `update:` command may take."
    ),
) -> None:
    """Index what changed in every collection: +added ~updated =unchanged -removed, then one
    line per skip reason with its count (`skipped 3: larger than 5 MB`). With --pull, each
    collection's `update:` command (config.yaml) runs first; a failed one is one line on
    stderr and exit status 1, and every collection is indexed all the same."""
    with open_vault(ctx) as vault:
        pulled = _pull(vault, collection or None, pull_timeout, quiet=as_json) if pull else []
        report = _run_update(vault, collection or None, show_progress=not as_json)
        if not as_json:
            print_update(report, verbose=verbose)
        from memtrove.cli.lean.output import warning
        from memtrove.vault.profile import refresh_after_update

        refresh_after_update(vault, warning)  # a stale user profile is rebuilt
        embedded = _embed_after_update(vault, report, as_json=as_json) if embed else None
    if as_json:
        data = report.to_dict()
        if pull:
            data["pull"] = [result.to_dict() for result in pulled]
        if embedded is not None:
            data["embed"] = embedded.to_dict()
        print_json(data)
    elif embedded is not None:
        print_embed_report(embedded)
    if (embedded is not None and embedded.errors) or any(not result.ok for result in pulled):
        raise typer.Exit(1)


def _pull(
    vault: Vault, names: list[str] | None, timeout: float, *, quiet: bool
) -> list[PullResult]:
    """Run the ``update:`` command of each chosen collection that has one, in its folder;
    a failure is one line on stderr (the command's output is in update.log)."""
    with user_errors():
        commands = CollectionConfig(vault.config_file).update_commands()
        collections = vault.collections()
    chosen = [c for c in collections if names is None or c.name in names]
    log_file = cache_dir() / "update.log"
    results: list[PullResult] = []
    for item in chosen:
        command = commands.get(item.name)
        if command is None:
            continue
        result = run_update_command(
            item.name, item.path, command, timeout=timeout, log_file=log_file
        )
        results.append(result)
        if not result.ok:
            error(f"collection {item.name}: update command failed: {result.error} (see {log_file})")
        elif not quiet:
            shown = f"pulled {item.name}" + (f": {result.output}" if result.output else "")
            console.print(shown, markup=False)
    return results


def _embed_after_update(vault: Vault, report: UpdateReport, *, as_json: bool) -> EmbedReport:
    """Embed after an update; a failure is one line and exit 1, and the update stays done."""
    try:
        return run_embed(vault, show_progress=not as_json)
    except MemtroveError as error:
        if as_json:
            print_json({**report.to_dict(), "embed": {"error": str(error)}})
        raise fail(f"{error} (the index itself is up to date)") from None


@contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[int, int, str], None] | None]:
    if not (enabled and sys.stderr.isatty()):
        yield None
        return
    columns = (
        TextColumn("indexing"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
    )
    with Progress(*columns, transient=True, console=None) as bar:
        task = bar.add_task("", total=None)

        def advance(done: int, total: int, current: str) -> None:
            bar.update(task, completed=done, total=total, description=current[-40:])

        yield advance


def _run_update(
    vault: Vault, collections: list[str] | None, *, show_progress: bool = True
) -> UpdateReport:
    with _progress(show_progress) as progress:
        return vault.update(collections, progress=progress)


def status(
    ctx: typer.Context, as_json: bool = typer.Option(False, "--json", help="Print JSON.")
) -> None:
    """Vault path, size, schema, document counts per collection and content type."""
    with open_vault(ctx, create=False) as vault:
        info = vault.status()
    if as_json:
        print_json(info.to_dict())
        return
    print_status(info)  # the lean path's printer: one format for both


def path(ctx: typer.Context) -> None:
    """Print the vault file's path (a server vault's URL, without its password)."""
    typer.echo(shown_location(state(ctx).settings.vault_path))
