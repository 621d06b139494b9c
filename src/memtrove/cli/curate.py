"""``memtrove curate``: check the vault's upkeep and write the curator report.

The report (``$XDG_CACHE_HOME/memtrove/curator-report.json``) is what the
``curator-nudge`` hook shows at the start of a Claude Code session: the upkeep counts, then
orphaned collections, sweep and duplicate candidates and a BM25 sanity probe
(:mod:`memtrove.vault.curator`), each with the action it suggests.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import typer

from memtrove.cli.common import console, fail, open_vault, print_json, user_errors
from memtrove.hooks.curator import build_report, report_path, write_report
from memtrove.hooks.settings import cache_dir

STALE_LISTED = 5  # stale documents named in the report, oldest first


def register(app: typer.Typer) -> None:
    app.command("curate")(curate)


def curate(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Count pending and failed embeddings, stale and snoozed notes; find orphaned
    collections, sweep and duplicate candidates; probe BM25; suggest what to do."""
    from memtrove.vault.curator import curator_findings

    with open_vault(ctx, create=False) as vault, user_errors():
        stale = [f"{d.collection}/{d.path}" for d in vault.stale_documents(STALE_LISTED)]
        report = build_report(
            vault.location,
            vault.documents.index_stats(),
            vault.lifecycle.status(),
            datetime.now(UTC),
            stale,
        )
        findings = curator_findings(vault)
    report = {**report, **findings.to_dict(), "actions": report["actions"] + findings.actions()}
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
    for line in _finding_lines(report):
        console.print(line, markup=False)
    console.print(f"report: {path}", markup=False)


def _finding_lines(report: dict[str, Any]) -> list[str]:
    """The findings of :mod:`memtrove.vault.curator`, a line each, with examples."""
    orphaned = report["orphaned_collections"]
    lines = [
        "orphaned collections: "
        + (", ".join(f"{o['name']} ({o['documents']} docs, {o['reason']})" for o in orphaned)
           or "none")
    ]  # fmt: skip
    sweep = report["sweep_candidates"]
    lines.append(f"sweep candidates: {sweep['count']}")
    lines += [f"  {document}" for document in sweep["documents"]]
    duplicates = report["duplicate_candidates"]
    lines.append(
        f"duplicate candidates: {duplicates['count']} "
        f"({duplicates['checked']} low-confidence documents checked)"
    )
    lines += [f"  {pair['duplicate']}  duplicates  {pair['of']}" for pair in duplicates["pairs"]]
    probe = report["bm25_probe"]
    if probe["verdict"] == "no match":
        lines.append(f"bm25 probe {probe['query']!r}: no document matches (nothing to judge)")
    else:
        lines.append(
            f"bm25 probe {probe['query']!r}: {probe['verdict']}, top {probe['top_score']:.2f} "
            f"({probe['top']})"
        )
    return lines
