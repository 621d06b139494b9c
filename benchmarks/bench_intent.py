"""intent_search against query (and hybrid, query_plan) on the judged why/entity set.

Prints R@5 and MRR per question kind (why, entity, what, when) for each method, built on
a scratch copy of ``tests/fixtures/intent`` (see ``tests/retrieval/intent_set.py``)::

    .venv/bin/python benchmarks/bench_intent.py [--json]

``--latency`` instead times ``intent_search`` against ``query`` (p50, p95, ratio) on a copy
of ``bench_retrieval.py``'s 10,000-note vault (run that first), with five ``semantic`` edges
per note added to the copy so that traversal has a graph to walk; the generated queries run
as they are and with "why" in front (WHY: traversal runs)::

    .venv/bin/python benchmarks/bench_intent.py --latency [--size 10000]
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.retrieval.intent_set import KINDS, build, measure

from memtrove.vault import Vault

METHODS = ("query", "hybrid", "intent", "plan")


def latency(size: int, count: int = 200, repeats: int = 3) -> dict[str, object]:
    """p50/p95 of query and intent_search (plain and "why" questions) on the bench vault."""
    import random
    import shutil
    import statistics
    import time

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from corpus import BENCH_DIR, corpus_dir, generate_labelled_queries, percentile

    source = BENCH_DIR / f"retrieval-{size}" / "vault.sqlite"
    if not source.exists():
        raise SystemExit(f"no {source}: run benchmarks/bench_retrieval.py --size {size} first")
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "vault.sqlite"
        shutil.copy(source, copy)
        vault = Vault.open(copy, config_dir=Path(folder) / "config")
        connection = vault._connection  # bulk edges for the benchmark only
        ids = [int(row[0]) for row in connection.execute("SELECT id FROM documents WHERE active")]
        rng = random.Random(7)
        edges = {(a, b) for a in ids for b in rng.sample(ids, 5) if a != b}
        with connection:
            connection.executemany(
                "INSERT OR IGNORE INTO memory_relations (source_id, target_id, relation_type, "
                "weight, created_at) VALUES (?, ?, 'semantic', ?, '2026-01-01T00:00:00Z')",
                [(a, b, 0.7 + rng.random() * 0.3) for a, b in edges],
            )
        queries = [
            text for _, text in generate_labelled_queries(count + 20, corpus=corpus_dir(size))
        ]
        calls = {
            "query": lambda q: vault.query(q, limit=10),
            "intent_search": lambda q: vault.intent.intent_search(q, limit=10),
            "query (why)": lambda q: vault.query(f"why {q}", limit=10),
            "intent_search (why)": lambda q: vault.intent.intent_search(f"why {q}", limit=10),
        }
        for call in calls.values():
            for query in queries[:20]:
                call(query)
        report: dict[str, object] = {"documents": len(ids), "edges": len(edges)}
        for name, call in calls.items():
            medians = []
            for query in queries[20:]:
                times = []
                for _ in range(repeats):
                    started = time.perf_counter()
                    call(query)
                    times.append((time.perf_counter() - started) * 1000)
                medians.append(statistics.median(times))
            report[name] = {
                "p50_ms": round(percentile(medians, 0.5), 2),
                "p95_ms": round(percentile(medians, 0.95), 2),
            }
        vault.close()
    for kind in ("", " (why)"):
        base = report[f"query{kind}"]["p50_ms"]  # type: ignore[index]
        mine = report[f"intent_search{kind}"]["p50_ms"]  # type: ignore[index]
        report[f"ratio{kind}"] = round(mine / base, 2) if base else None
    return report


def main() -> None:
    if "--latency" in sys.argv:
        size = int(sys.argv[sys.argv.index("--size") + 1]) if "--size" in sys.argv else 10000
        print(json.dumps(latency(size), indent=2))
        return
    with tempfile.TemporaryDirectory() as folder:
        vault = build(Path(folder))
        try:
            table = measure(vault, METHODS)
        finally:
            vault.close()
    if "--json" in sys.argv:
        print(json.dumps(table, indent=2))
        return
    print(f"{'method':8} " + " ".join(f"{kind + ' R@5':>11} {kind + ' MRR':>11}" for kind in KINDS))
    for method, kinds in table.items():
        cells = " ".join(f"{kinds[k]['R@5']:>11.3f} {kinds[k]['MRR']:>11.3f}" for k in KINDS)
        print(f"{method:8} {cells}")


if __name__ == "__main__":
    main()
