"""``memtrove kg`` (facts about an entity) and ``memtrove entities`` (extract them)."""

from __future__ import annotations

import typer

from memtrove.cli.common import console, open_vault, print_json, print_report, user_errors

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    app.command("kg")(kg)
    app.command("entities")(entities)


def kg(
    ctx: typer.Context,
    entity: str = typer.Argument(..., help="An entity name or its vault:type:slug id."),
    as_of: str | None = typer.Option(None, "--as-of", help="Facts valid on this date."),
    direction: str = typer.Option(
        "both", "--direction", help="outgoing (subject), incoming (object) or both."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Subject-predicate-object facts about an entity, with their validity windows."""
    with open_vault(ctx, create=False) as vault, user_errors():
        result = vault.knowledge.kg_query(entity, as_of, direction)
    print_report(result, as_json)


def entities(
    ctx: typer.Context,
    everything: bool = typer.Option(
        False, "--all", help="Every document, not only those without entities."
    ),
    no_llm: bool = typer.Option(False, "--no-llm", help="The heuristic even with an LLM."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Extract the entities documents name (LLM when configured, else the heuristic)."""
    with open_vault(ctx) as vault, user_errors():
        report = vault.knowledge.enrich_entities(everything=everything, use_llm=not no_llm)
    if as_json:
        print_json(report)
        return
    console.print(
        f"entities: {report['documents']} documents, {report['entities']} entities"
        f" (llm {report['llm']}, heuristic {report['heuristic']},"
        f" llm failures {report['llm_failures']})",
        markup=False,
    )
