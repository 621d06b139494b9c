"""A-MEM enrichment without an LLM on the 10k-note benchmark vault: documents per second.

Uses the vault ``bench_retrieval.py`` builds and caches (``.bench/retrieval-<n>/``: the
generated corpus, indexed and embedded; built here when missing). Enrichment runs on a
scratch copy, so the cached vault is never enriched. Two runs, each over every document
(``force``): the whole pipeline (notes from salient terms, cosine links to vector
neighbours, entities by the heuristic) and the A-MEM part alone (``entities=False``); then a
second, unforced run that must find nothing to do. Run from the repository root::

    .venv/bin/python benchmarks/bench_enrich.py [--size 10000] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from bench_retrieval import log, open_vault
from corpus import corpus_dir, generate_corpus

FLOOR = 500.0  # documents per second, the acceptance figure


def benchmark(size: int) -> dict[str, object]:
    folder = corpus_dir(size)
    generate_corpus(folder, size)
    vault = open_vault(size, folder)
    try:
        vectors = vault._connection.execute("SELECT COUNT(*) FROM content_vectors").fetchone()[0]
        if vectors == 0:
            log("embedding the corpus once (cached for the next run) ...")
            vault.embed()
        with vault.scratch_copy() as copy:
            results: dict[str, object] = {"size": size, "documents": copy.status().documents}
            for name, entities in (("amem", False), ("amem+entities", True)):
                started = time.perf_counter()
                report = copy.enrich(force=True, use_llm=False, entities=entities)
                seconds = time.perf_counter() - started
                rate = report.documents / seconds if seconds else 0.0
                log(f"{name}: {report.documents} documents in {seconds:.2f} s, {rate:,.0f}/s")
                results[name] = {
                    "documents": report.documents,
                    "seconds": round(seconds, 2),
                    "documents_per_second": round(rate, 1),
                    "semantic_links": report.links["semantic"],
                    "entities": report.entities,
                    "vectors": report.vectors,
                }
            started = time.perf_counter()
            again = copy.enrich(use_llm=False)
            results["rerun"] = {
                "documents": again.documents,
                "unchanged": again.unchanged,
                "seconds": round(time.perf_counter() - started, 3),
            }
    finally:
        vault.close()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = benchmark(args.size)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"{results['size']} notes, {results['documents']} documents, no LLM")
    print("| run | documents | seconds | documents/s | semantic links | entities |")
    print("|---|---|---|---|---|---|")
    for name in ("amem", "amem+entities"):
        row = results[name]
        assert isinstance(row, dict)
        print(
            f"| {name} | {row['documents']} | {row['seconds']} | "
            f"{row['documents_per_second']:,.0f} | {row['semantic_links']} | {row['entities']} |"
        )
    rerun = results["rerun"]
    assert isinstance(rerun, dict)
    print(f"re-run: {rerun['documents']} enriched, {rerun['unchanged']} unchanged in "
          f"{rerun['seconds']} s (floor {FLOOR:.0f} documents/s)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
