"""``memtrove hook NAME``: run a Claude Code hook (help and listing live here).

``memtrove hook NAME`` normally never reaches Typer: ``memtrove.__main__`` hands it to the
hook runner before the CLI is imported, so a hook starts fast. This command serves the
other spellings (``memtrove --vault PATH hook NAME``, ``memtrove hook --list``, no name),
delegating to the same runner.
"""

from __future__ import annotations

import typer

from memtrove.cli.common import print_json, state
from memtrove.hooks.runner import HOOKS
from memtrove.hooks.runner import main as run_hook


def register(app: typer.Typer) -> None:
    app.command("hook")(hook)


def hook(
    ctx: typer.Context,
    name: str | None = typer.Argument(
        None, help=f"The hook to run: {', '.join(HOOKS)}. Reads its JSON on stdin."
    ),
    list_hooks: bool = typer.Option(False, "--list", help="List the hooks and their events."),
    as_json: bool = typer.Option(False, "--json", help="With --list: print JSON."),
) -> None:
    """Run a Claude Code hook: JSON payload on stdin, one JSON answer on stdout, exit 0."""
    if list_hooks or name is None:
        if as_json:
            print_json(
                [
                    {"name": s.name, "event": s.event, "timeout": s.timeout_seconds,
                     "summary": s.summary}
                    for s in HOOKS.values()
                ]
            )  # fmt: skip
            return
        for spec in HOOKS.values():
            typer.echo(f"{spec.name:<20} {spec.event:<17} {spec.summary}")
        return
    settings = state(ctx).settings
    run_hook([name], vault=settings.vault_path, config_dir=settings.config_dir)
