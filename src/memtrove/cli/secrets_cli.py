"""``memtrove redact [--apply]``: find the secrets a vault already stores, and rewrite them."""

from __future__ import annotations

import typer

from memtrove.cli.common import console, open_vault, print_json, user_errors

__all__ = ["redact"]


def redact(
    ctx: typer.Context,
    apply: bool = typer.Option(
        False, "--apply", help="Rewrite them as [REDACTED:kind] (without it: only report)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Find secrets stored in the vault (bodies, memories, prompts, rules, caches); with
    --apply, rewrite them as [REDACTED:kind] and wipe them from the file. Your markdown
    files are never changed."""
    with open_vault(ctx) as vault, user_errors():
        report = vault.stored_secrets(apply=apply)
    if as_json:
        print_json(report.to_dict())
        return
    if not report.total:
        console.print("no secrets stored")
        return
    kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(report.kinds.items()))
    verb = "redacted" if apply else "found"
    console.print(f"{verb} {report.total} secrets ({kinds})", markup=False, highlight=False)
    if report.documents:
        console.print(f"  in {report.documents} documents:", markup=False, highlight=False)
        for ref in report.refs:
            console.print(f"    {ref}", markup=False, highlight=False)
        if report.documents > len(report.refs):
            console.print(f"    and {report.documents - len(report.refs)} more", markup=False)
    for table, count in sorted(report.rows.items()):
        console.print(f"  in {count} {table} rows", markup=False, highlight=False)
    if not apply:
        console.print("run `memtrove redact --apply` to rewrite them", markup=False)
