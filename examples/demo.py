"""The `make demo` walk-through: index and embed the example vault, then search it three ways.

Uses the real CLI in a subprocess for every step, exactly as a user would type it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# Each query with the document it should find first (the e2e test checks that it does).
QUERIES = {
    "rotating refresh token reuse detection": "decisions/0004-jwt-access-and-rotating-refresh-tokens.md",
    "thumbnail worker memory leak": "problems/2026-08-05-thumbnail-worker-memory-leak.md",
    "why did we choose PostgreSQL?": "decisions/0001-postgresql-for-metadata.md",
    "写真のバックアップ": "notes/glossary.md",
}
# A paraphrase that shares no word but "uploads" with the decision it finds.
PARAPHRASE = (
    "phones lose big uploads on flaky connections",
    "decisions/0003-resumable-chunked-uploads.md",
)
QUESTION = (
    "what went wrong with logins when tokens were refreshed?",
    "problems/2026-09-10-refresh-token-race-logouts.md",
)


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
    run("vsearch", PARAPHRASE[0], "-n", "3")
    run("query", QUESTION[0], "-n", "3")


if __name__ == "__main__":
    main()
