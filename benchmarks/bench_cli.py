"""Whole-process latency of the read commands: ``memtrove search`` as a user runs it, against a
plain stdlib-sqlite3 FTS5 script on the same notes.

Uses the generated corpus of ``--size`` notes (default 10,000; ``corpus.py``) and the cached
indexes of ``bench_search.py`` under ``.bench/`` (built when missing): the memtrove vault
``.bench/vault-<n>`` (embedded here once, for ``vsearch`` and ``query``, if it has no
vectors) and the baseline database ``.bench/baseline-<n>.sqlite``. Every figure is one
command run as a new process (``subprocess.run``, output captured), timed from start to
exit with ``time.perf_counter``:

baseline
    ``python .bench/fts_baseline.py QUERY``: ``import sqlite3``, the query's words quoted and
    OR-ed, ``SELECT ... WHERE t MATCH ? ORDER BY rank LIMIT 10``, then each hit's path and
    title printed. The floor: an interpreter, an FTS5 query and nothing else.
search (cold)
    ``memtrove search QUERY`` with ``MEMTROVE_SERVER=off``: the lean read path, which opens
    the vault in-process.
search (serve)
    the same with ``memtrove serve`` running for the vault: the search is handed to it.
search (typer)
    the same through the full Typer CLI (``MEMTROVE_LEAN=off``), as every command ran
    before the lean path.
vsearch, query, get, status
    cold and, for the searches, with the server running.

Each of ``--queries`` queries (default 6: a word, keywords, a question, code identifiers, a
phrase, a long prompt) runs ``--runs`` times (default 5) in every mode, the modes
interleaved within each round so that machine noise falls on all of them alike (the
baseline runs again beside the served ones); ``get`` and ``status`` run ``--runs`` times
twice over. One untimed run of each mode first writes the bytecode (to ``.bench/pycache``),
as an installed package has it. Reported: p50 and p95 (linear interpolation) in
milliseconds, and p50 over the baseline's p50.

Run from the repository root::

    .venv/bin/python benchmarks/bench_cli.py [--size 10000] [--runs 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench_search import open_baseline_for, open_vault
from corpus import BENCH_DIR, corpus_dir, generate_corpus, generate_labelled_queries, percentile

BASELINE_SCRIPT = """\
import re, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
words = list(dict.fromkeys(re.findall(r"[^\\W_]+", " ".join(sys.argv[2:]).lower())))
expression = " OR ".join('"' + word + '"' for word in words)
sql = "SELECT rowid, bm25(t) FROM t WHERE t MATCH ? ORDER BY rank LIMIT 10"
for rowid, score in db.execute(sql, (expression,)).fetchall() if words else []:
    path, title = db.execute("SELECT path, title FROM t WHERE rowid = ?", (rowid,)).fetchone()
    print(f"{score:.3f}  {path}  {title}")
"""
CLASSES = ("word", "keywords", "question", "code", "phrase", "long")
START_TIMEOUT = 120.0


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def environment(size: int) -> dict[str, str]:
    """The commands' environment: the bench vault, a private cache folder (where ``serve``
    publishes itself), and bytecode kept as an installed package keeps it."""
    home = BENCH_DIR / f"vault-{size}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMTROVE_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env | {
        "MEMTROVE_VAULT": str(home / "vault.sqlite"),
        "MEMTROVE_CONFIG_DIR": str(home / "config"),
        "XDG_CACHE_HOME": str(BENCH_DIR / "cli-cache"),
        "PYTHONPYCACHEPREFIX": str(BENCH_DIR / "pycache"),
    }


def pick_queries(size: int, count: int) -> list[str]:
    """One query of each class in turn (``count`` in all), from the corpus's queries."""
    labelled = generate_labelled_queries(200, corpus=corpus_dir(size))
    picked: list[str] = []
    for index in range(count):
        wanted = CLASSES[index % len(CLASSES)]
        pool = [text for kind, text in labelled if kind == wanted and text not in picked]
        picked.append((pool or [text for _, text in labelled if text not in picked])[0])
    return picked


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, timeout=300)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{command[-3:]} exited {done.returncode}: {done.stderr[-500:]!r}")
    return elapsed


@contextmanager
def served(env: dict[str, str]) -> Iterator[None]:
    """``memtrove serve --port 0`` on the bench vault until the block ends."""
    servers = Path(env["XDG_CACHE_HOME"]) / "memtrove" / "servers"
    for stale in servers.glob("*.json") if servers.is_dir() else []:
        stale.unlink()
    command = [sys.executable, "-m", "memtrove", "serve", "--port", "0"]
    with (BENCH_DIR / "cli-serve.log").open("wb") as sink:  # its warnings, if any
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=sink)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not (servers.is_dir() and any(servers.glob("*.json"))):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"memtrove serve did not start (exit {process.poll()})")
            time.sleep(0.05)
        yield
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def prepare(size: int, env: dict[str, str]) -> tuple[Path, str]:
    """The corpus, vault (embedded) and baseline; returns (baseline file, a docid)."""
    folder = corpus_dir(size)
    generate_corpus(folder, size)
    vault = open_vault(size, folder)
    try:
        if vault.documents.index_stats().vectors == 0:
            started = time.perf_counter()
            report = vault.embed()
            log(f"embedded {report.fragments} fragments in {time.perf_counter() - started:.1f} s")
        docid = vault.list(1)[0].docid
    finally:
        vault.close()
    open_baseline_for(size, folder).close()
    (BENCH_DIR / "fts_baseline.py").write_text(BASELINE_SCRIPT, encoding="utf-8")
    return BENCH_DIR / f"baseline-{size}.sqlite", docid


Modes = dict[str, tuple[list[str], dict[str, str]]]


def run_rounds(modes: Modes, queries: list[str], runs: int) -> dict[str, list[float]]:
    """Each mode's times: one untimed run (bytecode, caches), then ``runs`` rounds of every
    query (none: ``[""]``), modes interleaved."""
    times: dict[str, list[float]] = {name: [] for name in modes}
    for round_ in range(runs + 1):
        for query in queries[:1] if round_ == 0 else queries:
            for name, (command, env) in modes.items():
                elapsed = timed([*command, query] if query else command, env)
                if round_:
                    times[name].append(elapsed)
    return times


def benchmark(size: int, count: int, runs: int) -> dict[str, Any]:
    env = environment(size)
    baseline_db, docid = prepare(size, env)
    queries = pick_queries(size, count)
    memtrove = [sys.executable, "-m", "memtrove"]
    cold = env | {"MEMTROVE_SERVER": "off"}
    searches = {
        "baseline": ([sys.executable, str(BENCH_DIR / "fts_baseline.py"), str(baseline_db)], env),
        "search (cold)": ([*memtrove, "search"], cold),
        "search (typer)": ([*memtrove, "search"], cold | {"MEMTROVE_LEAN": "off"}),
        "vsearch (cold)": ([*memtrove, "vsearch"], cold),
        "query (cold)": ([*memtrove, "query"], cold),
    }
    reads = {
        "get (cold)": ([*memtrove, "get", f"#{docid}"], cold),
        "status (cold)": ([*memtrove, "status"], cold),
    }
    log(f"{len(queries)} queries x {runs} runs: {queries}")
    times = run_rounds(searches, queries, runs)
    times |= run_rounds(reads, [""], runs * 2)
    with served(env):
        warm: Modes = {
            "baseline": searches["baseline"],
            "search (serve)": ([*memtrove, "search"], env),
            "vsearch (serve)": ([*memtrove, "vsearch"], env),
            "query (serve)": ([*memtrove, "query"], env),
        }
        served_times = run_rounds(warm, queries, runs)
    times["baseline"] += served_times.pop("baseline")
    times |= served_times
    base = percentile(times["baseline"], 0.5)
    rows = {
        name: {
            "p50_ms": round(percentile(values, 0.5) * 1000, 1),
            "p95_ms": round(percentile(values, 0.95) * 1000, 1),
            "runs": len(values),
            "ratio_p50": round(percentile(values, 0.5) / base, 2),
        }
        for name, values in times.items()
    }
    return {"notes": size, "queries": queries, "runs": runs, "commands": rows}


def markdown(report: dict[str, Any]) -> str:
    lines = [
        f"| command ({report['notes']:,} notes) | p50 | p95 | p50 ÷ baseline p50 |",
        "|---|---:|---:|---:|",
    ]
    for name, row in report["commands"].items():
        lines.append(
            f"| {name} | {row['p50_ms']:.1f} ms | {row['p95_ms']:.1f} ms | {row['ratio_p50']:.2f}× |"
        )
    lines.append("")
    lines.append(
        f"Whole processes, {len(report['queries'])} queries x {report['runs']} runs each "
        "(get and status: 2 x runs); baseline = plain stdlib sqlite3 FTS5 script."
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=10_000, help="corpus size (default 10000)")
    parser.add_argument("--queries", type=int, default=6, help="queries (default 6)")
    parser.add_argument("--runs", type=int, default=5, help="runs of each query (default 5)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if min(args.size, args.queries, args.runs) < 1:
        parser.error("--size, --queries and --runs must be positive")
    report = benchmark(args.size, args.queries, args.runs)
    print(json.dumps(report, indent=2, ensure_ascii=False) if args.json else markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
