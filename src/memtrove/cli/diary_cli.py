"""``memtrove diary write|read``, and the registration of the session commands.

:func:`register` adds the ``diary`` group, ``budget`` and ``log``
(:mod:`memtrove.cli.budget_cli`) and ``update-context`` (:mod:`memtrove.cli.context_cli`).
"""

from __future__ import annotations

import sys

import typer

from memtrove.capture.diary import DEFAULT_TOPIC, DiaryEntry
from memtrove.cli import budget_cli, context_cli
from memtrove.cli.common import console, fail, open_vault, print_json, user_errors
from memtrove.cli.lean.output import printable
from memtrove.vault.diary import diary_area

__all__ = ["app", "register"]

CLI_AGENT = "user"  # a person at the command line; agents write through MCP ("agent")

app = typer.Typer(
    help="Diary notes: what was done and learned, saved as agent memories.",
    no_args_is_help=True,
)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="diary")
    budget_cli.register(root)
    context_cli.register(root)


@app.command("write")
def write(
    ctx: typer.Context,
    text: list[str] | None = typer.Argument(
        None, help="The entry (words are joined by spaces); '-' or none reads standard input."
    ),
    topic: str = typer.Option(DEFAULT_TOPIC, "--topic", "-t", help="What the entry is about."),
    agent: str = typer.Option(CLI_AGENT, "--agent", "-a", help="Who writes it."),
    as_json: bool = typer.Option(False, "--json", help="Print the saved entry as JSON."),
) -> None:
    """Save a diary entry (in _memtrove/diary/, confidence 0.7, searchable at once)."""
    words = text or ["-"]
    if words == ["-"]:
        if sys.stdin is None or sys.stdin.isatty():
            raise fail("give the entry as arguments, or pipe it in with '-'", code=2)
        entry = sys.stdin.read(_STDIN_LIMIT)
    else:
        entry = " ".join(words)
    with open_vault(ctx) as vault, user_errors():
        saved = diary_area(vault).write(entry, topic=topic, agent=agent)
    if as_json:
        print_json(saved.to_dict())
        return
    console.print(f"saved {printable(saved.path)} (#{saved.docid})", markup=False)


_STDIN_LIMIT = 1024 * 1024  # characters read from standard input; longer is refused


@app.command("read")
def read(
    ctx: typer.Context,
    number: int = typer.Option(10, "--num", "-n", min=1, max=1000, help="How many entries."),
    agent: str | None = typer.Option(None, "--agent", "-a", help="Only this agent's entries."),
    as_json: bool = typer.Option(False, "--json", help="Print the entries as JSON."),
) -> None:
    """The newest diary entries, newest first."""
    with open_vault(ctx, create=False) as vault, user_errors():
        entries = diary_area(vault).read(number, agent=agent)
    if as_json:
        print_json([entry.to_dict() for entry in entries])
        return
    if not entries:
        who = f" by {printable(agent)}" if agent else ""
        typer.echo(f"no diary entries{who} (memtrove diary write <text> adds one)")
        return
    for index, entry in enumerate(entries):
        if index:
            typer.echo("")
        typer.echo("\n".join(entry_lines(entry)))


def entry_lines(entry: DiaryEntry) -> list[str]:
    """An entry as the terminal shows it: a header line, then its text, indented; stored
    text never acts on the terminal."""
    head = f"{entry.written_at}  {entry.agent} · {entry.topic}  #{entry.docid}"
    return [printable(head)] + [
        f"  {printable(line, tabs=True)}" for line in entry.text.splitlines()
    ]
