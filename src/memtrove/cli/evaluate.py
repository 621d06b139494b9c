"""``memtrove eval locomo|beir|gold|run``: retrieval quality on judged sets (``run``, the
trust-gated replay, is :mod:`memtrove.cli.eval_run`)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from memtrove.cli import eval_run
from memtrove.cli.common import fail, open_vault, print_json, state, user_errors
from memtrove.eval import (
    LOCOMO_METRICS,
    RANKING_METRICS,
    LocomoReport,
    ProgressCallback,
    RankingReport,
    load_gold,
    run_beir,
    run_gold,
    run_locomo,
)
from memtrove.eval.run_files import prepare_out, table_markdown, write_run
from memtrove.locations import is_server_url

__all__ = ["app"]

app = typer.Typer(
    name="eval",
    help="Measure retrieval quality on judged sets (LoCoMo, BEIR, gold JSONL; run: trust-gated).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.command("run")(eval_run.run)


class Method(StrEnum):
    """Retrieval methods, each one Vault call (see memtrove.eval.runner)."""

    bm25 = "bm25"
    vector = "vector"
    hybrid = "hybrid"
    query = "query"
    intent = "intent"
    plan = "plan"
    surfacing = "surfacing"


METHOD_HELP = (
    "bm25 = search, vector = vsearch, hybrid, query (the full pipeline), intent "
    "(intent_search), plan (query_plan), surfacing (what the context-surfacing hook injects)."
)
HOOK_VECTORS_HELP = (
    "surfacing: MEMTROVE_HOOK_VECTORS for the hook (auto: vectors for the deep profile only)."
)


class HookVectors(StrEnum):
    """MEMTROVE_HOOK_VECTORS values."""

    auto = "auto"
    on = "on"
    off = "off"


SESSION_HELP = (
    "surfacing: feed the questions in order through one hook session (per conversation, "
    "per 'session' field, or per file), so lookback is measured."
)

# The options every eval command takes.
_SESSION = typer.Option(False, "--session", help=SESSION_HELP)
_HOOK_VECTORS = typer.Option(HookVectors.auto, "--hook-vectors", help=HOOK_VECTORS_HELP)
_PROGRESS = typer.Option(False, "--progress", help="Report progress on stderr.")
_JSON = typer.Option(False, "--json", help="Print one JSON object.")
_OUT = typer.Option(None, "--out", help="Also write run.json and report.md to this folder.")


@app.command("locomo")
def locomo(
    ctx: typer.Context,
    path: Path = typer.Argument(..., help="LoCoMo JSON file (e.g. locomo10.json)."),
    method: Method = typer.Option(Method.query, "--method", "-m", help=METHOD_HELP),
    conversations: int | None = typer.Option(
        None, "--conversations", min=1, help="Only the first N conversations."
    ),
    session: bool = _SESSION,
    hook_vectors: HookVectors = _HOOK_VECTORS,
    progress: bool = _PROGRESS,
    mined: str | None = typer.Option(
        None,
        "--mined",
        help="claude-code or chatgpt: write the sessions in that format and mine them "
        "(one document per exchange) instead of one document per turn.",
    ),
    out: Path | None = _OUT,
    as_json: bool = _JSON,
) -> None:
    """Dialogue-turn recall on LoCoMo: R@5, R@10, SessR@5, SessR@10, MRR, latency."""
    if mined is not None and mined not in ("claude-code", "chatgpt"):
        raise fail("--mined must be claude-code or chatgpt", code=2)
    with user_errors():
        folder = prepare_out(out) if out is not None else None
        report = run_locomo(
            path,
            method.value,
            conversations=conversations,
            session=session,
            hook_vectors=hook_vectors.value,
            progress=_progress(progress),
            mined=mined,
            server=_server(ctx),
        )
    _show(report, as_json, lambda: format_locomo(report, path), folder, f"eval locomo {path}")


@app.command("beir")
def beir(
    ctx: typer.Context,
    folder: Path = typer.Argument(..., help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/."),
    method: Method = typer.Option(Method.query, "--method", "-m", help=METHOD_HELP),
    limit_queries: int | None = typer.Option(
        None, "--limit-queries", min=1, help="Only the first N judged queries."
    ),
    split: str = typer.Option("test", "--split", help="Which qrels/<split>.tsv to score."),
    session: bool = _SESSION,
    hook_vectors: HookVectors = _HOOK_VECTORS,
    progress: bool = _PROGRESS,
    out: Path | None = _OUT,
    as_json: bool = _JSON,
) -> None:
    """nDCG@10, R@10, R@100 and MRR on a BEIR-format folder."""
    with user_errors():
        run_folder = prepare_out(out) if out is not None else None
        report = run_beir(
            folder,
            method.value,
            limit_queries=limit_queries,
            split=split,
            session=session,
            hook_vectors=hook_vectors.value,
            progress=_progress(progress),
            server=_server(ctx),
        )
    _show(
        report,
        as_json,
        lambda: format_ranking(report, f"BEIR {folder}"),
        run_folder,
        f"eval beir {folder}",
    )


def _server(ctx: typer.Context) -> str | None:
    """The global vault's URL when it is a server vault: the evaluation's scratch vault is
    then made in a schema beside it (so the figures are the server engine's)."""
    location = state(ctx).settings.vault_path
    return location if isinstance(location, str) and is_server_url(location) else None


@app.command("gold")
def gold(
    ctx: typer.Context,
    file: Path = typer.Argument(..., help="Gold JSONL file (one judged query per line)."),
    method: Method | None = typer.Option(
        None, "--method", "-m", help="Use this method for every example (default: its mode)."
    ),
    session: bool = _SESSION,
    hook_vectors: HookVectors = _HOOK_VECTORS,
    progress: bool = _PROGRESS,
    out: Path | None = _OUT,
    as_json: bool = _JSON,
) -> None:
    """Hand-judged queries against the vault (global --vault): nDCG@10, R@10, R@100, MRR.

    With --method surfacing, also what was injected: entries and tokens per prompt, the
    share of injected entries that are useful, and how often a useful document was injected.
    """
    with user_errors():
        examples = load_gold(file)
        folder = prepare_out(out) if out is not None else None
    with open_vault(ctx, create=False) as vault:
        report = run_gold(
            vault,
            examples,
            method=method.value if method else None,
            session=session,
            hook_vectors=hook_vectors.value,
            progress=_progress(progress),
        )
    _show(
        report, as_json, lambda: format_ranking(report, f"gold {file}"), folder, f"eval gold {file}"
    )


def _show(
    report: LocomoReport | RankingReport,
    as_json: bool,
    text: Callable[[], str],
    folder: Path | None = None,
    title: str = "",
) -> None:
    """The report as one JSON object with ``--json``, else as its table (``text()``); with
    ``folder`` (``--out``), also its run.json and report.md there."""
    if folder is not None:
        with user_errors():
            write_run(folder, report.to_dict(), table_markdown(title, text()))
    if as_json:
        print_json(report.to_dict())
    else:
        typer.echo(text())


def _progress(enabled: bool) -> ProgressCallback | None:
    if not enabled:
        return None

    def report(done: int, total: int, what: str) -> None:
        print(f"[{done}/{total}] {what}", file=sys.stderr, flush=True)

    return report


def _table(
    header: str, names: Iterable[str], rows: Iterable[tuple[str, int, Mapping[str, float]]]
) -> list[str]:
    columns = [(name, max(8, len(name) + 2)) for name in names]
    lines = [f"{header:<10}{'n':>6}" + "".join(f"{name:>{width}}" for name, width in columns)]
    for label, count, values in rows:
        cells = "".join(f"{values[name]:>{width}.3f}" for name, width in columns)
        lines.append(f"{label:<10}{count:>6}{cells}")
    return lines


def _notes(notes: list[str], shown: int = 8) -> list[str]:
    lines = [f"note: {note}" for note in notes[:shown]]
    if len(notes) > shown:
        lines.append(f"note: ... and {len(notes) - shown} more (see --json)")
    return lines


def _pipeline(pipeline: Mapping[str, Any]) -> list[str]:
    stages = ", ".join(f"{stage} {count}" for stage, count in pipeline.get("stages", {}).items())
    skipped = "; ".join(
        f"{stage} ({reason})" for stage, reason in pipeline.get("skipped_stages", {}).items()
    )
    lines = [f"stages    {stages}"] if stages else []
    if skipped:
        lines.append(f"skipped   {skipped}")
    return lines


def _tokens(tokens: Mapping[str, float]) -> list[str]:
    if not tokens:
        return []
    return [
        f"injected  mean {tokens['mean']:.0f} tokens   p50 {tokens['p50']:.0f}   "
        f"max {tokens['max']:.0f}"
    ]


def _injection(summary: Mapping[str, Any]) -> list[str]:
    """What the agent received (gold with ``surfacing``): amounts, precision, right document."""
    if not summary:
        return []
    answerable, no_memory = summary["answerable"], summary["no_memory"]
    lines = [
        f"entries   mean {summary['entries']['mean']:.1f}   p50 {summary['entries']['p50']:.0f}   "
        f"max {summary['entries']['max']:.0f}   ({summary['prompts']} prompts)",
        f"precision {summary['precision']:.3f} of injected entries useful "
        f"({summary['prompts_injected']} prompts injected)",
        f"right doc {summary['right_document']:.3f} "
        f"({summary['right_document_prompts']}/{answerable['prompts']} prompts with a useful "
        f"document got one)",
    ]
    if no_memory["prompts"]:
        lines.append(
            f"no memory {no_memory['prompts_injected']}/{no_memory['prompts']} prompts injected: "
            f"entries mean {no_memory['entries']['mean']:.1f}, "
            f"tokens mean {no_memory['tokens']['mean']:.0f}"
        )
    return lines


def _latency(latency: Mapping[str, float], n: int) -> str:
    return f"latency   p50 {latency['p50']:.1f} ms   p95 {latency['p95']:.1f} ms   ({n} queries)"


def format_locomo(report: LocomoReport, path: Path) -> str:
    """A plain-text table of a LoCoMo report."""
    rows = [(group, report.n_by_group[group], report.metrics[group]) for group in report.metrics]
    rows += [(name, int(values["n"]), values) for name, values in report.by_category.items()]
    heading = (
        f"LoCoMo {path}  method={report.method}{'  one session' if report.session else ''}  "
        f"{report.conversations} conversations, {report.n} questions"
    )
    table = _table("group", LOCOMO_METRICS, rows)
    return _layout(heading, table, report, _tokens(report.tokens), _pipeline(report.pipeline))


def format_ranking(report: RankingReport, title: str) -> str:
    """A plain-text table of a BEIR or gold report."""
    details = report.details
    return _layout(
        f"{title}  method={report.method}  {report.n} queries",
        _table("", RANKING_METRICS, [("all", report.n, report.metrics)]),
        report,
        _tokens(details.get("tokens", {})),
        _injection(details.get("injection", {})),
        _pipeline(details.get("pipeline", {})),
    )


def _layout(
    heading: str, table: list[str], report: LocomoReport | RankingReport, *details: list[str]
) -> str:
    """What every eval report prints: its heading and table, latency, ``details`` (lists of
    lines), notes and the time taken."""
    lines = [heading, "", *table, "", _latency(report.latency_ms, report.n)]
    for detail in details:
        lines += detail
    lines += [*_notes(report.notes), f"elapsed {report.elapsed_seconds:.1f} s"]
    return "\n".join(lines)
