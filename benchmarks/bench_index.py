"""Indexing throughput: memtrove against the least an FTS5 indexer could do.

For each corpus size (``--sizes``, default 1,000 and 10,000 notes of ~2 KB, generated once
by ``corpus.py`` under ``.bench/corpus-<n>`` and reused), this measures with
``time.perf_counter``:

memtrove
    *full index*: ``Vault.open`` on a fresh vault file (and config folder) in a temporary
    folder, ``add_collection`` and ``update()``; reported as notes per second (the time
    includes opening and migrating the new vault).
    *no-change re-run*: a second ``update()`` on the same open vault, nothing having
    changed (a folder walk plus a stat per file); reported in seconds.

baseline (plain FTS5, same process, same driver: ``sqlean``)
    *full index*: a fresh SQLite file (WAL, synchronous=NORMAL), one table
    ``fts5(path, title, body, tokenize='porter unicode61')`` and one ``files(path, size,
    mtime_ns)`` table; walk the folder, read every file, insert path, title (first ``# ``
    line) and the whole text, one transaction per 200 files; notes per second.
    *re-run*: load ``{path: (size, mtime)}`` from ``files``, walk and stat every file and
    compare; seconds.

``ratio`` is baseline notes/s divided by memtrove notes/s: how many times longer memtrove
takes to index the same notes (higher means memtrove is slower). Every run uses fresh
database files on the same filesystem as the corpus (``.bench/tmp``), after one untimed
pass that reads every note so both sides start with the same warm page cache. Sizes under
10,000 are measured ``--repeats`` times (median reported); 10,000 and above once.

Run from the repository root::

    .venv/bin/python benchmarks/bench_index.py [--sizes 1000,10000] [--repeats 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from corpus import (
    BENCH_DIR,
    baseline_rescan,
    build_baseline,
    corpus_dir,
    generate_corpus,
    iter_markdown,
)
from memtrove import Vault

LARGE = 10_000


@dataclass(frozen=True)
class Run:
    memtrove_index_s: float
    memtrove_rerun_s: float
    baseline_index_s: float
    baseline_rerun_s: float
    memtrove_bytes: int
    baseline_bytes: int


@dataclass(frozen=True)
class Result:
    notes: int
    corpus_bytes: int
    runs: int
    memtrove_index_s: float
    memtrove_docs_per_s: float
    baseline_index_s: float
    baseline_docs_per_s: float
    ratio: float
    memtrove_rerun_s: float
    baseline_rerun_s: float
    memtrove_vault_bytes: int
    baseline_db_bytes: int


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def database_bytes(path: Path) -> int:
    return sum(
        candidate.stat().st_size for candidate in (path, Path(f"{path}-wal")) if candidate.exists()
    )


def warm_page_cache(folder: Path) -> int:
    """Read every note once (untimed); returns the corpus size in bytes."""
    total = 0
    for file in iter_markdown(folder):
        with open(file.absolute, "rb") as handle:
            total += len(handle.read())
    return total


def measure_memtrove(folder: Path, work: Path, notes: int) -> tuple[float, float, int]:
    vault_path = work / "vault.sqlite"
    started = time.perf_counter()
    with Vault.open(vault_path, config_dir=work / "config") as vault:
        vault.add_collection(folder, name="bench")
        report = vault.update()
        full = time.perf_counter() - started
        if report.added != notes or report.skipped:
            raise RuntimeError(f"memtrove indexed {report.added} of {notes} notes: {report}")
        started = time.perf_counter()
        again = vault.update()
        rerun = time.perf_counter() - started
        if again.unchanged != notes or again.added or again.updated or again.removed:
            raise RuntimeError(f"memtrove re-run was not a no-op: {again}")
    return full, rerun, database_bytes(vault_path)


def measure_baseline(folder: Path, work: Path, notes: int) -> tuple[float, float, int]:
    db_path = work / "baseline.sqlite"
    started = time.perf_counter()
    indexed = build_baseline(folder, db_path)
    full = time.perf_counter() - started
    if indexed != notes:
        raise RuntimeError(f"baseline indexed {indexed} of {notes} notes")
    started = time.perf_counter()
    changed = baseline_rescan(folder, db_path)
    rerun = time.perf_counter() - started
    if changed:
        raise RuntimeError(f"baseline re-run found {changed} changed files")
    return full, rerun, database_bytes(db_path)


def measure(notes: int, repeats: int) -> Result:
    folder = corpus_dir(notes)
    log(f"[{notes}] corpus {folder} ...")
    generate_corpus(folder, notes)
    corpus_bytes = warm_page_cache(folder)
    runs: list[Run] = []
    scratch = BENCH_DIR / "tmp"
    scratch.mkdir(parents=True, exist_ok=True)
    for attempt in range(1, repeats + 1):
        with tempfile.TemporaryDirectory(prefix="index-", dir=scratch) as raw:
            work = Path(raw)
            (work / "m").mkdir()
            (work / "b").mkdir()
            m_full, m_rerun, m_bytes = measure_memtrove(folder, work / "m", notes)
            log(f"[{notes}] run {attempt}: memtrove {m_full:.2f} s, re-run {m_rerun:.3f} s")
            b_full, b_rerun, b_bytes = measure_baseline(folder, work / "b", notes)
            log(f"[{notes}] run {attempt}: baseline {b_full:.2f} s, re-run {b_rerun:.3f} s")
            runs.append(Run(m_full, m_rerun, b_full, b_rerun, m_bytes, b_bytes))
    m_full = statistics.median(run.memtrove_index_s for run in runs)
    b_full = statistics.median(run.baseline_index_s for run in runs)
    return Result(
        notes=notes,
        corpus_bytes=corpus_bytes,
        runs=len(runs),
        memtrove_index_s=round(m_full, 4),
        memtrove_docs_per_s=round(notes / m_full, 1),
        baseline_index_s=round(b_full, 4),
        baseline_docs_per_s=round(notes / b_full, 1),
        ratio=round(m_full / b_full, 2),
        memtrove_rerun_s=round(statistics.median(run.memtrove_rerun_s for run in runs), 4),
        baseline_rerun_s=round(statistics.median(run.baseline_rerun_s for run in runs), 4),
        memtrove_vault_bytes=runs[-1].memtrove_bytes,
        baseline_db_bytes=runs[-1].baseline_bytes,
    )


def markdown_table(results: list[Result]) -> str:
    lines = [
        "| notes | memtrove full index (docs/s) | baseline (docs/s) | ratio "
        "| memtrove no-change re-run (s) | baseline re-run (s) |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r.notes:,} | {r.memtrove_docs_per_s:,.0f} | {r.baseline_docs_per_s:,.0f} "
            f"| {r.ratio:.1f}× | {r.memtrove_rerun_s:.3f} | {r.baseline_rerun_s:.3f} |"
        )
    return "\n".join(lines)


def parse_sizes(text: str) -> list[int]:
    try:
        sizes = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of integers: {text!r}") from None
    if not sizes or any(size < 1 for size in sizes):
        raise argparse.ArgumentTypeError("sizes must be positive integers")
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--sizes",
        type=parse_sizes,
        default=[1_000, 10_000],
        help="comma-separated corpus sizes in notes (default 1000,10000)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help=f"runs per size below {LARGE:,} notes, median reported (default 3)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    results = [measure(size, 1 if size >= LARGE else max(1, args.repeats)) for size in args.sizes]
    if args.json:
        print(json.dumps([asdict(result) for result in results], indent=2))
    else:
        print(markdown_table(results))
        print()
        print(
            "ratio = baseline docs/s ÷ memtrove docs/s (how many times longer memtrove takes); "
            + "; ".join(
                f"{r.notes:,} notes: {r.corpus_bytes / 1e6:.1f} MB of markdown, memtrove vault "
                f"{r.memtrove_vault_bytes / 1e6:.1f} MB, baseline {r.baseline_db_bytes / 1e6:.1f} MB"
                f" ({r.runs} run{'s' if r.runs > 1 else ''})"
                for r in results
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
