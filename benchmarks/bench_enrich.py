"""A-MEM enrichment without an LLM on the 10k-note benchmark vault: documents per second.

Uses the vault ``bench_retrieval.py`` builds and caches (``.bench/retrieval-<n>/``: the
generated corpus, indexed and embedded; built here when missing). Enrichment runs on a
scratch copy, so the cached vault is never enriched. Two runs, each over every document
(``force``): the whole pipeline (notes from salient terms, cosine links to vector
neighbours, entities by the heuristic) and the A-MEM part alone (``entities=False``); then a
second, unforced run that must find nothing to do. Each of ``--runs`` rounds works on a
fresh copy; the figures are medians, with the slowest and fastest rate beside them (the
same code moves by a quarter with the machine's load). Run from the repository root::

    .venv/bin/python benchmarks/bench_enrich.py [--size 10000] [--runs 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from bench_retrieval import log, open_vault
from corpus import corpus_dir, generate_corpus

FLOOR = 500.0  # documents per second, the acceptance figure


def benchmark(size: int, runs: int = 3) -> dict[str, object]:
    folder = corpus_dir(size)
    generate_corpus(folder, size)
    vault = open_vault(size, folder)
    results: dict[str, object] = {"size": size, "runs": runs}
    timings: dict[str, list[float]] = {"amem": [], "amem+entities": []}
    try:
        vectors = vault._connection.execute("SELECT COUNT(*) FROM content_vectors").fetchone()[0]
        if vectors == 0:
            log("embedding the corpus once (cached for the next run) ...")
            vault.embed()
        for run in range(runs):  # each on a fresh copy: the same work every time
            with vault.scratch_copy() as copy:
                results["documents"] = copy.status().documents
                for name, entities in (("amem", False), ("amem+entities", True)):
                    started = time.perf_counter()
                    report = copy.enrichment.enrich(force=True, use_llm=False, entities=entities)
                    seconds = time.perf_counter() - started
                    timings[name].append(seconds)
                    rate = report.documents / seconds if seconds else 0.0
                    log(
                        f"run {run + 1}: {name}: {report.documents} documents in {seconds:.2f} s, {rate:,.0f}/s"
                    )
                    results[name] = {
                        "documents": report.documents,
                        "semantic_links": report.links["semantic"],
                        "entities": report.entities,
                        "vectors": report.vectors,
                    }
                started = time.perf_counter()
                again = copy.enrichment.enrich(use_llm=False)
                results["rerun"] = {
                    "documents": again.documents,
                    "unchanged": again.unchanged,
                    "seconds": round(time.perf_counter() - started, 3),
                }
    finally:
        vault.close()
    for name, seconds in timings.items():
        row = results[name]
        assert isinstance(row, dict)
        documents = row["documents"]
        median = statistics.median(seconds)
        row["seconds"] = round(median, 2)
        row["documents_per_second"] = round(documents / median, 1) if median else 0.0
        row["documents_per_second_range"] = [
            round(documents / max(seconds), 1),
            round(documents / min(seconds), 1),
        ]
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3, help="medians of this many runs")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = benchmark(args.size, max(1, args.runs))
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(
        f"{results['size']} notes, {results['documents']} documents, no LLM, "
        f"medians of {results['runs']} runs"
    )
    print("| run | documents | seconds | documents/s (range) | semantic links | entities |")
    print("|---|---|---|---|---|---|")
    for name in ("amem", "amem+entities"):
        row = results[name]
        assert isinstance(row, dict)
        low, high = row["documents_per_second_range"]
        print(
            f"| {name} | {row['documents']} | {row['seconds']} | "
            f"{row['documents_per_second']:,.0f} ({low:,.0f}-{high:,.0f}) | "
            f"{row['semantic_links']} | {row['entities']} |"
        )
    rerun = results["rerun"]
    assert isinstance(rerun, dict)
    print(f"re-run: {rerun['documents']} enriched, {rerun['unchanged']} unchanged in "
          f"{rerun['seconds']} s (floor {FLOOR:.0f} documents/s)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
