"""``memtrove eval run --gold FILE``: ClawMem's offline eval with its trust gate.

Replays the gold set through the ``query`` profile on the vault (global ``--vault``) or on a
read-only snapshot (``--db``), writes ``run.json`` and ``report.md`` to ``--out`` (default
``eval-runs/<UTC time>-query``), prints the figures, and exits 1 when the trust gate fails:
fewer than ``--min-examples`` scored examples, any unresolved gold reference, or no
``--audited`` attestation. The files are written either way, so a failed gate can be read.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer

from memtrove.cli.common import fail, open_vault, print_json, state, user_errors
from memtrove.eval.gold import load_gold
from memtrove.eval.replay import (
    DEFAULT_LIMIT,
    DEFAULT_MIN_EXAMPLES,
    PROFILES,
    RUN_METRICS,
    replay,
    trust_gate,
)
from memtrove.eval.run_files import build_run, default_out, prepare_out, run_markdown, write_run
from memtrove.locations import shown_location
from memtrove.vault import Vault

__all__ = ["run"]


@contextlib.contextmanager
def _vault(ctx: typer.Context, db: str | None) -> Iterator[tuple[Vault, str]]:
    """The vault to replay on and how to name it: the snapshot ``db`` (read-only) when
    given, else the global vault."""
    if db is None:
        with open_vault(ctx, create=False) as vault:
            yield vault, shown_location(state(ctx).settings.vault_path)
        return
    from memtrove.vault.snapshot import open_snapshot

    with user_errors(), open_snapshot(db, config_dir=state(ctx).settings.config_dir) as vault:
        yield vault, shown_location(db)


def run(
    ctx: typer.Context,
    gold: Path = typer.Option(..., "--gold", help="Gold JSONL file (one judged query per line)."),
    profile: str = typer.Option(
        "query", "--profile", help="Retrieval profile to replay (only 'query' is implemented)."
    ),
    limit: int = typer.Option(
        DEFAULT_LIMIT, "--limit", min=1, max=100, help="Results per query (k of the metrics)."
    ),
    min_examples: int = typer.Option(
        DEFAULT_MIN_EXAMPLES,
        "--min-examples",
        min=0,
        help="Trust gate: at least this many scored examples.",
    ),
    audited: bool = typer.Option(
        False, "--audited", help="Trust gate: attest that a person audited the gold labels."
    ),
    out: Path | None = typer.Option(
        None, "--out", help="Folder for run.json and report.md (default eval-runs/<time>-query)."
    ),
    db: str | None = typer.Option(
        None, "--db", help="Replay on this vault snapshot (must exist; opened read-only)."
    ),
    progress: bool = typer.Option(False, "--progress", help="Report progress on stderr."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Replay a gold set (query profile): Jaccard, precision@k, recall@k, hit@k, MRR,
    nDCG@k and latency, written to run.json and report.md; exit 1 when the trust gate fails."""
    if profile not in PROFILES:
        raise fail(f"--profile {profile!r} is not implemented; known: {', '.join(PROFILES)}", 2)
    with user_errors():
        examples = load_gold(gold)
    started_at = datetime.now(UTC)
    started = time.perf_counter()
    with _vault(ctx, db) as (vault, label), user_errors():
        folder = prepare_out(out if out is not None else default_out(started_at, profile))
        results = replay(
            vault, examples, profile=profile, limit=limit, progress=_progress(progress)
        )
    gate = trust_gate(results, min_examples=min_examples, audited=audited)
    record = build_run(
        results,
        gate,
        profile=profile,
        limit=limit,
        gold=gold,
        vault=label,
        snapshot=db is not None,
        started_at=started_at,
        elapsed_seconds=time.perf_counter() - started,
    )
    with user_errors():
        run_file, report_file = write_run(folder, record, run_markdown(record))
    if as_json:
        print_json({**record, "out": str(folder)})
    else:
        typer.echo(_text(record, run_file, report_file))
    if not gate.passed:
        raise fail(f"trust gate failed: {'; '.join(gate.reasons)}")


def _progress(enabled: bool) -> Any:
    if not enabled:
        return None

    def report(done: int, total: int, what: str) -> None:
        print(f"[{done}/{total}] {what}", file=sys.stderr, flush=True)

    return report


def _text(record: dict[str, Any], run_file: Path, report_file: Path) -> str:
    """The figures as printed: heading, one metric table row, latency, gate, files."""
    gate = record["gate"]
    skipped = "".join(f", {count} {why}" for why, count in record["skipped"].items())
    widths = [max(9, len(name) + 2) for name in RUN_METRICS]
    header = "".join(f"{name:>{width}}" for name, width in zip(RUN_METRICS, widths, strict=True))
    values = "".join(
        f"{record['metrics'][name]:>{width}.3f}"
        for name, width in zip(RUN_METRICS, widths, strict=True)
    )
    lines = [
        f"eval run  profile={record['profile']}  top {record['limit']}  gold {record['gold']['path']}",
        f"examples  {record['examples']}, scored {gate['scored_examples']}{skipped}",
        "",
        header,
        values,
        "",
        f"latency   p50 {record['latency_ms']['p50']:.1f} ms   p95 "
        f"{record['latency_ms']['p95']:.1f} ms",
        f"gate      {'passed' if gate['passed'] else 'FAILED'}",
    ]
    lines += [f"  - {reason}" for reason in gate["reasons"]]
    if record["query_errors"]:
        lines.append(f"note      {record['query_errors']} queries could not be searched (run.json)")
    lines += [f"run       {run_file}", f"report    {report_file}"]
    return "\n".join(lines)
