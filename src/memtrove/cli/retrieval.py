"""``memtrove embed|vsearch|query``: vectors, vector search and the full hybrid pipeline."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from memtrove.cli.common import (
    console,
    fail,
    open_vault,
    print_json,
    print_results,
    search_with,
    split_collections,
)
from memtrove.cli.lean.views import print_stages
from memtrove.index.embedding import EmbedProgress, EmbedReport
from memtrove.results import SearchResults
from memtrove.retrieval.pipeline import CANDIDATE_LIMIT
from memtrove.vault import Vault

__all__ = ["embed_report_lines", "print_embed_report", "register", "run_embed"]


def register(app: typer.Typer) -> None:
    app.command("embed")(embed)
    app.command("vsearch")(vsearch)
    app.command("query")(query)


# -- embed ----------------------------------------------------------------------------------------


def embed(
    ctx: typer.Context,
    force: bool = typer.Option(
        False, "-f", "--force", help="Clear every vector and re-embed all with this embedder."
    ),
    force_geometry: bool = typer.Option(
        False,
        "--force-geometry",
        help="Write vectors although the geometry canary fails (taints the vault).",
    ),
    recalibrate_canary: bool = typer.Option(
        False,
        "--recalibrate-canary",
        help="With --force: store the canary's probes as the new baseline.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Give every fragment a vector (only what is new or changed, unless --force).

    First the geometry canary re-embeds fixed probe texts and compares them with their
    stored baseline; when it fails nothing is written and the vault is marked tainted."""
    if recalibrate_canary and not force:
        raise fail("--recalibrate-canary needs --force (it re-embeds everything)")
    with open_vault(ctx) as vault:
        report = run_embed(
            vault,
            force=force,
            show_progress=not as_json,
            force_geometry=force_geometry,
            recalibrate_canary=recalibrate_canary,
        )
    if as_json:
        print_json({**report.to_dict(), "summary": embed_report_lines(report)[0]})
    else:
        print_embed_report(report)
    if report.errors:
        raise typer.Exit(1)


@contextmanager
def _progress(enabled: bool) -> Iterator[EmbedProgress | None]:
    if not (enabled and sys.stderr.isatty()):
        yield None
        return
    columns = (TextColumn("embedding"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, transient=True, console=Console(stderr=True)) as bar:
        task = bar.add_task("", total=None)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield advance


def run_embed(
    vault: Vault,
    *,
    force: bool = False,
    show_progress: bool = True,
    force_geometry: bool = False,
    recalibrate_canary: bool = False,
) -> EmbedReport:
    """``vault.embed`` with a progress bar on a terminal (stderr); raises what it raises."""
    with _progress(show_progress) as progress:
        return vault.embed(
            force=force,
            progress=progress,
            force_geometry=force_geometry,
            recalibrate_canary=recalibrate_canary,
        )


def embed_report_lines(report: EmbedReport) -> list[str]:
    """The summary line, then one line per failure (for stderr)."""
    space = _space(report.space)
    if report.fragments or report.documents or report.forced or report.errors:
        summary = (
            f"embedded {_count(report.fragments, 'fragment')} of "
            f"{_count(report.documents, 'document')} in {report.elapsed_seconds:.1f}s ({space})"
        )
    else:
        summary = f"nothing to embed: every document has its vectors ({space})"
    lines = [summary]
    second = report.second or {}
    if "space" in second:
        lines[0] += (
            f"; second space: {_count(int(str(second['fragments'])), 'fragment')} embedded "
            f"in {float(str(second['elapsed_seconds'])):.1f}s ({_space(str(second['space']))})"
        )
    if report.failed_documents:
        lines.append(
            f"{_count(report.failed_documents, 'document')} failed (each is tried 3 times)"
        )
    lines += [f"failed: {error}" for error in report.errors]
    if report.skipped_documents:
        lines.append(
            f"{report.skipped_documents} documents are skipped after 3 failed attempts "
            "(`memtrove doctor` shows why)"
        )
    return lines


def _space(text: str) -> str:
    """``identity (256-d)`` as ``identity, 256-d``."""
    identity, _, size = text.rpartition(" (")
    return f"{identity}, {size.rstrip(')')}" if identity else text


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def print_embed_report(report: EmbedReport) -> None:
    """The summary on stdout; failures as warnings on stderr."""
    summary, *problems = embed_report_lines(report)
    console.print(summary, markup=False)
    for line in problems:
        print(f"memtrove: warning: {line}", file=sys.stderr)


# -- searching ------------------------------------------------------------------------------------


def vsearch(
    ctx: typer.Context,
    query: list[str] = typer.Argument(..., help="What to look for."),
    limit: int = typer.Option(10, "-n", "--num", "--limit", min=1, max=1000, help="Results."),
    collection: list[str] | None = typer.Option(
        None, "-c", "--collection", help="Only this collection (repeatable, or comma-separated)."
    ),
    content_type: list[str] | None = typer.Option(
        None, "-t", "--type", help="Only this content type (repeatable)."
    ),
    since: str | None = typer.Option(None, "--since", help="Authored/modified on or after."),
    until: str | None = typer.Option(None, "--until", help="Authored/modified on or before."),
    min_score: float = typer.Option(0.0, "--min-score", min=0.0, max=1.0, help="Score floor."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Vector search: documents ranked by their best fragment's cosine similarity."""
    text = " ".join(query)
    results = search_with(
        ctx,
        "vsearch",
        text,
        limit=limit,
        collections=split_collections(collection),
        content_types=content_type or None,
        since=since,
        until=until,
        min_score=min_score,
    )
    _print_results(text, results, as_json=as_json)


def query(
    ctx: typer.Context,
    query: list[str] = typer.Argument(..., help="What to look for."),
    limit: int = typer.Option(10, "-n", "--num", "--limit", min=1, max=1000, help="Results."),
    collection: list[str] | None = typer.Option(
        None, "-c", "--collection", help="Only this collection (repeatable, or comma-separated)."
    ),
    content_type: list[str] | None = typer.Option(
        None, "-t", "--type", help="Only this content type (repeatable)."
    ),
    since: str | None = typer.Option(None, "--since", help="Authored/modified on or after."),
    until: str | None = typer.Option(None, "--until", help="Authored/modified on or before."),
    intent: str | None = typer.Option(
        None, "--intent", help="What the query is for; steers expansion, reranking, snippets."
    ),
    full: bool = typer.Option(False, "--full", help="Include each document's full text."),
    diverse: bool = typer.Option(
        True, "--diverse/--no-diverse", help="Demote near-duplicates (MMR)."
    ),
    candidate_limit: int = typer.Option(
        CANDIDATE_LIMIT, "--candidate-limit", min=1, max=1000, help="Candidates to rerank."
    ),
    min_score: float = typer.Option(0.0, "--min-score", min=0.0, max=1.0, help="Score floor."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Hybrid search: BM25 and vectors, expansion, fusion, reranking, scoring, diversity."""
    text = " ".join(query)
    results = search_with(
        ctx,
        "query",
        text,
        limit=limit,
        intent=intent,
        collections=split_collections(collection),
        compact=not full,
        content_types=content_type or None,
        since=since,
        until=until,
        min_score=min_score,
        diverse=diverse,
        candidate_limit=candidate_limit,
    )
    _print_results(text, results, as_json=as_json, show_stages=True)


def _print_results(
    text: str, results: SearchResults, *, as_json: bool, show_stages: bool = False
) -> None:
    for warning in results.warnings:
        print(f"memtrove: warning: {warning}", file=sys.stderr)
    if as_json:
        print_json({"query": text, **results.to_dict()})
        return
    print_results(results)
    if show_stages:
        print_stages(results.stages, results.skipped)
