"""The same vault on SQLite and on PostgreSQL, measured side by side in one run.

On the generated corpus of ``--size`` notes (default 10,000, ``benchmarks/corpus.py``):

- ``full index``: ``Vault.update()`` of the whole corpus into a new vault (docs/s), each
  engine; target: PostgreSQL >= 0.5x SQLite's.
- ``search`` and ``query`` p50, in-process, over ``--queries`` picked queries (one of each
  class in turn, warm: a first pass unmeasured); target: search <= 2x SQLite's. ``query`` runs
  after ``embed`` (the local embedder). The top 10 of each search is compared between the
  engines.
- ``hook (served)``: p50 of ``memtrove hook context-surfacing`` processes with ``memtrove
  serve`` running on the vault, ``--hook-runs`` prompts, a new session each.
- ``mine``: ``memtrove mine`` of the shared real exports (``../shared/bench/mine``) into a
  new vault, exchanges written per second.

PostgreSQL is the server ``--url`` names (default the machine's, database ``test``); each
vault is a schema of its own, dropped at the end. Run from the repository root::

    .venv/bin/python benchmarks/bench_postgres.py [--size 10000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_cli import pick_queries
from corpus import BENCH_DIR, REPO_ROOT, corpus_dir, generate_corpus
from memtrove import Vault

SERVER = "postgresql://root@127.0.0.1:5432/test"
MINE = REPO_ROOT.parent / "shared" / "bench" / "mine"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def p50(values: list[float]) -> float:
    return statistics.median(values) * 1000


def timed_each(call: Callable[[str], object], queries: list[str]) -> list[float]:
    for query in queries:  # warm: caches, the vector matrix, the model
        call(query)
    times = []
    for query in queries:
        started = time.perf_counter()
        call(query)
        times.append(time.perf_counter() - started)
    return times


def drop(url: str) -> None:
    import psycopg

    schema = url.rsplit("schema=", 1)[1]
    with psycopg.connect(url.split("?")[0], autocommit=True) as raw:
        raw.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def engine_figures(
    name: str, location: Path | str, folder: Path, queries: list[str], config: Path
) -> dict[str, Any]:
    figures: dict[str, Any] = {"engine": name}
    with Vault.open(location, config_dir=config) as vault:
        vault.add_collection(folder, name="notes")
        started = time.perf_counter()
        report = vault.update()
        seconds = time.perf_counter() - started
        figures["index_docs_per_s"] = report.added / seconds
        log(f"{name}: indexed {report.added} notes in {seconds:.1f} s")
        search = timed_each(lambda q: vault.search(q, limit=10), queries)
        figures["search_p50_ms"] = p50(search)
        figures["top10"] = [[r.path for r in vault.search(q, limit=10)] for q in queries]
        started = time.perf_counter()
        vault.embed()
        figures["embed_seconds"] = time.perf_counter() - started
        query = timed_each(lambda q: vault.query(q, limit=10), queries[: max(4, len(queries) // 4)])
        figures["query_p50_ms"] = p50(query)
        log(
            f"{name}: search p50 {figures['search_p50_ms']:.1f} ms, query {figures['query_p50_ms']:.1f} ms"
        )
    return figures


def hook_served(location: Path | str, config: Path, prompts: list[str]) -> float:
    """p50 of hook processes while ``memtrove serve`` runs on the vault."""
    cache = BENCH_DIR / f"pg-cache-{uuid.uuid4().hex[:6]}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMTROVE_")}
    env |= {
        "MEMTROVE_VAULT": str(location),
        "MEMTROVE_CONFIG_DIR": str(config),
        "XDG_CACHE_HOME": str(cache),
    }
    serve = subprocess.Popen(
        [sys.executable, "-m", "memtrove", "serve", "--port", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not any(cache.rglob("*.json")) and time.monotonic() < deadline:
            time.sleep(0.1)
        times = []
        for number, prompt in enumerate(prompts * 2):
            payload = {
                "session_id": f"bench-{uuid.uuid4().hex[:8]}",
                "hook_event_name": "UserPromptSubmit",
                "prompt": prompt,
            }
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "memtrove", "hook", "context-surfacing"],
                input=json.dumps(payload).encode(),
                env=env,
                capture_output=True,
                check=False,
            )
            if number >= len(prompts):  # the first pass warms the server
                times.append(time.perf_counter() - started)
        return p50(times)
    finally:
        serve.terminate()
        serve.wait(30)
        shutil.rmtree(cache, ignore_errors=True)


def mine_rate(location: Path | str, config: Path) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMTROVE_")}
    env |= {"MEMTROVE_VAULT": str(location), "MEMTROVE_CONFIG_DIR": str(config)}
    started = time.perf_counter()
    answer = subprocess.run(
        [sys.executable, "-m", "memtrove", "mine", str(MINE / "claude-code"), "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    seconds = time.perf_counter() - started
    report = json.loads(answer.stdout)
    written = int(report.get("written", report.get("added", 0)) or 0)
    return written / seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--hook-runs", type=int, default=15)
    parser.add_argument("--url", default=SERVER)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    folder = corpus_dir(args.size)
    generate_corpus(folder, args.size)
    queries = pick_queries(args.size, args.queries)
    work = BENCH_DIR / f"pg-bench-{uuid.uuid4().hex[:6]}"
    work.mkdir(parents=True)
    tag = uuid.uuid4().hex[:6]
    url = f"{args.url}?schema=bench_{tag}"
    mined_url = f"{args.url}?schema=bench_mine_{tag}"
    try:
        lite = engine_figures("SQLite", work / "vault.sqlite", folder, queries, work / "c1")
        pg = engine_figures("PostgreSQL", url, folder, queries, work / "c2")
        same = sum(a == b for a, b in zip(lite.pop("top10"), pg.pop("top10"), strict=True))
        prompts = queries[: args.hook_runs]
        lite["hook_served_p50_ms"] = hook_served(work / "vault.sqlite", work / "c1", prompts)
        pg["hook_served_p50_ms"] = hook_served(url, work / "c2", prompts)
        lite["mine_per_s"] = mine_rate(work / "mined.sqlite", work / "c3")
        pg["mine_per_s"] = mine_rate(mined_url, work / "c4")
    finally:
        for target in (url, mined_url):
            drop(target)
        shutil.rmtree(work, ignore_errors=True)
    report = {
        "size": args.size,
        "queries": len(queries),
        "same_top10": f"{same}/{len(queries)}",
        "sqlite": lite,
        "postgresql": pg,
        "ratios": {
            "index (pg/sqlite docs/s)": pg["index_docs_per_s"] / lite["index_docs_per_s"],
            "search p50 (pg/sqlite)": pg["search_p50_ms"] / lite["search_p50_ms"],
            "query p50 (pg/sqlite)": pg["query_p50_ms"] / lite["query_p50_ms"],
            "hook served p50 (pg/sqlite)": pg["hook_served_p50_ms"] / lite["hook_served_p50_ms"],
            "mine (pg/sqlite per s)": pg["mine_per_s"] / max(lite["mine_per_s"], 1e-9),
        },
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report["ratios"].items():
            print(f"{key}: {value:.2f}x")
        for engine in ("sqlite", "postgresql"):
            print(
                engine,
                {k: round(v, 1) if isinstance(v, float) else v for k, v in report[engine].items()},
            )
        print("same top 10:", report["same_top10"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
