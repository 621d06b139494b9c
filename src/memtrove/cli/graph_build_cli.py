"""``memtrove build-graphs``: the temporal backbone and bulk semantic edges."""

from __future__ import annotations

import typer

from memtrove.cli.common import console, open_vault, print_json, user_errors

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    app.command("build-graphs")(build_graphs)


def build_graphs(
    ctx: typer.Context,
    graph_type: list[str] = typer.Option(
        ["all"], "--type", help="temporal, semantic or all (repeat for several)."
    ),
    threshold: float = typer.Option(
        0.7, "--threshold", help="Least cosine for a semantic edge (0-1)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Add temporal edges (documents in time order) and semantic edges (nearest
    neighbours); run after bulk ingestion. Safe to rerun."""
    with open_vault(ctx) as vault, user_errors():
        report = vault.graph.build_graphs(graph_type, semantic_threshold=threshold)
    if as_json:
        print_json(report.as_dict())
        return
    console.print(report.text(), markup=False)
