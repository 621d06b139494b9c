"""``memtrove intent-search|causal|plan``: intent-aware retrieval over the vault's graph."""

from __future__ import annotations

import typer

from memtrove.cli.common import console, open_vault, print_json, print_results, split_collections
from memtrove.cli.lean.views import print_stages

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    app.command("intent-search")(intent_search)
    app.command("causal")(causal)
    app.command("plan")(plan)


def intent_search(
    ctx: typer.Context,
    query: list[str] = typer.Argument(..., help="The question."),
    limit: int = typer.Option(10, "-n", "--num", "--limit", min=1, max=1000, help="Results."),
    force_intent: str | None = typer.Option(
        None, "--intent", "--force-intent", help="WHY, WHEN, ENTITY or WHAT (skip classifying)."
    ),
    no_graph: bool = typer.Option(False, "--no-graph", help="No graph traversal."),
    collection: list[str] | None = typer.Option(
        None, "-c", "--collection", help="Only this collection (repeatable, or comma-separated)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Classify the question (WHY/WHEN/ENTITY/WHAT) and search for it; WHY and ENTITY
    questions follow the graph's edges from the top results."""
    text = " ".join(query)
    with open_vault(ctx, create=False) as vault:
        results = vault.intent.intent_search(
            text,
            limit,
            force_intent=force_intent,
            enable_graph_traversal=not no_graph,
            collections=split_collections(collection),
        )
    if as_json:
        print_json({"query": text, **results.to_dict()})
        return
    found = results.classification
    dates = f", dates {found.temporal_start}..{found.temporal_end}" if found.temporal_start else ""
    console.print(
        f"intent: {found.intent} ({found.confidence:.2f}, {found.source}{dates})", markup=False
    )
    print_results(results)
    print_stages(results.stages, results.skipped)


def causal(
    ctx: typer.Context,
    ref: str = typer.Argument(..., help="#docid, docid, or collection/path."),
    direction: str = typer.Option(
        "both", "-d", "--direction", help="causes (what it led to), caused_by, or both."
    ),
    depth: int = typer.Option(5, "--depth", min=1, max=10, help="Hops to follow (1-10)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """The causal chain through a document (memory_relations causal edges)."""
    with open_vault(ctx, create=False) as vault:
        links = vault.intent.find_causal_links(ref, direction, depth)
    if as_json:
        print_json(links.to_dict())
        return
    console.print(f"#{links.docid} {links.title}: {len(links)} causal links", markup=False)
    for link in links:
        arrow = "led to" if link.direction == "causes" else "came from"
        other = (
            (link.target_docid, link.target_title)
            if link.direction == "causes"
            else (link.source_docid, link.source_title)
        )
        console.print(
            f"{'  ' * link.hop}{arrow} #{other[0]} {other[1]} (hop {link.hop}, "
            f"weight {link.weight:.2f})",
            markup=False,
        )


def plan(
    ctx: typer.Context,
    query: list[str] = typer.Argument(..., help="A question that may cover several topics."),
    limit: int = typer.Option(10, "-n", "--num", "--limit", min=1, max=1000, help="Results."),
    collection: list[str] | None = typer.Option(
        None, "-c", "--collection", help="Only this collection (repeatable, or comma-separated)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Split a multi-topic question into sub-queries, run each, merge with provenance."""
    text = " ".join(query)
    with open_vault(ctx, create=False) as vault:
        results = vault.intent.query_plan(text, limit, collections=split_collections(collection))
    if as_json:
        print_json({"query": text, **results.to_dict()})
        return
    for index, clause in enumerate(results.clauses):
        console.print(f"[{index}] {clause.type} p{clause.priority}: {clause.query}", markup=False)
    print_results(results)
    print_stages(results.stages, results.skipped)
