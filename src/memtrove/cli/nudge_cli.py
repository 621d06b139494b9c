"""``memtrove flush-tools`` and ``memtrove reminder``: the memory store's prompt and
session-start nudges as commands a host runs per event (see
:mod:`memtrove.hooks.prompt_nudges`). Like hooks, they exit 0 whatever happens."""

from __future__ import annotations

import typer

from memtrove.cli.common import state
from memtrove.hooks import prompt_nudges

__all__ = ["register"]

JsonOption = typer.Option(
    False, "--json", help='Print {"additional_context": ...} (Cursor hooks) instead of text.'
)


def register(app: typer.Typer) -> None:
    app.command("flush-tools")(flush_tools)
    app.command("reminder")(reminder)


def _run(ctx: typer.Context, command: str, as_json: bool) -> None:
    settings = state(ctx).settings
    prompt_nudges.main(
        command, as_json=as_json, vault=settings.vault_path, config_dir=settings.config_dir
    )
    raise typer.Exit(0)


def flush_tools(ctx: typer.Context, as_json: bool = JsonOption) -> None:
    """Prompt hook (UserPromptSubmit, Cursor's beforeSubmitPrompt): reads the payload on
    stdin; prints the extraction nudge when tool calls wait, else related memories and
    rules, else a reminder to save what was learned. Nothing while the session compacts."""
    _run(ctx, "flush-tools", as_json)


def reminder(ctx: typer.Context, as_json: bool = JsonOption) -> None:
    """Session-start hook (SessionStart, Cursor's sessionStart): the project's last
    handoff, the memory store's reminder and its hygiene when something needs tending."""
    _run(ctx, "reminder", as_json)
