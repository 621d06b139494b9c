"""The same vault on SQLite and on PostgreSQL, measured side by side in one run.

On the generated corpus of ``--size`` notes (default 10,000, ``benchmarks/corpus.py``):

- ``full index``: ``Vault.update()`` of the whole corpus into a new vault (docs/s), each
  engine; target: PostgreSQL >= 0.5x SQLite's.
- ``search`` and ``query`` p50, in-process, over ``--queries`` picked queries (one of each
  class in turn, warm: a first pass unmeasured; the engines take turns query by query, so
  a busy moment of the machine costs both); target: search <= 2x SQLite's. ``query`` runs
  after ``embed`` (the local embedder); with ``--no-embed`` it runs on a vault without
  vectors (its keyword legs: ``query_vectors`` false in the report). The top 10 of each
  search is compared between the engines.
- ``hook (served)``: p50 of ``memtrove hook context-surfacing`` processes with ``memtrove
  serve`` running on the vault, ``--hook-runs`` prompts, a new session each.
- ``mine``: ``memtrove mine`` of the shared real exports (``../shared/bench/mine``) into a
  new vault, exchanges written per second.

PostgreSQL is the server ``--url`` names (default the machine's, database ``test``); each
vault is a schema of its own, dropped at the end. Run from the repository root::

    .venv/bin/python benchmarks/bench_postgres.py [--size 10000] [--no-embed] [--no-serve] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
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


def timed_together(
    calls: dict[str, Callable[[str], object]], queries: list[str]
) -> dict[str, float]:
    """p50 of each engine's call over ``queries``, the engines taking turns query by query
    (so that a busy moment of the machine costs both): a warm pass first, unmeasured."""
    for query in queries:
        for call in calls.values():
            call(query)
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(2):
        for query in queries:
            for name, call in calls.items():
                started = time.perf_counter()
                call(query)
                times[name].append(time.perf_counter() - started)
    return {name: p50(values) for name, values in times.items()}


def drop(url: str) -> None:
    import psycopg

    schema = url.rsplit("schema=", 1)[1]
    with psycopg.connect(url.split("?")[0], autocommit=True) as raw:
        raw.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def indexed(name: str, vault: Vault, folder: Path) -> dict[str, Any]:
    vault.add_collection(folder, name="notes")
    started = time.perf_counter()
    report = vault.update()
    seconds = time.perf_counter() - started
    log(f"{name}: indexed {report.added} notes in {seconds:.1f} s")
    return {"engine": name, "index_docs_per_s": report.added / seconds}


def engine_figures(
    locations: dict[str, Path | str], folder: Path, queries: list[str], work: Path, embed: bool
) -> tuple[dict[str, dict[str, Any]], int]:
    """Each engine's figures, and for how many queries the two gave the same top 10."""
    with contextlib.ExitStack() as stack:
        vaults = {
            name: stack.enter_context(Vault.open(location, config_dir=work / f"config-{name}"))
            for name, location in locations.items()
        }
        figures = {name: indexed(name, vault, folder) for name, vault in vaults.items()}
        searched = timed_together(
            {name: (lambda q, v=vault: v.search(q, limit=10)) for name, vault in vaults.items()},
            queries,
        )
        tops = {
            name: [[r.path for r in vault.search(q, limit=10)] for q in queries]
            for name, vault in vaults.items()
        }
        first, second = tops.values()
        same = sum(a == b for a, b in zip(first, second, strict=True))
        for name in vaults:
            figures[name]["search_p50_ms"] = searched[name]
        if embed:
            for name, vault in vaults.items():
                started = time.perf_counter()
                vault.embed()
                figures[name]["embed_seconds"] = time.perf_counter() - started
        # Without --no-embed the query runs every leg; with it, its keyword legs (the
        # vault holds no vectors), labelled so in the report.
        asked = timed_together(
            {name: (lambda q, v=vault: v.query(q, limit=10)) for name, vault in vaults.items()},
            queries[: max(4, len(queries) // 4)],
        )
        for name in vaults:
            figures[name]["query_p50_ms"] = asked[name]
            figures[name]["query_vectors"] = embed
        log(f"search p50 {searched}")
    return figures, same


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
    parser.add_argument(
        "--no-embed", action="store_true", help="Skip embed: query p50 without vectors."
    )
    parser.add_argument("--no-serve", action="store_true", help="Skip the hook and mine runs.")
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
        figures, same = engine_figures(
            {"SQLite": work / "vault.sqlite", "PostgreSQL": url},
            folder,
            queries,
            work,
            not args.no_embed,
        )
        lite, pg = figures["SQLite"], figures["PostgreSQL"]
        if not args.no_serve:
            prompts = queries[: args.hook_runs]
            lite["hook_served_p50_ms"] = hook_served(
                work / "vault.sqlite", work / "config-SQLite", prompts
            )
            pg["hook_served_p50_ms"] = hook_served(url, work / "config-PostgreSQL", prompts)
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
            label: (pg[key] / max(lite[key], 1e-9))
            for label, key in (
                ("index (pg/sqlite docs/s)", "index_docs_per_s"),
                ("search p50 (pg/sqlite)", "search_p50_ms"),
                ("query p50 (pg/sqlite)", "query_p50_ms"),
                ("hook served p50 (pg/sqlite)", "hook_served_p50_ms"),
                ("mine (pg/sqlite per s)", "mine_per_s"),
            )
            if key in pg
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
