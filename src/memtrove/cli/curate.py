"""``memtrove curate``: check the vault's upkeep and write the curator report.

The report (``$XDG_CACHE_HOME/memtrove/curator-report.json``) is what the
``curator-nudge`` hook shows at the start of a Claude Code session.
"""

from __future__ import annotations

from datetime import UTC, datetime

import typer

from memtrove.cli.common import console, fail, open_vault, print_json
from memtrove.hooks.curator import build_report, report_path, write_report
from memtrove.hooks.settings import cache_dir

STALE_LISTED = 5  # stale documents named in the report, oldest first


def register(app: typer.Typer) -> None:
    app.command("curate")(curate)


def curate(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Count pending and failed embeddings, stale and snoozed notes; suggest what to do."""
    with open_vault(ctx) as vault:
        stale = [f"{d.collection}/{d.path}" for d in vault.stale_documents(STALE_LISTED)]
        report = build_report(
            vault.location,
            vault.documents.index_stats(),
            vault.lifecycle.status(),
            datetime.now(UTC),
            stale,
        )
    path = report_path(cache_dir())
    try:
        write_report(path, report)
    except OSError as error:
        raise fail(f"cannot write the curator report {path}: {error}") from None
    if as_json:
        print_json({**report, "path": str(path)})
        return
    health = report["health"]
    console.print(
        f"{health['documents']} documents: {health['pending_embeds']} pending and "
        f"{health['failed_embeds']} failed embeddings, {health['stale_documents']} stale, "
        f"{health['snoozed']} snoozed, {health['pinned']} pinned",
        markup=False,
    )
    for action in report["actions"] or ["nothing to do"]:
        console.print(f"- {action}", markup=False)
    if stale:
        console.print("stale, oldest first (review each: memtrove get REF):", markup=False)
        for ref in stale:
            console.print(f"  {ref}", markup=False)
    console.print(f"report: {path}", markup=False)
