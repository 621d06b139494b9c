"""What the short commands import before they work: ``python -X importtime`` over whole
processes, against a budget per command.

Each command runs ``--runs`` times on a copy of the example vault (indexed and embedded
once); the figure is the median of the summed self times of every module imported, and the
five modules that cost the most (cumulative) in the median run. A command over its budget is
marked and the script exits 1: the budget is what a short command may spend importing before
it does anything.

    python benchmarks/bench_startup.py [--runs 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from corpus import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples" / "vault"
# milliseconds of imports each command may spend (its own work comes after)
BUDGETS = {
    "search": 45.0,
    "get": 45.0,
    "status": 60.0,
    "update": 55.0,
    "hook context-surfacing": 60.0,
}
COMMANDS = {
    "search": ["search", "refresh token", "-n", "3"],
    "get": ["get", "demo/decisions/0001-postgresql-for-metadata.md", "--max-lines", "3"],
    "status": ["status"],
    "update": ["update"],
    "hook context-surfacing": ["hook", "context-surfacing"],
}
HOOK_INPUT = json.dumps(
    {"session_id": "bench", "hook_event_name": "UserPromptSubmit", "prompt": "refresh tokens?"}
)


def imports(arguments: list[str], env: dict[str, str]) -> tuple[float, list[tuple[str, float]]]:
    """(milliseconds of imports, the five costliest modules cumulative) of one process."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "memtrove", *arguments],
        env=env,
        input=HOOK_INPUT if arguments[0] == "hook" else "",
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        raise SystemExit(f"memtrove {' '.join(arguments)} failed: {done.stderr[-500:]}")
    total = 0
    modules: list[tuple[str, float]] = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative_us, name = line.removeprefix("import time:").split("|")
        total += int(self_us)
        if not name.startswith("  "):  # top level: its cumulative time counts once
            modules.append((name.strip(), int(cumulative_us) / 1000))
    modules.sort(key=lambda item: -item[1])
    return total / 1000, modules[:5]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMTROVE_")}
    env |= {
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "MEMTROVE_VAULT": str(home / "vault.sqlite"),
        "MEMTROVE_CONFIG_DIR": str(home / "config"),
        "MEMTROVE_SERVER": "off",
    }
    subprocess.run(
        [sys.executable, "-m", "memtrove", "bootstrap", str(EXAMPLES), "--name", "demo"],
        env=env,
        capture_output=True,
        check=True,
        timeout=300,
    )
    figures: dict[str, dict[str, object]] = {}
    for name, arguments in COMMANDS.items():
        runs = sorted((imports(arguments, env) for _ in range(args.runs)), key=lambda r: r[0])
        median = statistics.median(total for total, _ in runs)
        figures[name] = {
            "imports_ms": round(median, 1),
            "budget_ms": BUDGETS[name],
            "within": median <= BUDGETS[name],
            "costliest": [(module, round(ms, 1)) for module, ms in runs[len(runs) // 2][1]],
        }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"imports before work, median of {args.runs} whole processes")
    for name, row in figures.items():
        mark = "" if row["within"] else "  OVER BUDGET"
        costliest = ", ".join(f"{module} {ms}" for module, ms in row["costliest"])  # type: ignore[attr-defined]
        print(f"  {name:24} {row['imports_ms']:>7} ms (budget {row['budget_ms']}){mark}")
        print(f"  {'':24} {costliest}")
    if not all(row["within"] for row in figures.values()):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
