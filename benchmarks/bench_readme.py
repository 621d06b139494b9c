"""Every whole-process speed figure the README quotes against a floor, in one run.

On the generated corpus of ``--size`` notes (default 10,000; the vault, embeddings and the
plain-FTS5 baseline of ``bench_cli.py``, built when missing), each figure is a pair of
commands run in turn, A B A B ..., ``--runs`` times (default 10, over the picked queries),
each a new process timed from start to exit; reported are both medians and the median of
the pair-by-pair ratios A/B (pairing keeps the ratio meaningful when the machine's speed
drifts):

- ``search``: ``memtrove search`` (no server) against the floor, a stdlib ``sqlite3``
  script running one FTS5 query (``.bench/fts_baseline.py``); target <= 1.5x.
- ``hook``: a cold ``memtrove hook context-surfacing`` (a prompt on stdin, a new session
  each run) against the floor's search; target <= 2.4x.
- ``vsearch``, ``query``: without a server, against ``memtrove search``; target <= 2.5x.
- ``query (served)``: with ``memtrove serve`` running, against the floor; target <= 1.5x.
- ``update (no change)``: against a stdlib script that stats every note and compares it
  with the baseline's recorded sizes and times (``.bench/fts_rescan.py``); target <= 2x.
- ``full index``: ``bench_index.py --sizes N`` (memtrove's and the baseline's docs/s);
  target >= 0.3x the baseline's speed.

Run from the repository root::

    .venv/bin/python benchmarks/bench_readme.py [--size 10000] [--runs 10] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import uuid
from typing import Any

from bench_cli import environment, pick_queries, prepare, served
from corpus import BENCH_DIR, REPO_ROOT, corpus_dir

RESCAN_SCRIPT = """\
import os, sqlite3, sys
db, root = sys.argv[1], sys.argv[2].rstrip("/")
connection = sqlite3.connect(db)
known = {p: (s, m) for p, s, m in connection.execute("SELECT path, size, mtime_ns FROM files")}
connection.close()
cut, changed, stack = len(root) + 1, 0, [root]
while stack:
    for entry in os.scandir(stack.pop()):
        if entry.is_dir(follow_symlinks=False):
            stack.append(entry.path)
        elif entry.name.endswith(".md"):
            stat = entry.stat()
            if known.get(entry.path[cut:]) != (stat.st_size, stat.st_mtime_ns):
                changed += 1
print(changed)
"""
MEMTROVE = [sys.executable, "-m", "memtrove"]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _run(command: list[str], env: dict[str, str], stdin: bytes | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, input=stdin, capture_output=True, timeout=300)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(command[-3:])} exited {done.returncode}: {done.stderr[-300:]!r}"
        )
    return elapsed


Side = tuple[list[str], dict[str, str], bool]  # command, environment, prompt on stdin


def _invoke(side: Side, query: str) -> float:
    command, env, hook = side
    if hook:
        payload = {
            "session_id": f"bench-{uuid.uuid4().hex[:12]}",
            "hook_event_name": "UserPromptSubmit",
            "prompt": query,
        }
        return _run(command, env, json.dumps(payload).encode())
    return _run([*command, query] if query else command, env)


def paired(a: Side, b: Side, queries: list[str], runs: int) -> dict[str, float]:
    """Medians of A, of B and of the A/B ratios over ``runs`` alternated pairs (one untimed
    pair first: bytecode, caches)."""
    _invoke(a, queries[0])
    _invoke(b, queries[0])
    times_a: list[float] = []
    times_b: list[float] = []
    for run in range(runs):
        query = queries[run % len(queries)]
        times_a.append(_invoke(a, query))
        times_b.append(_invoke(b, query))
    ratios = [x / y for x, y in zip(times_a, times_b, strict=True)]
    return {
        "a_ms": round(statistics.median(times_a) * 1000, 1),
        "b_ms": round(statistics.median(times_b) * 1000, 1),
        "ratio": round(statistics.median(ratios), 2),
    }


def full_index(size: int) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "benchmarks" / "bench_index.py"), "--sizes", str(size),
         "--json"],
        capture_output=True, text=True, timeout=1800, check=True,
    )  # fmt: skip
    report = json.loads(done.stdout)
    row = report["results"][0] if "results" in report else report[0]
    ours, floor = float(row["memtrove_docs_per_s"]), float(row["baseline_docs_per_s"])
    return {"a_docs_s": round(ours), "b_docs_s": round(floor), "ratio": round(ours / floor, 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--skip-index", action="store_true", help="leave out the full index")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    env = environment(args.size)
    baseline_db, _ = prepare(args.size, env)
    (BENCH_DIR / "fts_rescan.py").write_text(RESCAN_SCRIPT, encoding="utf-8")
    queries = pick_queries(args.size, 6)
    local = env | {"MEMTROVE_SERVER": "off"}
    floor: Side = (
        [sys.executable, str(BENCH_DIR / "fts_baseline.py"), str(baseline_db)],
        env,
        False,
    )
    search: Side = ([*MEMTROVE, "search"], local, False)
    rescan = [sys.executable, str(BENCH_DIR / "fts_rescan.py"), str(baseline_db)]
    figures: dict[str, Any] = {}
    targets = {
        "search": "<= 1.5x", "hook": "<= 2.4x", "vsearch": "<= 2.5x search",
        "query": "<= 2.5x search", "query (served)": "<= 1.5x", "update (no change)": "<= 2x",
        "full index": ">= 0.3x",
    }  # fmt: skip
    pairs: dict[str, tuple[Side, Side]] = {
        "search": (search, floor),
        "hook": (([*MEMTROVE, "hook", "context-surfacing"], local, True), floor),
        "vsearch": (([*MEMTROVE, "vsearch"], local, False), search),
        "query": (([*MEMTROVE, "query"], local, False), search),
        "update (no change)": (
            ([*MEMTROVE, "update"], local, False),
            ([*rescan, str(corpus_dir(args.size))], env, False),
        ),
    }
    for name, (a, b) in pairs.items():
        figures[name] = paired(a, b, [""] if name.startswith("update") else queries, args.runs)
        log(f"{name:<20} {figures[name]}")
    with served(env):
        figures["query (served)"] = paired(
            ([*MEMTROVE, "query"], env, False), floor, queries, args.runs
        )
        log(f"{'query (served)':<20} {figures['query (served)']}")
    if not args.skip_index:
        figures["full index"] = full_index(args.size)
        log(f"{'full index':<20} {figures['full index']}")
    if args.json:
        print(json.dumps({"size": args.size, "runs": args.runs, "figures": figures}, indent=2))
    else:
        print(f"| measure ({args.size:,} notes) | memtrove | floor | ratio | target |")
        print("|---|---:|---:|---:|---:|")
        for name, row in figures.items():
            if name == "full index":
                cells = f"{row['a_docs_s']:,} docs/s | {row['b_docs_s']:,} docs/s"
            else:
                cells = f"{row['a_ms']} ms | {row['b_ms']} ms"
            print(f"| {name} | {cells} | {row['ratio']}x | {targets[name]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
