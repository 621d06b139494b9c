"""Lifecycle sweep and restore at scale: every document of a 10,000-note vault archived by
``vault.lifecycle.sweep(apply=True)`` and brought back by ``vault.lifecycle.restore(all=True)``,
with nothing lost.

The source is the generated corpus of ``--size`` notes (default 10,000; ``corpus.py``),
indexed and embedded into ``.bench/lifecycle-<n>/source.sqlite`` with ``--relations``
supporting edges between neighbouring notes (default 2,000) and every 100th note pinned,
built once and reused. Each run works on a fresh copy of it, its clock ten years on (every
note long unused), and checks:

- before the sweep, per document: docid, content hash, SHA-256 of the stored body, fragment
  and vector counts, pin; plus every relation; after the restore, all of it identical;
- while archived, that ``search`` of ``--queries`` generated queries (default 50) finds none
  of the archived notes (pinned and durable ones stay), and ``lifecycle.search`` finds them;
- after the restore, how many queries' top 10 are identical to before the sweep (all of
  them since archive and restore rewrite FTS5's BM25 totals; 30 of 50 before that).

The baseline, timed in the same run, is what a restore would cost if archiving had deleted
the documents: indexing the same files into an empty vault (``update``, no embedding).
Run from the repository root::

    .venv/bin/python benchmarks/bench_lifecycle.py [--size 10000] [--relations 2000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from corpus import BENCH_DIR, cached_source_vault, corpus_dir, generate_queries
from memtrove import Vault
from memtrove.db.connection import copy_database, open_connection

LATER = datetime(2036, 1, 1, tzinfo=UTC)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def source_vault(size: int, relations: int) -> Path:
    """The indexed, embedded source vault with its relations and pins (built once)."""

    def fill(vault: Vault) -> None:
        vault.embed()
        rows = vault._connection.execute("SELECT docid FROM documents ORDER BY id").fetchall()
        docids = [str(row[0]) for row in rows]
        for index in range(min(relations, len(docids) - 1)):
            vault.graph.relate(docids[index], docids[index + 1], "supporting")
        for docid in docids[::100]:
            vault.curation.pin(docid)

    return cached_source_vault(
        "lifecycle", size, str(relations), f"indexing and embedding {size} notes", fill
    )


def snapshot(vault: Vault) -> dict[str, Any]:
    """Everything a restore must bring back, read from the tables."""
    connection = vault._connection
    documents = {}
    for doc_id, docid, body_hash, pinned, text in connection.execute(
        "SELECT d.id, d.docid, d.hash, d.pinned, c.doc FROM documents d "
        "JOIN content c ON c.hash = d.hash ORDER BY d.id"
    ):
        documents[doc_id] = (docid, body_hash, pinned, hashlib.sha256(text.encode()).hexdigest())
    fragments = dict(connection.execute("SELECT hash, COUNT(*) FROM fragments GROUP BY hash"))
    vectors = dict(connection.execute("SELECT hash, COUNT(*) FROM content_vectors GROUP BY hash"))
    edges = connection.execute(
        "SELECT source_id, target_id, relation_type FROM memory_relations ORDER BY 1, 2, 3"
    ).fetchall()
    return {"documents": documents, "fragments": fragments, "vectors": vectors, "edges": edges}


def top10(vault: Vault, queries: list[str]) -> list[list[str]]:
    return [[result.docid for result in vault.search(query)] for query in queries]


def run_once(source: Path, queries: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(dir=BENCH_DIR) as folder:
        target = Path(folder) / "vault.sqlite"
        connection = open_connection(source)
        try:
            copy_database(connection, target)
        finally:
            connection.close()
        with Vault.open(target, config_dir=source.parent / "config") as vault:
            vault._clock = lambda: LATER
            before, ranked = snapshot(vault), top10(vault, queries)
            started = time.perf_counter()
            swept = vault.lifecycle.sweep(apply=True)
            sweep_seconds = time.perf_counter() - started
            archived = {candidate.docid for candidate in swept.documents}
            leaked = sum(
                1 for query in queries for r in vault.search(query, limit=50)
                if r.docid in archived
            )  # fmt: skip
            archived_found = sum(bool(vault.lifecycle.search(query)) for query in queries)
            started = time.perf_counter()
            restored = vault.lifecycle.restore(all=True)
            restore_seconds = time.perf_counter() - started
            intact = snapshot(vault) == before
            same = sum(a == b for a, b in zip(top10(vault, queries), ranked, strict=True))
        indexed = Path(folder) / "indexed.sqlite"
        started = time.perf_counter()
        with Vault.open(indexed, config_dir=Path(folder) / "config") as fresh:
            fresh.add_collection(corpus_dir(len(before["documents"])), name="bench")
            fresh.update()
        index_seconds = time.perf_counter() - started
    return {
        "archived": swept.archived,
        "restored": restored.restored,
        "sweep_seconds": round(sweep_seconds, 2),
        "restore_seconds": round(restore_seconds, 2),
        "index_seconds": round(index_seconds, 2),
        "intact": intact,
        "archived_in_search": leaked,
        "queries_finding_archived": archived_found,
        "same_top10": same,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--relations", type=int, default=2_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    BENCH_DIR.mkdir(exist_ok=True)
    source = source_vault(options.size, options.relations)
    queries = generate_queries(options.queries)
    runs = []
    for repeat in range(options.repeats):
        runs.append(run_once(source, queries))
        log(f"run {repeat + 1}: {runs[-1]}")
    sweep = statistics.median(run["sweep_seconds"] for run in runs)
    restore = statistics.median(run["restore_seconds"] for run in runs)
    index = statistics.median(run["index_seconds"] for run in runs)
    last = runs[-1]
    print(f"documents archived / restored: {last['archived']} / {last['restored']}")
    print(f"sweep --apply: median {sweep:.2f} s ({last['archived'] / sweep:,.0f} documents/s)")
    print(f"restore --all: median {restore:.2f} s ({last['restored'] / restore:,.0f} documents/s)")
    print(f"baseline, indexing the files again: median {index:.2f} s")
    print(f"sweep + restore vs re-indexing: {(sweep + restore) / index:.2f}x")
    print(f"intact after restore (bodies, fragments, vectors, relations, pins): "
          f"{all(run['intact'] for run in runs)}")  # fmt: skip
    print(f"archived documents found by search: {sum(r['archived_in_search'] for r in runs)}")
    print(f"queries finding archived documents with lifecycle search: "
          f"{last['queries_finding_archived']} of {len(queries)}")  # fmt: skip
    print(f"same top 10 after restore: {last['same_top10']} of {len(queries)} queries")


if __name__ == "__main__":
    main()
