"""``memtrove reindex``: re-scan the collections and, with ``--enrich``, enrich new and
changed documents (A-MEM notes, links, evolution, entities); ``memtrove evolution``: how a
document's note changed."""

from __future__ import annotations

import typer

from memtrove.cli.common import open_vault, print_report, user_errors

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    app.command("reindex")(reindex)
    app.command("evolution")(evolution)


def reindex(
    ctx: typer.Context,
    enrich: bool = typer.Option(
        False, "--enrich", help="Then enrich new and changed documents (notes, links, entities)."
    ),
    force: bool = typer.Option(
        False, "--force", "-f", help="Enrich every document again, whatever its state."
    ),
    no_llm: bool = typer.Option(False, "--no-llm", help="The heuristics even with an LLM."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Re-scan every collection; --enrich then enriches what is new or changed (--force:
    everything). Without an LLM: salient-term keywords and cosine-only links."""
    with open_vault(ctx) as vault, user_errors():
        report = vault.enrichment.reindex(enrich=enrich, force=force, use_llm=not no_llm)
    print_report(report, as_json)


def evolution(
    ctx: typer.Context,
    document: str = typer.Argument(..., help="#docid, docid or collection/path."),
    limit: int = typer.Option(10, "--limit", "-n", help="Most changes to show (1-100)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """How enrichment changed a document's keywords and context, newest first."""
    with open_vault(ctx, create=False) as vault, user_errors():
        status = vault.enrichment.memory_evolution(document, limit)
    print_report(status, as_json)
