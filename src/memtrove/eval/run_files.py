"""What an eval run leaves behind: ``run.json`` (everything, for tools and later
comparison) and ``report.md`` (for a person), in one folder per run.

``memtrove eval run`` writes them to ``--out`` (default ``eval-runs/<UTC time>-<profile>``
under the working folder); ``eval locomo|beir|gold --out DIR`` write the same two files with
their own report. A folder that already holds a ``run.json`` is refused rather than
overwritten: a run is a record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memtrove.errors import ConfigError
from memtrove.eval.replay import RUN_METRICS, ExampleResult, TrustGate, by_tag, summarize
from memtrove.files import write_atomic

__all__ = [
    "REPORT_FILE",
    "RUN_FILE",
    "build_run",
    "default_out",
    "file_sha256",
    "prepare_out",
    "run_markdown",
    "table_markdown",
    "write_run",
]

RUN_FILE = "run.json"
REPORT_FILE = "report.md"
RUNS_FOLDER = "eval-runs"
WORST_LISTED = 10  # examples listed in report.md as the furthest from their gold


def default_out(now: datetime, profile: str) -> Path:
    """``eval-runs/<UTC time, ISO 8601 basic>-<profile>``: sortable, no ``:`` in the name."""
    return Path(RUNS_FOLDER) / f"{now.astimezone(UTC).strftime('%Y%m%dT%H%M%SZ')}-{profile}"


def prepare_out(folder: Path) -> Path:
    """Create ``folder`` (and its parents); ConfigError when it cannot be made or already
    holds a run."""
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"--out {folder} is a file, not a folder")
    if (folder / RUN_FILE).exists():
        raise ConfigError(f"--out {folder} already holds a run ({RUN_FILE}); choose another")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(f"cannot create --out {folder}: {error.strerror or error}") from None
    return folder


def write_run(folder: Path, run: Mapping[str, Any], markdown: str) -> tuple[Path, Path]:
    """Write ``run.json`` and ``report.md`` into ``folder`` (made by :func:`prepare_out`)."""
    paths = (folder / RUN_FILE, folder / REPORT_FILE)
    try:
        write_atomic(paths[0], json.dumps(run, ensure_ascii=False, indent=2) + "\n", mode=0o644)
        write_atomic(paths[1], markdown, mode=0o644)
    except OSError as error:
        raise ConfigError(f"cannot write the run to {folder}: {error.strerror or error}") from None
    return paths


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build_run(
    results: Sequence[ExampleResult],
    gate: TrustGate,
    *,
    profile: str,
    limit: int,
    gold: Path,
    vault: str,
    snapshot: bool,
    started_at: datetime,
    elapsed_seconds: float,
) -> dict[str, Any]:
    """The ``run.json`` record (also the ``--json`` output) of one replay."""
    metrics, latency = summarize(results)
    skipped: dict[str, int] = {}
    for result in results:
        if result.skipped:
            skipped[result.skipped] = skipped.get(result.skipped, 0) + 1
    return {
        "metrics": metrics,
        "latency_ms": latency,
        "n": gate.scored,
        "task": "run",
        "profile": profile,
        "gate": gate.to_dict(),
        "limit": limit,
        "examples": len(results),
        "skipped": skipped,
        "query_errors": sum(1 for result in results if result.error),
        "by_tag": by_tag(results),
        "gold": {"path": str(gold), "sha256": file_sha256(gold)},
        "vault": vault,
        "snapshot": snapshot,
        "started_at": started_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "elapsed_seconds": round(elapsed_seconds, 3),
        "results": [result.to_dict() for result in results],
    }


def _cell(text: object) -> str:
    """Text safe inside one cell of a markdown table."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def run_markdown(run: Mapping[str, Any]) -> str:
    """``report.md`` of an ``eval run``: the verdict, the figures, what was not scored."""
    gate = run["gate"]
    verdict = "PASSED" if gate["passed"] else "FAILED"
    lines = [
        f"# memtrove eval run: {run['profile']} profile",
        "",
        f"- gold set: `{run['gold']['path']}` (sha256 {run['gold']['sha256'][:12]})",
        f"- vault: `{run['vault']}`{' (snapshot, read-only)' if run['snapshot'] else ''}",
        f"- started: {run['started_at']}, {run['elapsed_seconds']:.1f} s; top {run['limit']}",
        f"- examples: {run['examples']}, scored {gate['scored_examples']}"
        + "".join(f", {count} {why}" for why, count in run["skipped"].items()),
        "",
        f"## Trust gate: {verdict}",
        "",
        f"- scored examples: {gate['scored_examples']} (at least {gate['min_examples']})",
        f"- unresolved references: {gate['unresolved_references']} (none allowed)",
        f"- audited: {'yes' if gate['audited'] else 'no'} (--audited)",
        *(f"- **failed:** {reason}" for reason in gate["reasons"]),
        *(
            [f"- {run['query_errors']} queries could not be searched (ranked nothing)"]
            if run["query_errors"]
            else []
        ),
        "",
        "## Metrics (mean over scored examples, k = limit)",
        "",
        "| " + " | ".join(RUN_METRICS) + " | latency p50 ms | p95 ms |",
        "|" + "---|" * (len(RUN_METRICS) + 2),
        "| "
        + " | ".join(f"{run['metrics'][name]:.3f}" for name in RUN_METRICS)
        + f" | {run['latency_ms']['p50']:.1f} | {run['latency_ms']['p95']:.1f} |",
    ]
    if run["by_tag"]:
        lines += ["", "## By tag", "", "| tag | n | " + " | ".join(RUN_METRICS) + " |"]
        lines.append("|" + "---|" * (len(RUN_METRICS) + 2))
        for tag, values in run["by_tag"].items():
            cells = " | ".join(f"{values[name]:.3f}" for name in RUN_METRICS)
            lines.append(f"| {_cell(tag)} | {int(values['n'])} | {cells} |")
    unresolved = [r for r in run["results"] if r["unresolved"]]
    if unresolved:
        lines += ["", "## Unresolved references", ""]
        lines += [
            f"- line {r['line']} `{_cell(r['id'])}`: "
            + ", ".join(f"`{ref}`" for ref in r["unresolved"])
            for r in unresolved
        ]
    scored = [r for r in run["results"] if r["scored"]]
    worst = sorted(scored, key=lambda r: (r["metrics"]["MRR"], r["metrics"]["recall@k"]))
    worst = [r for r in worst if r["metrics"]["recall@k"] < 1.0][:WORST_LISTED]
    if worst:
        lines += ["", "## Furthest from their gold", "", "| id | MRR | recall@k | query |"]
        lines.append("|---|---|---|---|")
        lines += [
            f"| {_cell(r['id'])} | {r['metrics']['MRR']:.3f} | {r['metrics']['recall@k']:.3f} "
            f"| {_cell(r['query'][:120])} |"
            for r in worst
        ]
    return "\n".join(lines) + "\n"


def table_markdown(title: str, text: str) -> str:
    """``report.md`` of ``eval locomo|beir|gold --out``: the printed report, as it printed."""
    return f"# {title}\n\n```\n{text}\n```\n"
