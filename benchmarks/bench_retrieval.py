"""Vector and hybrid retrieval: embedding throughput, then vsearch / hybrid / query latency.

Uses the generated corpus of ``--size`` notes (default 10,000; ``corpus.py``) in its own
vault, ``.bench/retrieval-<n>/vault.sqlite``, so the BM25 benchmark's vault is untouched:

1. ``update()`` indexes the corpus (a no-op when current).
2. ``embed(force=True)`` embeds every fragment with the embedded wordllama model, timed
   from start to commit: fragments per second, including reading fragments, the model and
   writing vectors to sqlite-vec. ``--skip-embed`` reuses the vectors already there.
3. The same ``--queries`` generated queries (default 200, the classes of
   ``bench_search.py``) run through ``search`` (BM25 only), ``vsearch``, ``hybrid`` and
   ``query`` (no model server: the stages an LLM or a reranker would feed are skipped),
   ``--repeats`` rounds each (default 3); each query counts with its median. The first 20
   queries run once untimed, to warm caches and load the model.

Reports p50 / p95 / mean per method in milliseconds and each method's ratio to BM25 search
in the same run (higher means slower). Run from the repository root::

    .venv/bin/python benchmarks/bench_retrieval.py [--size 10000] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from corpus import BENCH_DIR, corpus_dir, generate_corpus, generate_labelled_queries, percentile
from memtrove import Vault

METHODS = ("search", "vsearch", "hybrid", "query")


@dataclass
class Latency:
    method: str
    p50_ms: float
    p95_ms: float
    mean_ms: float
    ratio_p50: float = 1.0


@dataclass
class Report:
    size: int
    documents: int
    fragments: int
    embed_seconds: float
    fragments_per_second: float
    queries: int
    repeats: int
    latencies: list[Latency]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def open_vault(size: int, folder: Path) -> Vault:
    home = BENCH_DIR / f"retrieval-{size}"
    vault = Vault.open(home / "vault.sqlite", config_dir=home / "config")
    if not any(collection.path == folder.resolve() for collection in vault.collections()):
        vault.add_collection(folder, name="bench")
    started = time.perf_counter()
    report = vault.update()
    log(f"vault {vault.path}: {report.summary} in {time.perf_counter() - started:.1f} s")
    return vault


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def time_method(
    call: Callable[[str], object], queries: list[str], repeats: int
) -> tuple[float, float, float]:
    per_query: list[list[float]] = [[] for _ in queries]
    for _ in range(repeats):
        for index, query in enumerate(queries):
            started = time.perf_counter()
            call(query)
            per_query[index].append((time.perf_counter() - started) * 1000)
    medians = [_median(values) for values in per_query]
    return percentile(medians, 0.5), percentile(medians, 0.95), statistics.fmean(medians)


def benchmark(size: int, count: int, repeats: int, skip_embed: bool) -> Report:
    folder = corpus_dir(size)
    generate_corpus(folder, size)
    vault = open_vault(size, folder)
    status = vault.status()
    embed_seconds = 0.0
    fragments = status.fragments
    if not skip_embed:
        log(f"embedding {status.fragments} fragments of {status.documents} notes ...")
        started = time.perf_counter()
        embedded = vault.embed(force=True)
        embed_seconds = time.perf_counter() - started
        fragments = embedded.fragments
        log(f"embedded {fragments} fragments in {embed_seconds:.1f} s")
    labelled = generate_labelled_queries(count + 20, corpus=folder)
    queries = [text for _, text in labelled]
    warmup, timed = queries[:20], queries[20:]
    calls: dict[str, Callable[[str], object]] = {
        "search": lambda q: vault.search(q, limit=10),
        "vsearch": lambda q: vault.vsearch(q, limit=10),
        "hybrid": lambda q: vault.hybrid(q, limit=10),
        "query": lambda q: vault.query(q, limit=10),
    }
    for call in calls.values():
        for query in warmup:
            call(query)
    latencies: list[Latency] = []
    for method in METHODS:
        p50, p95, mean = time_method(calls[method], timed, repeats)
        latencies.append(Latency(method, round(p50, 2), round(p95, 2), round(mean, 2)))
        log(f"{method}: p50 {p50:.1f} ms, p95 {p95:.1f} ms")
    base = latencies[0].p50_ms or 1.0
    for latency in latencies:
        latency.ratio_p50 = round(latency.p50_ms / base, 2)
    vault.close()
    return Report(
        size=size,
        documents=status.documents,
        fragments=fragments,
        embed_seconds=round(embed_seconds, 2),
        fragments_per_second=round(fragments / embed_seconds, 1) if embed_seconds else 0.0,
        queries=len(timed),
        repeats=repeats,
        latencies=latencies,
    )


def markdown(report: Report) -> str:
    lines = [
        f"{report.size} notes, {report.fragments} fragments; {report.queries} queries x "
        f"{report.repeats} rounds",
    ]
    if report.embed_seconds:
        lines.append(
            f"embedding: {report.fragments_per_second:,.0f} fragments/s "
            f"({report.fragments} in {report.embed_seconds:.1f} s)"
        )
    lines += ["", "| method | p50 ms | p95 ms | mean ms | p50 / search |", "|---|---|---|---|---|"]
    for item in report.latencies:
        lines.append(
            f"| {item.method} | {item.p50_ms:.1f} | {item.p95_ms:.1f} | {item.mean_ms:.1f} | "
            f"{item.ratio_p50:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-embed", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = benchmark(args.size, args.queries, args.repeats, args.skip_embed)
    if args.json:
        print(json.dumps(asdict(report), indent=2))
    else:
        print(markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
