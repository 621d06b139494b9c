"""The web console's speed: server time per page at 10k notes, and the graph view with 500
nodes in headless Chromium.

Server time: each page is requested in-process through the whole app (guard, routing,
templates) over a copy of the generated corpus's vault, embedded, with one real
context-surfacing session of ten prompts recorded; the median and p90 of ``--runs``
requests per page (after one warm-up), against the REST API's ``GET /health`` in the same
run as the floor of a request. Graph: a document with 499 neighbours; the time from the
page's navigation to the drawn, laid-out graph (``data-ready``), median of ``--runs`` loads.

    python benchmarks/bench_console.py [--size 10000] [--runs 20] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from corpus import cached_source_vault, generate_queries, percentile
from memtrove import Vault
from memtrove.api import create_app
from memtrove.eval.surfacing import Surfacer

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def _timed(call: Callable[[], Any], runs: int) -> list[float]:
    call()  # warm-up
    times: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return times


def _session(vault: Vault, prompts: list[str]) -> str:
    """Surface ``prompts`` through the real hook pipeline in one session; its id."""
    surfacer = Surfacer(vault, session=True)
    surfacer.new_session()
    for prompt in prompts:
        surfacer(prompt, 10, None)
    return vault.sessions.session_log(1)[0].session_id


def _graph_vault(folder: Path, nodes: int) -> str:
    notes = folder / "graph-notes"
    notes.mkdir()
    for n in range(nodes):
        (notes / f"n{n:03d}.md").write_text(f"# Node {n}\n\nnode body {n}\n", encoding="utf-8")
    with Vault.open(folder / "graph.sqlite", config_dir=folder / "graph-config") as vault:
        vault.add_collection(notes, name="g")
        vault.update()
        kinds = ("semantic", "causal", "temporal", "entity", "reference", "supporting")
        for n in range(1, nodes):
            vault.graph.relate("g/n000.md", f"g/n{n:03d}.md", kinds[n % len(kinds)])
        return f"#{vault.get('g/n000.md').docid}"


def page_times(size: int, runs: int) -> dict[str, dict[str, float]]:
    source = cached_source_vault("console", size, "embedded", "indexing and embedding", _embed)
    work = Path(tempfile.mkdtemp(prefix="bench-console-"))
    shutil.copyfile(source, work / "vault.sqlite")
    figures: dict[str, dict[str, float]] = {}
    with Vault.open(work / "vault.sqlite", config_dir=work / "config") as vault:
        queries = generate_queries(10)
        session = _session(vault, queries)
        ref = f"#{vault.list(1)[0].docid}"
        ids = ",".join(str(r.doc_id) for r in vault.query(queries[1], 20))
        pages = {
            "GET /health (REST floor)": "/health",
            "search (search)": f"/?q={queries[0]}",
            "search (query)": f"/?q={queries[1]}&method=query",
            "explain.json (query)": f"/ui/explain.json?q={queries[1]}&method=query&ids={ids}",
            "document": f"/ui/doc?ref=%23{ref[1:]}",
            "sessions": "/ui/sessions",
            "session audit": f"/ui/sessions/{session}",
            "graph page": f"/ui/graph?ref=%23{ref[1:]}",
            "graph.json": f"/ui/graph.json?ref=%23{ref[1:]}",
            "memory": "/ui/memory",
            "memory, policy dry run": "/ui/memory?sweep=1",
            "health": "/ui/health",
            "health, doctor": "/ui/health?doctor=1",
        }
        client = TestClient(create_app(vault), base_url="http://127.0.0.1:7438")
        for name, url in pages.items():
            times = _timed(lambda url=url: _ok(client.get(url)), runs)
            figures[name] = {
                "p50_ms": round(statistics.median(times), 2),
                "p90_ms": round(percentile(times, 0.9), 2),
            }
    shutil.rmtree(work, ignore_errors=True)
    return figures


def _embed(vault: Vault) -> None:
    vault.embed()


def _ok(answer: Any) -> None:
    if answer.status_code != 200:
        raise SystemExit(f"{answer.request.url}: {answer.status_code} {answer.text[:200]}")


def graph_time(nodes: int, runs: int) -> dict[str, float] | str:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return "playwright is not installed"
    if not Path(CHROMIUM).is_file():
        return "chromium is not installed"
    import subprocess

    work = Path(tempfile.mkdtemp(prefix="bench-graph-"))
    start = _graph_vault(work, nodes)
    env = {"MEMTROVE_VAULT": str(work / "graph.sqlite"), "MEMTROVE_CONFIG_DIR": str(work / "gc")}
    log = work / "serve.log"
    with log.open("wb") as stderr:
        server = subprocess.Popen(
            [sys.executable, "-m", "memtrove", "serve", "--port", "0"],
            env={**os.environ, **env},
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    try:
        url = ""
        for _ in range(600):
            text = log.read_text()
            if "serving http://" in text:
                url = text.split("serving ", 1)[1].split(" ", 1)[0]
                break
            time.sleep(0.1)
        times: list[float] = []
        drawn = 0
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page()
            page.set_default_timeout(60_000)
            for run in range(runs + 1):
                started = time.perf_counter()
                page.goto(f"{url}/ui/graph?ref=%23{start[1:]}")
                page.wait_for_selector("#graph[data-ready=true]")
                elapsed = (time.perf_counter() - started) * 1000
                drawn = int(page.evaluate("window.memtroveGraph.nodes().length"))
                if run:  # the first load warms the server and the browser's cache
                    times.append(elapsed)
            browser.close()
        return {
            "nodes": drawn,
            "p50_ms": round(statistics.median(times), 1),
            "p90_ms": round(percentile(times, 0.9), 1),
        }
    finally:
        server.terminate()
        server.wait(timeout=20)
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = {
        "pages": page_times(args.size, args.runs),
        "graph": graph_time(args.nodes, min(args.runs, 10)),
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"server time per page at {args.size:,} notes ({args.runs} requests each)")
    print(f"  {'page':28} {'p50 ms':>8} {'p90 ms':>8}")
    for name, row in figures["pages"].items():
        print(f"  {name:28} {row['p50_ms']:>8} {row['p90_ms']:>8}")
    graph = figures["graph"]
    if isinstance(graph, str):
        print(f"graph view: not measured ({graph})")
    else:
        print(
            f"graph view, {graph['nodes']} nodes drawn and laid out in headless Chromium: "
            f"p50 {graph['p50_ms']} ms, p90 {graph['p90_ms']} ms"
        )


if __name__ == "__main__":
    main()
