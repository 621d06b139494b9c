"""``memtrove search|list|get``."""

from __future__ import annotations

import typer

from memtrove.cli.common import (
    console,
    fail,
    open_vault,
    print_json,
    print_results,
    search_with,
    split_collections,
)
from memtrove.cli.lean.output import echo_lines
from memtrove.cli.lean.views import selected_lines


def register(app: typer.Typer) -> None:
    app.command("search")(search)
    app.command("list")(list_documents)
    app.command("get")(get)


def search(
    ctx: typer.Context,
    query: list[str] = typer.Argument(..., help="What to look for."),
    limit: int = typer.Option(10, "-n", "--num", "--limit", min=1, max=1000, help="Results."),
    collection: list[str] | None = typer.Option(
        None, "-c", "--collection", help="Only this collection (repeatable, or comma-separated)."
    ),
    content_type: list[str] | None = typer.Option(
        None, "-t", "--type", help="Only this content type (repeatable)."
    ),
    since: str | None = typer.Option(None, "--since", help="Authored/modified on or after."),
    until: str | None = typer.Option(None, "--until", help="Authored/modified on or before."),
    min_score: float = typer.Option(0.0, "--min-score", min=0.0, max=1.0, help="Score floor."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """BM25 keyword search over paths, titles and bodies."""
    text = " ".join(query)
    results = search_with(
        ctx,
        "search",
        text,
        limit=limit,
        collections=split_collections(collection),
        content_types=content_type or None,
        since=since,
        until=until,
        min_score=min_score,
    )
    if as_json:
        print_json({"query": text, **results.to_dict()})
        return
    print_results(results)


def list_documents(
    ctx: typer.Context,
    limit: int = typer.Option(10, "-n", "--num", "--limit", min=1, max=1000, help="How many."),
    collection: str | None = typer.Option(None, "-c", "--collection", help="Only this one."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """The most recently modified documents."""
    with open_vault(ctx, create=False) as vault:
        documents = vault.list(limit, collection)
    if as_json:
        print_json([d.to_dict() for d in documents])
        return
    for d in documents:
        console.print(
            f"#{d.docid}  {d.modified_at[:10]}  {d.content_type:<12} {d.collection}/{d.path}  "
            f"{d.title}",
            markup=False,
        )
    if not documents:
        console.print("no documents")


def get(
    ctx: typer.Context,
    reference: str = typer.Argument(..., help="#docid or collection/path."),
    from_line: int = typer.Option(1, "--from-line", min=1, help="First line to print (1-based)."),
    max_lines: int | None = typer.Option(None, "--max-lines", min=1, help="At most this many."),
    line_numbers: bool = typer.Option(False, "--line-numbers", help="Prefix line numbers."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (metadata and body)."),
) -> None:
    """Print a document's stored text."""
    with open_vault(ctx, create=False) as vault:
        document = vault.get(reference)
    selected, total = selected_lines(document.body, from_line, max_lines)
    if from_line > max(total, 1):
        raise fail(f"--from-line {from_line} is past the end ({total} lines)")
    if as_json:
        data = document.to_dict()
        data["body"] = "\n".join(selected)
        data["from_line"] = from_line
        data["total_lines"] = total
        print_json(data)
        return
    width = len(str(from_line + len(selected)))
    echo_lines(
        (
            f"{number:>{width}}  {line}" if line_numbers else line
            for number, line in enumerate(selected, from_line)
        ),
        stored=True,
    )
