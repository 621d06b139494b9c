"""``memtrove mine DIR``: import exported conversations (Claude Code, Codex, ChatGPT,
Claude.ai, Slack, plain-text transcripts), one document per exchange; with
``--synthesize`` the decisions, preferences, milestones and problems they hold; and
``memtrove mine DIR --backfill-dates [--apply]`` for documents mined without a date."""

from __future__ import annotations

from pathlib import Path

import typer

from memtrove.cli.common import (
    console,
    fail,
    given_path,
    open_vault,
    print_json,
    print_report,
    user_errors,
)

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    app.command("mine")(mine)


def mine(
    ctx: typer.Context,
    folder: Path = typer.Argument(
        ..., help="Folder (or one file) of exported conversations.", parser=given_path
    ),
    collection: str = typer.Option(
        "conversations", "--collection", "-c", help="Mined collection to write to."
    ),
    format: str = typer.Option(
        "auto", "--format", help="auto, claude-code, codex, chatgpt, claude-ai, slack or text."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Count what would be written."),
    embed: bool = typer.Option(False, "--embed", help="Embed the written documents."),
    since: str | None = typer.Option(
        None, "--since", help="Only exchanges from this date or time (ISO-8601)."
    ),
    synthesize: bool = typer.Option(
        False,
        "--synthesize",
        help="After the import, the LLM extracts decisions, preferences, milestones and "
        "problems as linked documents.",
    ),
    synthesis_max_docs: int = typer.Option(
        20, "--synthesis-max-docs", min=0, max=10_000, help="With --synthesize: at most N."
    ),
    backfill_dates: bool = typer.Option(
        False, "--backfill-dates", help="Only date documents mined without authored_at."
    ),
    apply: bool = typer.Option(False, "--apply", help="With --backfill-dates: write the dates."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Import conversations: one `conversation` document per exchange (a user message and
    the replies up to the next one), with its time, speakers and source; reruns change
    only what changed."""
    from memtrove.vault.mine import FORMAT_ALIASES, FORMATS

    if format not in FORMATS and format not in FORMAT_ALIASES:
        raise fail(f"--format must be one of {', '.join(FORMATS)}", code=2)
    if apply and not backfill_dates:
        raise fail("--apply goes with --backfill-dates", code=2)
    if backfill_dates and (dry_run or embed or since):
        raise fail("--backfill-dates takes only --apply, -c and --format", code=2)
    if synthesize and (dry_run or backfill_dates):
        raise fail("--synthesize writes documents: not with --dry-run or --backfill-dates", code=2)
    with open_vault(ctx) as vault, user_errors():
        if backfill_dates:
            backfill = vault.mining.backfill_dates(folder, collection, format=format, apply=apply)
            print_report(backfill, as_json)
            return
        report = vault.mining.mine(
            folder, collection, format=format, dry_run=dry_run, embed=embed, since=since
        )
        synthesis = None
        if synthesize:  # the import is committed: a failure here never undoes it
            synthesis = vault.synthesis.synthesize_conversations(
                report.document_ids or None, collection=collection, max_docs=synthesis_max_docs
            )
    if as_json:
        data = report.to_dict()
        if synthesis is not None:
            data["synthesis"] = synthesis.to_dict()
        print_json(data)
        return
    console.print(report.text(), markup=False)
    if synthesis is not None:
        console.print(synthesis.text(), markup=False)
