"""``memtrove lifecycle status|sweep|search|restore|purge``: archive what the ``lifecycle:``
policy of ``config.yaml`` says is unused, find and restore archived documents, purge them."""

from __future__ import annotations

import typer

from memtrove.cli.common import console, fail, open_vault, print_json, print_report, user_errors

__all__ = ["app"]

app = typer.Typer(
    help="Archive unused documents by policy; search, restore or purge archived ones.",
    no_args_is_help=True,
)


@app.command("status")
def status(
    ctx: typer.Context, as_json: bool = typer.Option(False, "--json", help="Print JSON.")
) -> None:
    """Counts (active, archived, forgotten, pinned, snoozed, ...), pin and snooze
    candidates from recall telemetry, and the policy."""
    with open_vault(ctx, create=False) as vault, user_errors():
        found = vault.lifecycle.status()
    print_report(found, as_json)


@app.command("sweep")
def sweep(
    ctx: typer.Context,
    apply: bool = typer.Option(False, "--apply", help="Archive them (default: a dry run)."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Only list what would be archived (the default)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List the documents the policy archives; --apply archives them (and purges archived
    ones past purge_after_days). Recall statistics are recomputed first."""
    if apply and dry_run:
        raise fail("--apply and --dry-run contradict each other", 2)
    with open_vault(ctx) as vault, user_errors():
        report = vault.lifecycle.sweep(apply=apply)
    print_report(report, as_json)


@app.command("search")
def search(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="What to look for (search syntax)."),
    limit: int = typer.Option(10, "--limit", "-n", help="Most results (1-1000)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Search archived documents only (BM25)."""
    with open_vault(ctx) as vault, user_errors():
        found = vault.lifecycle.search(query, limit)
    if as_json:
        print_json({"count": len(found), "results": [item.to_dict() for item in found]})
        return
    if not found:
        console.print("no archived documents match", markup=False)
    for item in found:
        console.print(
            f"{item.score:.2f}  #{item.docid} {item.collection}/{item.path}  {item.title}  "
            f"(archived {item.archived_at})",
            markup=False,
        )


@app.command("restore")
def restore(
    ctx: typer.Context,
    query: str | None = typer.Option(None, "--query", "-q", help="Those matching this."),
    collection: str | None = typer.Option(None, "--collection", "-c", help="Those of this."),
    every: bool = typer.Option(False, "--all", help="Every archived document."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Make archived documents active and searchable again."""
    if query is None and collection is None and not every:
        raise fail("say what to restore: --query Q, --collection C or --all", 2)
    with open_vault(ctx) as vault, user_errors():
        report = vault.lifecycle.restore(query=query, collection=collection, all=every)
    print_report(report, as_json)


@app.command("purge")
def purge(
    ctx: typer.Context,
    yes: bool = typer.Option(False, "--yes", help="Confirm: delete them for good."),
    query: str | None = typer.Option(None, "--query", "-q", help="Only those matching this."),
    collection: str | None = typer.Option(None, "--collection", "-c", help="Only those of this."),
    older_than: int | None = typer.Option(
        None, "--older-than", help="Only those archived more than this many days ago."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Delete archived documents for good (never active ones); needs --yes."""
    if not yes:
        raise fail("purge deletes archived documents for good: add --yes to confirm", 2)
    with open_vault(ctx) as vault, user_errors():
        report = vault.lifecycle.purge(
            confirm=True, query=query, collection=collection, older_than_days=older_than
        )
    print_report(report, as_json)
