"""``memtrove prediction ...`` and ``memtrove behavior ...``: the two rule engines."""

from __future__ import annotations

import typer

from memtrove.cli.common import console, open_vault, print_json, user_errors

__all__ = ["register"]


def _engine_app(kind: str) -> typer.Typer:
    app = typer.Typer(help=f"The {kind} engine.", no_args_is_help=True)

    @app.command("add")
    def add(
        ctx: typer.Context,
        statement: str = typer.Argument(..., help=f"The {kind}."),
        rationale: str | None = typer.Option(None, "--rationale", help="Why."),
        when: list[str] | None = typer.Option(
            None, "--when", help="A situation it applies in (repeatable)."
        ),
        store: str | None = typer.Option(None, "--store", help="Store (default: project)."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    ) -> None:
        """Add a rule (confidence 0.5), linked to a new matcher per --when."""
        with open_vault(ctx) as vault, user_errors():
            rule = vault.rules.add_rule(
                kind, statement, rationale=rationale, when=when or (), store=store
            )
        if as_json:
            print_json(rule.to_dict())
            return
        console.print(f"added {kind} {rule.id} ({len(rule.matchers)} matcher(s))", markup=False)

    @app.command("link")
    def link(
        ctx: typer.Context,
        item_id: str = typer.Argument(..., help=f"The {kind}'s id."),
        matcher: str | None = typer.Option(None, "--matcher", help="An existing matcher id."),
        when: str | None = typer.Option(None, "--when", help="A new situation."),
        weight: float = typer.Option(1.0, "--weight", help="Edge weight (0-1]."),
        store: str | None = typer.Option(None, "--store", help="Store of a new matcher."),
    ) -> None:
        """Link a situation to a rule."""
        with open_vault(ctx) as vault, user_errors():
            matcher_id = vault.rules.link_rule(
                kind, item_id, matcher_id=matcher, when=when, weight=weight, store=store
            )
        console.print(f"linked {matcher_id} -> {item_id} (weight {weight:g})", markup=False)

    def _signal(ctx: typer.Context, item_id: str, name: str, detail: str | None) -> None:
        with open_vault(ctx) as vault, user_errors():
            value = vault.rules.signal_rule(kind, item_id, name, detail)
        console.print(f"{name}: {item_id} confidence {value:.3f}", markup=False)

    @app.command("confirm")
    def confirm(
        ctx: typer.Context,
        item_id: str = typer.Argument(..., help=f"The {kind}'s id."),
        soft: bool = typer.Option(False, "--soft", help="A soft signal (a quarter)."),
        detail: str | None = typer.Option(None, "--detail", help="What showed it."),
    ) -> None:
        """Count evidence for the rule."""
        _signal(ctx, item_id, "soft" if soft else "confirm", detail)

    @app.command("disconfirm")
    def disconfirm(
        ctx: typer.Context,
        item_id: str = typer.Argument(..., help=f"The {kind}'s id."),
        detail: str | None = typer.Option(None, "--detail", help="What showed it."),
    ) -> None:
        """Count evidence against the rule."""
        _signal(ctx, item_id, "disconfirm", detail)

    if kind == "behavior":

        @app.command("codify")
        def codify(
            ctx: typer.Context,
            item_id: str = typer.Argument(..., help="The behavior's id."),
            detail: str | None = typer.Option(None, "--detail", help="Where it was written."),
        ) -> None:
            """Mark a behavior as codified (a standing rule)."""
            with open_vault(ctx) as vault, user_errors():
                vault.rules.codify_behavior(item_id, detail)
            console.print(f"codified {item_id}", markup=False)

    @app.command("list")
    def list_rules(
        ctx: typer.Context,
        store: str | None = typer.Option(None, "--store", help="Store (default: project)."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    ) -> None:
        """Rules with their confidence and signal counts."""
        with open_vault(ctx, create=False) as vault, user_errors():
            found = vault.rules.rules(kind, store)
        if as_json:
            print_json([rule.to_dict() for rule in found])
            return
        if not found:
            console.print(f"no {kind}s")
        for rule in found:
            console.print(
                f"{rule.id}  {rule.confidence:.3f}  +{rule.confirm_count:g} -"
                f"{rule.disconfirm_count:g}  {rule.statement}",
                markup=False,
            )
            for matcher in rule.matchers:
                console.print(f"    when {matcher.description} ({matcher.weight:g})", markup=False)

    return app


def register(app: typer.Typer) -> None:
    app.add_typer(_engine_app("prediction"), name="prediction")
    app.add_typer(_engine_app("behavior"), name="behavior")
