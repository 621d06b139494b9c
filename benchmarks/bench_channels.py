"""What the conditional channels of ``query`` cost: ordinary questions, and ones that trigger.

Uses a copy of ``bench_retrieval.py``'s vault of the generated corpus (``--size`` notes,
default 10,000, embedded with wordllama): ``.bench/channels-<n>/vault.sqlite``, with
entities extracted once (``enrich_entities`` without an LLM), so the entity lookup every
question makes runs against a full ``entity_nodes`` table. Run ``bench_retrieval.py``
first (it builds and embeds the vault this one copies).

The generated queries (``corpus.py``, the classes of ``bench_search.py``) are split by
whether a channel fires: questions naming no time and no known entity (the latency the
channels must not raise) and those that trigger one. Each set runs through ``query`` two
ways in alternating rounds (``--repeats``, default 5; each query counts with its median):

channels
    the pipeline as it is.
baseline
    the same pipeline in the same process with both triggers switched off (the time
    reading and the entity lookup replaced by "none"): the query path before the channels.

Reports p50 / p95 in milliseconds and the p50 ratio channels / baseline per set. The
machine is shared: read medians, and rerun when a figure looks off. Run from the
repository root::

    .venv/bin/python benchmarks/bench_channels.py [--size 10000] [--queries 200] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime

from corpus import BENCH_DIR, corpus_dir, generate_labelled_queries, percentile
from memtrove import Vault
from memtrove.retrieval import pipeline
from memtrove.retrieval.entity_channel import named_entities
from memtrove.retrieval.temporal import time_constraint


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def open_copy(size: int) -> Vault:
    source = BENCH_DIR / f"retrieval-{size}"
    home = BENCH_DIR / f"channels-{size}"
    if not (home / "vault.sqlite").exists():
        if not (source / "vault.sqlite").exists():
            raise SystemExit(f"run benchmarks/bench_retrieval.py --size {size} first")
        shutil.copytree(source, home, dirs_exist_ok=True)
    vault = Vault.open(home / "vault.sqlite", config_dir=home / "config")
    started = time.perf_counter()
    report = vault.knowledge.enrich_entities(use_llm=False)
    if report["documents"]:
        log(f"entities: {report['documents']} documents in {time.perf_counter() - started:.1f} s")
    return vault


def _off() -> Callable[[], None]:
    """Switch both triggers off; returns the function that switches them back on."""
    saved = (pipeline.time_constraint, pipeline.named_entities)
    pipeline.time_constraint = lambda query, now: None  # type: ignore[assignment]
    pipeline.named_entities = lambda connection, query: []  # type: ignore[assignment]

    def restore() -> None:
        pipeline.time_constraint, pipeline.named_entities = saved

    return restore


def timed(vault: Vault, queries: list[str], repeats: int) -> dict[str, tuple[float, float]]:
    samples: dict[str, list[list[float]]] = {
        way: [[] for _ in queries] for way in ("channels", "baseline")
    }
    for _ in range(repeats):
        for way in ("channels", "baseline"):
            restore = _off() if way == "baseline" else None
            try:
                for index, query in enumerate(queries):
                    started = time.perf_counter()
                    vault.query(query, limit=10)
                    samples[way][index].append((time.perf_counter() - started) * 1000)
            finally:
                if restore:
                    restore()
    out: dict[str, tuple[float, float]] = {}
    for way, per_query in samples.items():
        medians = [statistics.median(values) for values in per_query]
        out[way] = (percentile(medians, 0.5), percentile(medians, 0.95))
    return out


def benchmark(size: int, count: int, repeats: int) -> dict[str, object]:
    vault = open_copy(size)
    now = datetime.now(UTC)
    labelled = generate_labelled_queries(count + 20, corpus=corpus_dir(size))
    queries = [text for _, text in labelled]
    connection = vault._connection
    plain = [
        q for q in queries[20:] if not time_constraint(q, now) and not named_entities(connection, q)
    ]
    triggering = [q for q in queries[20:] if q not in plain]
    for query in queries[:20]:
        vault.query(query, limit=10)
    report: dict[str, object] = {"size": size, "repeats": repeats}
    for name, chosen in (("plain", plain), ("triggering", triggering)):
        if not chosen:
            continue
        figures = timed(vault, chosen, repeats)
        channels, baseline = figures["channels"], figures["baseline"]
        report[name] = {
            "queries": len(chosen),
            "channels_p50_ms": round(channels[0], 2),
            "channels_p95_ms": round(channels[1], 2),
            "baseline_p50_ms": round(baseline[0], 2),
            "baseline_p95_ms": round(baseline[1], 2),
            "ratio_p50": round(channels[0] / baseline[0], 3) if baseline[0] else None,
        }
        log(f"{name}: {report[name]}")
    vault.close()
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = benchmark(args.size, args.queries, args.repeats)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{args.size} notes; {args.repeats} alternating rounds; p50 / p95 ms")
    print("| questions | n | channels | baseline | p50 ratio |")
    print("|---|---|---|---|---|")
    for name in ("plain", "triggering"):
        row = report.get(name)
        if isinstance(row, dict):
            print(
                f"| {name} | {row['queries']} | {row['channels_p50_ms']:.1f} / "
                f"{row['channels_p95_ms']:.1f} | {row['baseline_p50_ms']:.1f} / "
                f"{row['baseline_p95_ms']:.1f} | {row['ratio_p50']:.3f} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
