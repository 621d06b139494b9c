"""The `make demo` walk-through: index and embed the example vault, then search it three ways.

Uses the real CLI in a subprocess for every step, exactly as a user would type it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

QUERIES = [
    "rotating refresh token reuse detection",
    "thumbnail worker memory leak",
    "why did we choose PostgreSQL?",
    "写真のバックアップ",
]


def run(*args: str) -> None:
    command = [sys.executable, "-m", "memtrove", *args]
    print(f"\n$ memtrove {' '.join(args)}", flush=True)
    subprocess.run(command, check=True)


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "examples/vault")
    run("bootstrap", str(folder), "--name", "demo")
    run("status")
    for query in QUERIES:
        run("search", query, "-n", "3")
    run("vsearch", "uploads keep failing for big pictures", "-n", "3")
    run("query", "what went wrong with logins when tokens were refreshed?", "-n", "3")


if __name__ == "__main__":
    main()
