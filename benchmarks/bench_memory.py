"""The agent memory store: ``remember`` latency, ``find_duplicates`` at 10k entries, and
eight processes remembering at once.

1. ``remember``: a fresh vault, the embedded embedder loaded by one untimed write, then
   ``--writes`` entries (realistic notes, distinct labels) written in-process; p50 / p95.
2. ``find_duplicates``: ``--entries`` entries (2% of them near-copies of another) written
   with their vectors, then the full scan of the store, timed ``--rounds`` times; the
   median, and the pairs and clusters found.
3. Concurrency: ``--processes`` processes each remember as fast as they can for
   ``--seconds`` seconds on one vault; every write a process reports as done must be in the
   vault afterwards, and no process may see an error.

Run from the repository root::

    .venv/bin/python benchmarks/bench_memory.py [--entries 10000] [--seconds 30] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import percentile
from memtrove.db.connection import open_connection
from memtrove.memory.entries import write_entry
from memtrove.memory.vectors import pack
from memtrove.vault import Vault

TOPICS = ["deploy", "database", "auth", "billing", "search", "cache", "queue", "logging",
          "testing", "frontend", "mobile", "infra", "security", "email", "analytics"]  # fmt: skip
WORDS = ("service region replica index token session invoice webhook cursor shard timeout "
         "retry budget latency schema migration rollback feature flag canary metric alert "
         "dashboard tenant quota certificate secret bucket worker cron backfill").split()  # fmt: skip

WRITER = """
import json, sys, time
from memtrove.vault import Vault
path, name, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
done, errors = 0, []
with Vault.open(path, config_dir=path + ".config") as vault:
    vault.memory.project_store = "bench"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            vault.memory.remember(f"{name} note {done}", f"Process {name} wrote note {done} about "
                           f"the {['deploy', 'cache', 'auth'][done % 3]} service.")
            done += 1
        except Exception as error:
            errors.append(f"{type(error).__name__}: {error}")
print(json.dumps({"done": done, "errors": errors[:5], "error_count": len(errors)}))
"""


def note(rng: random.Random, number: int) -> tuple[str, str]:
    topic = rng.choice(TOPICS)
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(12, 40)))
    return f"{topic} note {number}", f"About {topic}: {words}. Decided on {number % 97}."


def bench_remember(root: Path, writes: int) -> dict[str, float]:
    rng = random.Random(7)
    with Vault.open(root / "remember.sqlite", config_dir=root / "config") as vault:
        vault.memory.project_store = "bench"
        vault.memory.remember("warm up", "loads the embedded model")
        times = []
        for number in range(writes):
            label, content = note(rng, number)
            started = time.perf_counter()
            vault.memory.remember(label, content)
            times.append((time.perf_counter() - started) * 1000)
    return {
        "writes": writes,
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": round(percentile(times, 0.95), 2),
    }


def bench_duplicates(root: Path, count: int, rounds: int) -> dict[str, float]:
    rng = random.Random(11)
    path = root / "duplicates.sqlite"
    with Vault.open(path, config_dir=root / "config") as vault:
        vault.memory.project_store = "bench"
        embedder = vault.models.embedder
        notes = [note(rng, number) for number in range(count)]
        for index in range(0, count, 50):  # 2%: a near-copy of an earlier note
            label, content = notes[index]
            notes[index + 1 if index + 1 < count else index] = (f"{label} copy", content + " Also.")
        started = time.perf_counter()
        vectors = embedder.embed_documents([f"{label}\n\n{content}" for label, content in notes])
        connection = open_connection(path, 5000)
        for (label, content), vector in zip(notes, vectors, strict=True):
            write_entry(
                connection, "bench", label, content, branch=None, confidence=None,
                overwrite=True, embedding=pack(vector), model=embedder.identity,
                now="2026-11-30T00:00:00Z",
            )  # fmt: skip
        connection.close()
        written = time.perf_counter() - started
        times = []
        report = None
        for _ in range(rounds):
            started = time.perf_counter()
            report = vault.memory.find_duplicates("bench")
            times.append(time.perf_counter() - started)
    assert report is not None
    return {
        "entries": count,
        "write_seconds": round(written, 1),
        "find_duplicates_median_s": round(statistics.median(times), 3),
        "pairs": report.pairs,
        "clusters": len(report.clusters),
    }


def bench_concurrency(root: Path, processes: int, seconds: float) -> dict[str, object]:
    path = root / "concurrent.sqlite"
    Vault.open(path, config_dir=str(path) + ".config").close()
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), f"p{index}", str(seconds)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for index in range(processes)
    ]
    results = []
    for worker in workers:
        out, err = worker.communicate(timeout=seconds + 120)
        if worker.returncode != 0:
            raise RuntimeError(f"a writer failed: {err}")
        results.append(json.loads(out))
    reported = sum(int(result["done"]) for result in results)
    with Vault.open(path, config_dir=str(path) + ".config") as vault:
        stored = len(vault.memory.entries(store="bench"))
    errors = [error for result in results for error in result["errors"]]
    return {
        "processes": processes,
        "seconds": seconds,
        "writes_reported": reported,
        "entries_stored": stored,
        "lost": reported - stored,
        "errors": sum(int(result["error_count"]) for result in results),
        "first_errors": errors[:3],
        "writes_per_second": round(reported / seconds, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as scratch:
        root = Path(scratch)
        report = {
            "remember": bench_remember(root, args.writes),
            "find_duplicates": bench_duplicates(root, args.entries, args.rounds),
            "concurrency": bench_concurrency(root, args.processes, args.seconds),
        }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    remember, duplicates, concurrency = (
        report[k] for k in ("remember", "find_duplicates", "concurrency")
    )
    print(
        f"remember ({remember['writes']} writes): p50 {remember['p50_ms']} ms, p95 {remember['p95_ms']} ms"
    )
    print(f"find_duplicates over {duplicates['entries']:,} entries: median "
          f"{duplicates['find_duplicates_median_s']} s ({duplicates['pairs']} pairs, "
          f"{duplicates['clusters']} clusters)")  # fmt: skip
    print(f"{concurrency['processes']} processes x {concurrency['seconds']:g} s: "
          f"{concurrency['writes_reported']} writes reported, {concurrency['entries_stored']} "
          f"stored, {concurrency['lost']} lost, {concurrency['errors']} errors")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
