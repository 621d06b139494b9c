"""The `make demo` walk-through: index the example vault and run a few searches.

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


if __name__ == "__main__":
    main()
