"""Phase 2 (consolidation without an LLM) on generated observations: seconds per pass.

Builds a scratch vault in a temporary folder with ``--observations`` observation documents
(5 facts each, drawn from 8 people x 8 tools x 4 services, so subjects collide the way the
name-aware gate must handle) and ``--rows`` existing consolidated observations, then times
a dry-run pass (clustering, shortlist, merge-safety and contradiction gates; nothing
written) against the baseline of reading and parsing the same observations, in the same
process. Medians of ``--repeat`` runs. Run from the repository root::

    .venv/bin/python benchmarks/bench_consolidation.py [--observations 100] [--rows 2000] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from memtrove import Vault
from memtrove.db.connection import write_transaction
from memtrove.index.internal import MEMORY_COLLECTION, write_internal
from memtrove.lifecycle.consolidation import (
    ConsolidationOptions,
    consolidate_observations,
    select_observations,
)

PEOPLE = ("Alice", "Bob", "Carol", "Dan", "Erin", "Frank", "Grace", "Heidi")
TOOLS = ("PostgreSQL", "Redis", "Kafka", "SQLite", "Nginx", "Terraform", "Docker", "Rust")
SERVICES = ("billing", "search", "auth", "export")
NOW = "2026-01-01T00:00:00Z"


def fact(rng: random.Random) -> str:
    return (
        f"{rng.choice(PEOPLE)} decided to use {rng.choice(TOOLS)} for the "
        f"{rng.choice(SERVICES)} service"
    )


def build(vault: Vault, observations: int, rows: int) -> None:
    rng = random.Random(7)
    connection = vault._connection
    with write_transaction(connection):
        connection.executemany(
            "INSERT INTO consolidated_observations (observation, proof_count, source_doc_ids, "
            "collection, created_at, updated_at) VALUES (?, 2, '[]', ?, ?, ?)",
            [(f"{fact(rng)} ({i})", MEMORY_COLLECTION, NOW, NOW) for i in range(rows)],
        )
        for i in range(observations):
            facts = [fact(rng) for _ in range(5)]
            text = "\n".join(
                ["---", f"title: observation {i}", "type: observation",
                 "observation_type: decision", "facts:", *(f"  - {f}" for f in facts), "---",
                 "", f"# observation {i}", "", " ".join(facts)]
            )  # fmt: skip
            write_internal(
                connection, MEMORY_COLLECTION, f"agent/observations/{i}.md", text,
                "observation", NOW,
            )  # fmt: skip


def median_seconds(action: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--observations", type=int, default=100)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    arguments = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="memtrove-bench-") as folder,
        Vault.open(Path(folder) / "vault.sqlite", config_dir=Path(folder)) as vault,
    ):
        build(vault, arguments.observations, arguments.rows)
        connection = vault._connection
        limit = arguments.observations
        options = ConsolidationOptions(limit=limit, dry_run=True)
        report = consolidate_observations(connection, options=options)
        baseline = median_seconds(
            lambda: select_observations(connection, limit=limit), arguments.repeat
        )
        phase2 = median_seconds(
            lambda: consolidate_observations(connection, options=options), arguments.repeat
        )
    result = {
        "observations": arguments.observations,
        "rows": arguments.rows,
        "patterns": report.patterns,
        "would_create": report.created,
        "would_merge": report.merged,
        "refused_by_gate": report.guard_rejections,
        "read_seconds": round(baseline, 3),
        "phase2_seconds": round(phase2, 3),
        "ratio": round(phase2 / baseline, 1) if baseline else None,
    }
    if arguments.json:
        json.dump(result, sys.stdout, indent=2)
        print()
        return
    print(
        f"Phase 2 over {result['observations']} observations and {result['rows']} rows: "
        f"{result['phase2_seconds']} s median ({result['ratio']}x reading them, "
        f"{result['read_seconds']} s); {result['patterns']} patterns, "
        f"{result['refused_by_gate']} merges refused by the name-aware gate"
    )


if __name__ == "__main__":
    main()
