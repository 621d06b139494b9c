"""MCP start-up: ``memtrove mcp`` (stdio) from process start to ``initialize`` and
``tools/list`` answered, as an MCP client sees it, and from closing its stdin to its exit.

The first start after an install (or with an empty cache) imports the MCP SDK before it can
answer (about a second); every later start answers from the SDK's stored answers while
the SDK imports (see ``memtrove.mcp.front``). Both are measured, in a scratch cache folder,
with raw JSON-RPC lines over pipes (no client library in the timing). Run from the
repository root::

    .venv/bin/python benchmarks/bench_mcp.py [--runs 15] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import percentile

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


def handshake(env: dict[str, str]) -> tuple[float, float, int, float]:
    """(ms to the initialize answer, ms to the tools/list answer, tools listed, ms from
    closing stdin to the process's exit)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "memtrove", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert process.stdin is not None and process.stdout is not None

    def send(message: dict[str, object]) -> None:
        assert process.stdin is not None
        process.stdin.write((json.dumps(message) + "\n").encode())
        process.stdin.flush()

    send(INITIALIZE)
    json.loads(process.stdout.readline())
    initialized = time.perf_counter()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    listed = json.loads(process.stdout.readline())
    done = time.perf_counter()
    process.stdin.close()
    closed = time.perf_counter()
    process.wait(timeout=60)
    exited = time.perf_counter()
    return (
        (initialized - started) * 1000,
        (done - started) * 1000,
        len(listed["result"]["tools"]),
        (exited - closed) * 1000,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=15, help="timed starts of each kind")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="bench-mcp-"))
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMTROVE_", "XDG_"))}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its .pyc files
        env |= {
            "XDG_CACHE_HOME": str(scratch / "cache"),
            "XDG_CONFIG_HOME": str(scratch / "config"),
            "MEMTROVE_VAULT": str(scratch / "vault.sqlite"),
        }
        answers = scratch / "cache" / "memtrove" / "mcp-answers.json"
        first: list[float] = []
        later: list[float] = []
        exits: list[float] = []
        tools = 0
        for _ in range(args.runs):
            answers.unlink(missing_ok=True)
            first.append(handshake(env)[1])
            _, listed, tools, exit_ms = handshake(env)
            later.append(listed)
            exits.append(exit_ms)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report = {
        "runs": args.runs,
        "tools": tools,
        "first_start_p50_ms": round(statistics.median(first), 1),
        "first_start_p95_ms": round(percentile(first, 0.95), 1),
        "later_start_p50_ms": round(statistics.median(later), 1),
        "later_start_p95_ms": round(percentile(later, 0.95), 1),
        "exit_after_stdin_closes_p50_ms": round(statistics.median(exits), 1),
        "exit_after_stdin_closes_max_ms": round(max(exits), 1),
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"memtrove mcp, process start to initialize + tools/list ({tools} tools), {args.runs} runs"
    )
    print(f"  first start (no stored answers): p50 {report['first_start_p50_ms']:.0f} ms, "
          f"p95 {report['first_start_p95_ms']:.0f} ms")  # fmt: skip
    print(f"  later starts:                    p50 {report['later_start_p50_ms']:.0f} ms, "
          f"p95 {report['later_start_p95_ms']:.0f} ms")  # fmt: skip
    print(f"  exit after stdin closes:         p50 {report['exit_after_stdin_closes_p50_ms']:.0f} ms, "
          f"max {report['exit_after_stdin_closes_max_ms']:.0f} ms")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
