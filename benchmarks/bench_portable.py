"""``memtrove export`` -> ``memtrove import`` at scale: seconds, peak memory, and whether the
imported vault is the source (content hashes, docids, top-10 results).

The source is the generated corpus of ``--size`` notes (default 10,000; ``corpus.py``)
indexed into ``.bench/portable-<n>/source.sqlite`` with ``--entries`` memory entries
(default 2,000; every tenth overwritten once, so entries have versions), built once and
reused. Each run, in child processes (so each peak RSS is that step's alone):

1. ``Vault.portable.export_to`` of the source to a JSON-lines file;
2. ``Vault.portable.import_from`` of that file into a new vault.

Then, in this process: every document's id, docid and content hash compared, and the top 10
of ``--queries`` generated queries (default 100) searched in both. The baseline is the least
a move can cost: SQLite's own online backup of the same file (``copy_database``), timed in
the same run, and, for what a rebuild from the files costs instead, ``update`` of the same
notes into a new vault (a child process too). Run from the repository root::

    .venv/bin/python benchmarks/bench_portable.py [--size 10000] [--entries 2000] [--repeats 3]
        [--embed]   # also: embedding the first imported vault, and what its vectors would weigh
        [--vectors] # instead: export --vectors of an embedded vault of the notes, and its import
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
from typing import Any

from corpus import BENCH_DIR, cached_source_vault, corpus_dir, generate_corpus, generate_queries
from memtrove import Vault
from memtrove.db.connection import copy_database, open_connection


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def source_vault(size: int, entries: int) -> Path:
    """The indexed source vault with its entries (built once)."""

    def fill(vault: Vault) -> None:
        for index in range(entries):
            vault.memory.remember(
                f"entry {index}",
                f"Memory {index}: {generate_queries(1, index)[0]}.",
                store="global",
            )
            if index % 10 == 0:
                vault.memory.remember(
                    f"entry {index}", f"Memory {index}, revised.", store="global", overwrite=True
                )

    return cached_source_vault(
        "portable", size, str(entries), f"indexing {size} notes and writing {entries} entries", fill
    )


def child(step: str, vault_path: Path, file: Path) -> None:
    """Run one step in this (child) process and print one JSON line."""
    started = time.perf_counter()
    with Vault.open(vault_path, config_dir=vault_path.parent / f"config-{step}") as vault:
        if step in ("export", "export-vectors"):
            report = vault.portable.export_to(file, vectors=step == "export-vectors")
            outcome = {"records": report.records, "bytes": report.bytes}
        elif step == "index":  # the other way to rebuild a vault: index the files again
            vault.add_collection(file, name="bench")
            outcome = {"records": vault.update().added}
        else:
            imported = vault.portable.import_from(file)
            outcome = {"records": sum(imported.records.values())}
            if step == "import-embed":  # what the vectors cost to make again, not to carry
                embedded = time.perf_counter()
                report = vault.embed()
                outcome["embed_seconds"] = round(time.perf_counter() - embedded, 2)
                outcome["fragments"] = report.fragments
                outcome["dimensions"] = vault.models.embedder.dimensions
    outcome["seconds"] = round(time.perf_counter() - started - outcome.get("embed_seconds", 0), 2)
    outcome["peak_rss_mb"] = _peak_rss_mb()
    print(json.dumps(outcome))


def _peak_rss_mb() -> float:
    """This process's peak RSS: ``VmHWM`` on Linux (``ru_maxrss`` survives ``exec`` and can
    be the parent's), else ``ru_maxrss``."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _step(step: str, vault_path: Path, file: Path) -> dict[str, float]:
    result = subprocess.run(
        [sys.executable, __file__, "--child", step, str(vault_path), str(file)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def _rows(path: Path) -> list[tuple[object, ...]]:
    connection = open_connection(path)
    try:
        return connection.execute(
            "SELECT id, docid, hash, active FROM documents ORDER BY id"
        ).fetchall()
    finally:
        connection.close()


def _same_results(source: Path, target: Path, queries: list[str]) -> int:
    with (
        Vault.open(source, config_dir=source.parent / "config") as one,
        Vault.open(target, config_dir=target.parent / "config-import") as two,
    ):
        return sum(
            [r.docid for r in one.search(query)] == [r.docid for r in two.search(query)]
            for query in queries
        )


def run_once(source: Path, queries: list[str], size: int, embed: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory(dir=BENCH_DIR) as folder:
        file = Path(folder) / "vault.jsonl"
        target = Path(folder) / "target.sqlite"
        exported = _step("export", source, file)
        imported = _step("import-embed" if embed else "import", target, file)
        indexed = _step("index", Path(folder) / "indexed.sqlite", corpus_dir(size))
        connection = open_connection(source)
        started = time.perf_counter()
        try:
            copy_database(connection, Path(folder) / "copy.sqlite")
        finally:
            connection.close()
        copy_seconds = time.perf_counter() - started
        identical_rows = _rows(source) == _rows(target)
        same = _same_results(source, target, queries)
    extra = {}
    if "embed_seconds" in imported:
        vector_bytes = imported["fragments"] * imported["dimensions"] * 4
        extra = {
            "embed_seconds": imported["embed_seconds"],
            "fragments": imported["fragments"],
            "vector_megabytes_base64": round(vector_bytes * 4 / 3 / 1e6, 1),
        }
    return {
        **extra,
        "export_seconds": exported["seconds"],
        "import_seconds": imported["seconds"],
        "index_seconds": indexed["seconds"],
        "export_rss_mb": exported["peak_rss_mb"],
        "import_rss_mb": imported["peak_rss_mb"],
        "records": exported["records"],
        "megabytes": round(exported["bytes"] / 1e6, 1),
        "copy_seconds": round(copy_seconds, 2),
        "identical_documents": identical_rows,
        "same_top10": same,
    }


def embedded_vault(size: int) -> Path:
    """An embedded vault of the same notes (a copy of ``bench_retrieval.py``'s, else built)."""
    home = BENCH_DIR / f"portable-{size}"
    target = home / "embedded.sqlite"
    if target.exists():
        return target
    home.mkdir(parents=True, exist_ok=True)
    retrieval = BENCH_DIR / f"retrieval-{size}" / "vault.sqlite"
    if retrieval.exists():
        log(f"copying the embedded vault {retrieval} ...")
        connection = open_connection(retrieval)
        try:
            copy_database(connection, target)
        finally:
            connection.close()
        return target
    folder = corpus_dir(size)
    generate_corpus(folder, size)
    log(f"indexing and embedding {size} notes into {target} (once) ...")
    with Vault.open(target, config_dir=home / "config-embedded") as vault:
        vault.add_collection(folder, name="bench")
        vault.update()
        vault.embed()
    return target


def run_vectors(source: Path, queries: list[str]) -> dict[str, Any]:
    """``export --vectors`` of an embedded vault, then the import: no embedding needed."""
    with tempfile.TemporaryDirectory(dir=BENCH_DIR) as folder:
        file = Path(folder) / "vault.jsonl"
        target = Path(folder) / "target.sqlite"
        exported = _step("export-vectors", source, file)
        imported = _step("import", target, file)
        with (
            Vault.open(source, config_dir=source.parent / "config-embedded") as one,
            Vault.open(target, config_dir=target.parent / "config-import") as two,
        ):
            same = sum(
                [r.docid for r in one.vsearch(query)] == [r.docid for r in two.vsearch(query)]
                for query in queries
            )
            pending = two.embed().fragments
    return {
        "export_seconds": exported["seconds"],
        "import_seconds": imported["seconds"],
        "export_rss_mb": exported["peak_rss_mb"],
        "import_rss_mb": imported["peak_rss_mb"],
        "megabytes": round(exported["bytes"] / 1e6, 1),
        "same_vsearch_top10": same,
        "left_to_embed": pending,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--entries", type=int, default=2_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--embed", action="store_true", help="Also time embedding the first imported vault."
    )
    parser.add_argument(
        "--vectors",
        action="store_true",
        help="Instead: export --vectors of an embedded vault of the notes, then import it.",
    )
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], Path(args.child[1]), Path(args.child[2]))
        return 0
    queries = generate_queries(args.queries)
    if args.vectors:
        outcome = run_vectors(embedded_vault(args.size), queries)
        print(json.dumps(outcome) if args.json else outcome)
        return 0
    source = source_vault(args.size, args.entries)
    runs = []
    for number in range(max(1, args.repeats)):
        outcome = run_once(source, queries, args.size, args.embed and number == 0)
        log(f"run {number + 1}: {outcome}")
        runs.append(outcome)
    median = {
        key: statistics.median(float(run[key]) for run in runs)
        for key in ("export_seconds", "import_seconds", "copy_seconds", "index_seconds")
    }
    summary = {
        **median,
        "export_rss_mb": max(run["export_rss_mb"] for run in runs),
        "import_rss_mb": max(run["import_rss_mb"] for run in runs),
        "records": runs[0]["records"],
        "megabytes": runs[0]["megabytes"],
        "identical_documents": all(run["identical_documents"] for run in runs),
        "same_top10": min(run["same_top10"] for run in runs),
        "queries": len(queries),
        **{
            k: runs[0][k]
            for k in ("embed_seconds", "fragments", "vector_megabytes_base64")
            if k in runs[0]
        },
    }
    if args.json:
        print(json.dumps(summary))
        return 0
    print("| step | seconds (median) | x backup copy | peak RSS (MB) |")
    print("|---|---:|---:|---:|")
    for step in ("export", "import"):
        seconds = summary[f"{step}_seconds"]
        ratio = seconds / summary["copy_seconds"] if summary["copy_seconds"] else 0.0
        print(f"| {step} | {seconds:.2f} | {ratio:.1f} | {summary[f'{step}_rss_mb']:.0f} |")
    print(f"| SQLite backup of the file | {summary['copy_seconds']:.2f} | 1.0 | |")
    index_ratio = (
        summary["index_seconds"] / summary["copy_seconds"] if summary["copy_seconds"] else 0
    )
    print(
        f"| indexing the same notes from files | {summary['index_seconds']:.2f} | {index_ratio:.1f} | |"
    )
    print(
        f"{summary['records']:,} records, {summary['megabytes']} MB; documents identical: "
        f"{summary['identical_documents']}; same top 10 for {summary['same_top10']} of "
        f"{summary['queries']} queries"
    )
    if "embed_seconds" in summary:
        print(
            f"embedding the imported vault: {summary['embed_seconds']:.1f} s for "
            f"{summary['fragments']:,} fragments; as base64 in the export they would add "
            f"{summary['vector_megabytes_base64']} MB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
