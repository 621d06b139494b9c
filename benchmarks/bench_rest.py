"""REST latency: ``POST /search`` on a real ``memtrove serve`` against in-process Vault calls.

Uses the retrieval benchmark's vault of ``--size`` notes (default 10,000),
``.bench/retrieval-<n>/vault.sqlite``, indexing and embedding it first if needed (see
``bench_retrieval.py``):

1. Starts ``memtrove serve --port 0`` as a subprocess on that vault, with a bearer token
   (the path a deployed server takes), and reads its URL from stderr.
2. Runs the same ``--queries`` generated queries (default 200, the classes of
   ``bench_search.py``) through ``POST /search`` with one keep-alive httpx client, in the
   modes ``keyword``, ``auto`` (keyword up to three words, else hybrid), ``hybrid``,
   ``semantic`` and ``query``, ``--repeats`` rounds each (default 3); each query counts with
   its median. Timing covers the request, the server's work and parsing the JSON answer.
3. Times the equivalent in-process calls (``Vault.search``, ``hybrid``, ``vsearch``,
   ``query``) on the same vault in this process, the same way, right after each mode's
   REST run (so both see the same machine load).

The first 20 queries run once untimed per mode on both sides, to load the model and the
vectors. Reports p50 / p95 per mode in milliseconds, the REST p50 over the in-process p50
of the same mode, and over in-process ``Vault.search`` (the target: REST search p50 at most
50 ms). Run from the repository root::

    .venv/bin/python benchmarks/bench_rest.py [--size 10000] [--json]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx

from bench_retrieval import open_vault, time_method
from corpus import BENCH_DIR, REPO_ROOT, corpus_dir, generate_corpus, generate_labelled_queries
from memtrove import Vault

MODES = ("keyword", "auto", "hybrid", "semantic", "query")
TARGET_P50_MS = 50.0
_URL = re.compile(r"memtrove: serving (http://\S+) ")


@dataclass
class ModeLatency:
    mode: str
    rest_p50_ms: float
    rest_p95_ms: float
    inprocess_p50_ms: float
    inprocess_p95_ms: float
    ratio_to_same_mode: float
    ratio_to_search: float


@dataclass
class Report:
    size: int
    documents: int
    queries: int
    repeats: int
    latencies: list[ModeLatency]
    target_p50_ms: float = TARGET_P50_MS


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def prepare(size: int) -> Path:
    """The benchmark vault, indexed and embedded; returns its folder."""
    folder = corpus_dir(size)
    generate_corpus(folder, size)
    vault = open_vault(size, folder)
    try:
        pending = vault.documents.index_stats().pending_embeds
        if pending:
            log(f"embedding {pending} documents ...")
            vault.embed()
    finally:
        vault.close()
    return BENCH_DIR / f"retrieval-{size}"


def start_server(home: Path, token: str, log_file: Path) -> tuple[subprocess.Popen[bytes], str]:
    env = {
        **os.environ,
        "MEMTROVE_VAULT": str(home / "vault.sqlite"),
        "MEMTROVE_CONFIG_DIR": str(home / "config"),
        "MEMTROVE_API_TOKEN": token,
    }
    with log_file.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "memtrove", "serve", "--port", "0"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            cwd=REPO_ROOT,
        )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = _URL.search(log_file.read_text(encoding="utf-8", errors="replace"))
        if found:
            return process, found.group(1)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    raise SystemExit(f"memtrove serve did not start: {log_file.read_text()}")


def rest_calls(client: httpx.Client) -> dict[str, Callable[[str], object]]:
    def call(mode: str) -> Callable[[str], object]:
        def search(query: str) -> object:
            answer = client.post("/search", json={"query": query, "mode": mode, "limit": 10})
            answer.raise_for_status()
            return answer.json()

        return search

    return {mode: call(mode) for mode in MODES}


def inprocess_calls(vault: Vault) -> dict[str, Callable[[str], object]]:
    def auto(query: str) -> object:
        return (vault.search if len(query.split()) <= 3 else vault.hybrid)(query, limit=10)

    return {
        "keyword": lambda q: vault.search(q, limit=10),
        "auto": auto,
        "hybrid": lambda q: vault.hybrid(q, limit=10),
        "semantic": lambda q: vault.vsearch(q, limit=10),
        "query": lambda q: vault.query(q, limit=10),
    }


def measure(
    calls: Callable[[str], object], warmup: list[str], timed: list[str], repeats: int
) -> tuple[float, float]:
    for query in warmup:
        calls(query)
    p50, p95, _ = time_method(calls, timed, repeats)
    return p50, p95


def benchmark(size: int, count: int, repeats: int) -> Report:
    home = prepare(size)
    queries = [text for _, text in generate_labelled_queries(count + 20, corpus=corpus_dir(size))]
    warmup, timed = queries[:20], queries[20:]
    token = secrets.token_urlsafe(24)
    rest: dict[str, tuple[float, float]] = {}
    local: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        process, url = start_server(home, token, Path(scratch) / "serve.log")
        log(f"server at {url}")
        vault = Vault.open(home / "vault.sqlite", config_dir=home / "config")
        try:
            headers = {"Authorization": f"Bearer {token}"}
            with httpx.Client(base_url=url, headers=headers, timeout=120) as client:
                documents = int(client.get("/health").json()["documents"])
                remote, here = rest_calls(client), inprocess_calls(vault)
                for mode in MODES:  # both sides of a mode back to back: the same machine load
                    rest[mode] = measure(remote[mode], warmup, timed, repeats)
                    local[mode] = measure(here[mode], warmup, timed, repeats)
                    log(
                        f"{mode}: REST p50 {rest[mode][0]:.1f} ms, "
                        f"in-process p50 {local[mode][0]:.1f} ms"
                    )
        finally:
            vault.close()
            process.terminate()
            process.wait(timeout=30)
    search_p50 = local["keyword"][0] or 1.0
    latencies = []
    for mode in MODES:
        (rest_p50, rest_p95), (local_p50, local_p95) = rest[mode], local[mode]
        latencies.append(
            ModeLatency(
                mode=mode,
                rest_p50_ms=round(rest_p50, 2),
                rest_p95_ms=round(rest_p95, 2),
                inprocess_p50_ms=round(local_p50, 2),
                inprocess_p95_ms=round(local_p95, 2),
                ratio_to_same_mode=round(rest_p50 / (local_p50 or 1.0), 2),
                ratio_to_search=round(rest_p50 / search_p50, 2),
            )
        )
    return Report(size, documents, len(timed), repeats, latencies)


def markdown(report: Report) -> str:
    lines = [
        f"{report.size} notes ({report.documents} documents); {report.queries} queries x "
        f"{report.repeats} rounds; target: REST search p50 <= {report.target_p50_ms:.0f} ms",
        "",
        "| mode | REST p50 ms | REST p95 ms | in-process p50 ms | in-process p95 ms "
        "| REST / same mode | REST / Vault.search |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for item in report.latencies:
        lines.append(
            f"| {item.mode} | {item.rest_p50_ms:.1f} | {item.rest_p95_ms:.1f} | "
            f"{item.inprocess_p50_ms:.1f} | {item.inprocess_p95_ms:.1f} | "
            f"{item.ratio_to_same_mode:.2f} | {item.ratio_to_search:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    # wordllama calls logging.basicConfig(level=INFO) on import; keep httpx's request lines quiet
    logging.basicConfig(level=logging.WARNING)
    report = benchmark(args.size, args.queries, args.repeats)
    if args.json:
        print(json.dumps(asdict(report), indent=2))
    else:
        print(markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
