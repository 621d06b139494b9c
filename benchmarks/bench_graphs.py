"""``build_graphs`` at scale: seconds and peak memory on the embedded benchmark vault.

Uses the generated corpus of ``--size`` notes (default 10,000; ``corpus.py``) indexed and
embedded with the bundled wordllama model in ``.bench/graphs-<n>/base.sqlite`` (built once
and reused: copied from ``bench_retrieval.py``'s vault when that one has vectors, else
indexed and embedded here). Each run copies that edge-free base to a fresh file and, in a
child process (so peak RSS is this work's alone), opens it and times:

1. ``build_graphs(["all"])`` from nothing: the temporal backbone plus semantic kNN edges
   (cosine >= 0.7, 5 neighbours per document);
2. the same call again (idempotent: nothing new).

Reports seconds for each, the edges written, and the child's peak RSS (``ru_maxrss``, which
includes the interpreter, numpy and the open vault). Targets: <= 60 s and <= 500 MB at 10k
documents. Run from the repository root::

    .venv/bin/python benchmarks/bench_graphs.py [--size 10000] [--repeats 1] [--json]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import BENCH_DIR, corpus_dir, generate_corpus
from memtrove import Vault
from memtrove.db.connection import copy_database, open_connection


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _vector_count(path: Path) -> int:
    connection = open_connection(path)
    try:
        row = connection.execute(
            "SELECT COUNT(*) FROM sqlite_master WHERE name = 'content_vectors'"
        ).fetchone()
        if not row[0]:
            return 0
        return int(connection.execute("SELECT COUNT(*) FROM content_vectors").fetchone()[0])
    finally:
        connection.close()


def base_vault(size: int) -> Path:
    """The embedded, edge-free vault every run starts from (built once)."""
    home = BENCH_DIR / f"graphs-{size}"
    base = home / "base.sqlite"
    if base.exists() and _vector_count(base) > 0:
        return base
    home.mkdir(parents=True, exist_ok=True)
    base.unlink(missing_ok=True)
    retrieval = BENCH_DIR / f"retrieval-{size}" / "vault.sqlite"
    if retrieval.exists() and _vector_count(retrieval) > 0:
        log(f"copying the embedded vault {retrieval} ...")
        connection = open_connection(retrieval)
        try:
            copy_database(connection, base)
        finally:
            connection.close()
    else:
        folder = corpus_dir(size)
        generate_corpus(folder, size)
        log(f"indexing and embedding {size} notes into {base} (once) ...")
        with Vault.open(base, config_dir=home / "config") as vault:
            vault.add_collection(folder, name="bench")
            vault.update()
            vault.embed()
    connection = open_connection(base)
    try:
        connection.execute("DELETE FROM memory_relations")
        connection.commit()
    finally:
        connection.close()
    return base


def child(path: Path) -> None:
    """Run in the child: open the copy, build twice, print one JSON line."""
    with Vault.open(path, config_dir=path.parent / "config") as vault:
        started = time.perf_counter()
        first = vault.graph.build_graphs(["all"])
        first_seconds = time.perf_counter() - started
        started = time.perf_counter()
        again = vault.graph.build_graphs(["all"])
        again_seconds = time.perf_counter() - started
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "documents": first.documents,
                "seconds": round(first_seconds, 2),
                "rerun_seconds": round(again_seconds, 2),
                "temporal": first.temporal,
                "semantic": first.semantic,
                "rerun_new": again.new_edges,
                "peak_rss_mb": round(peak_kb / 1024, 1),
            }
        )
    )


def run_once(base: Path) -> dict[str, float]:
    with tempfile.TemporaryDirectory(dir=BENCH_DIR) as folder:
        copy = Path(folder) / "vault.sqlite"
        connection = open_connection(base)
        try:
            copy_database(connection, copy)
        finally:
            connection.close()
        result = subprocess.run(
            [sys.executable, __file__, "--child", str(copy)],
            capture_output=True,
            text=True,
            check=True,
        )
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    base = base_vault(args.size)
    runs = []
    for number in range(max(1, args.repeats)):
        outcome = run_once(base)
        log(f"run {number + 1}: {outcome}")
        runs.append(outcome)
    summary = {
        "size": args.size,
        "documents": runs[0]["documents"],
        "seconds": statistics.median(run["seconds"] for run in runs),
        "rerun_seconds": statistics.median(run["rerun_seconds"] for run in runs),
        "temporal": runs[0]["temporal"],
        "semantic": runs[0]["semantic"],
        "rerun_new": max(run["rerun_new"] for run in runs),
        "peak_rss_mb": max(run["peak_rss_mb"] for run in runs),
    }
    if args.json:
        print(json.dumps(summary))
        return 0
    print(
        "| documents | build_graphs (s) | rerun (s) | temporal edges | semantic edges | peak RSS (MB) |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {summary['documents']:,} | {summary['seconds']:.1f} | {summary['rerun_seconds']:.1f} "
        f"| {summary['temporal']:,} | {summary['semantic']:,} | {summary['peak_rss_mb']:.0f} |"
    )
    print("targets at 10k documents: <= 60 s, <= 500 MB; the rerun adds nothing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
