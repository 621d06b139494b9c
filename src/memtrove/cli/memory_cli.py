"""The agent memory store from the shell: remember, recall, forget, archive, duplicates,
dedup-mark, hygiene. ``--store`` defaults to the project store (the git repository of the
working directory, else the directory); recall without it also looks in ``global``.

Registering this group also registers ``flush-tools`` and ``reminder``
(:mod:`memtrove.cli.nudge_cli`) and ``setup skills`` (:mod:`memtrove.cli.skills_cli`)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from memtrove.cli import nudge_cli, skills_cli
from memtrove.cli.common import console, fail, open_vault, print_json, user_errors

__all__ = ["register"]

StoreOption = typer.Option(None, "--store", help="Store (default: the project store).")


def register(app: typer.Typer) -> None:
    app.command("remember")(remember)
    app.command("recall")(recall)
    app.command("forget")(forget)
    app.command("archive")(archive)
    app.command("duplicates")(duplicates)
    app.command("dedup-mark")(dedup_mark)
    app.command("hygiene")(hygiene)
    nudge_cli.register(app)
    skills_cli.register(app)


def remember(
    ctx: typer.Context,
    label: str = typer.Argument(..., help="The entry's label (its slug is its key)."),
    content: str | None = typer.Argument(None, help="The text; '-' or nothing reads stdin."),
    store: str | None = StoreOption,
    branch: str | None = typer.Option(None, "--branch", help="Scope it to a git branch."),
    confidence: int | None = typer.Option(
        None, "--confidence", min=1, max=10, help="How sure (1-10)."
    ),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Replace an existing entry (its text is kept as a version)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Remember something under a label."""
    if content is None or content == "-":
        if sys.stdin.isatty():
            raise fail("no content: pass it as an argument or on stdin")
        content = sys.stdin.read()
    with open_vault(ctx) as vault, user_errors():
        result = vault.memory.remember(label, content, store, branch, confidence, overwrite)
    if as_json:
        print_json(result.to_dict())
        return
    entry = result.entry
    verb = "remembered" if result.created else "overwrote"
    console.print(f"{verb} {entry.store} :: {entry.label} ({entry.slug})", markup=False)
    for near in result.similar:
        console.print(
            f"  similar: {near.label} ({near.score:.2f}) - review with `memtrove duplicates`",
            markup=False,
        )


def recall(
    ctx: typer.Context,
    query: list[str] = typer.Argument(..., help="What to recall."),
    store: str | None = StoreOption,
    branch: str | None = typer.Option(None, "--branch", help="Only unscoped and this branch."),
    limit: int = typer.Option(10, "-n", "--limit", min=1, max=1000, help="Entries."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Entries for a query (counted as recalled)."""
    with open_vault(ctx, create=False) as vault, user_errors():
        found = vault.memory.recall(" ".join(query), store, branch, limit)
    if as_json:
        print_json([item.to_dict() for item in found])
        return
    if not found:
        console.print("no entries")
    for item in found:
        entry = item.entry
        console.print(f"{item.score:.3f}  {entry.store} :: {entry.label}", markup=False)
        for line in entry.content.splitlines():
            console.print(f"    {line}", markup=False)


def forget(
    ctx: typer.Context,
    label: str = typer.Argument(..., help="The entry's label."),
    store: str | None = StoreOption,
) -> None:
    """Forget an entry (its text stays retrievable as an earlier version)."""
    with open_vault(ctx) as vault, user_errors():
        entry = vault.memory.forget_entry(label, store)
    console.print(f"forgot {entry.store} :: {entry.label}", markup=False)


def archive(
    ctx: typer.Context,
    label: str = typer.Argument(..., help="The entry's label."),
    store: str | None = StoreOption,
    restore: bool = typer.Option(False, "--restore", help="Bring an archived entry back."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Archive an entry: it is kept (with its versions), but recall, duplicates, hygiene and
    search leave it out. --restore brings it back; so does overwriting it."""
    with open_vault(ctx, create=False) as vault, user_errors():
        entry = vault.memory.archive_entry(label, store, archived=not restore)
    if as_json:
        print_json(entry.to_dict())
        return
    verb = "restored" if restore else "archived"
    console.print(f"{verb} {entry.store} :: {entry.label}", markup=False)


def duplicates(
    ctx: typer.Context,
    store: str | None = StoreOption,
    threshold: float = typer.Option(0.85, "--threshold", min=0.01, max=1.0, help="Cosine."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Near-duplicate entries not yet judged, in clusters."""
    with open_vault(ctx, create=False) as vault, user_errors():
        report = vault.memory.find_duplicates(store, threshold)
    if as_json:
        print_json(report.to_dict())
        return
    if not report.clusters:
        console.print(f"no duplicate candidates in store {report.store}")
    for line in report.lines():
        console.print(line, markup=False)


def dedup_mark(
    ctx: typer.Context,
    label_a: str = typer.Argument(..., help="One entry."),
    label_b: str = typer.Argument(..., help="The other."),
    status: str = typer.Argument(..., help="duplicate, supplement, contradiction or unrelated."),
    store: str | None = StoreOption,
) -> None:
    """Record a verdict on a pair, so duplicates stops listing it."""
    with open_vault(ctx) as vault, user_errors():
        first, second = vault.memory.dedup_mark_checked(label_a, label_b, status, store)
        target = vault.memory.resolve_store(store)
    console.print(f"[checked] {target} :: {first} <-> {second} -> {status}", markup=False)


def hygiene(
    ctx: typer.Context,
    store: str | None = StoreOption,
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Maintenance signals of a store (duplicates, stale entries, orphaned branches)."""
    with open_vault(ctx, create=False) as vault, user_errors():
        report = vault.memory.hygiene(store, Path.cwd())
    if as_json:
        print_json(report.to_dict())
        return
    if report.healthy:
        console.print("Store is healthy.")
    for line in report.lines():
        console.print(line, markup=False)
