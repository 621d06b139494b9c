"""What agents receive, judged: every retrieval method on the project's judged sets.

Sets (each in a fresh scratch vault, embedded with the bundled wordllama model, no model
server):

- ``go``: 44 questions written blind over the real Go design documents in
  ``../shared/bench/prose/go-proposals/`` (``tests/benchmarks/go_proposals.jsonl``), and
  30 prompts in 5 working sessions with follow-ups and topic switches
  (``go_proposals_sessions.jsonl``).
- ``composite``: the composite-signal set (``tests/benchmarks/composite``): evolving
  decisions, handoffs, pins, snoozes, superseded notes, recency questions, long and short
  documents, topical controls.

For each set: ``bm25``, ``vector``, ``hybrid``, ``query`` and ``surfacing`` (the documents
context-surfacing injects), plus ``surfacing`` with ``--session`` for the session files.
Prints nDCG@10, R@10, MRR and hit@3 per method (and per tag for the composite set). LoCoMo
runs through ``memtrove eval locomo`` (see the README). Run from the repository root::

    .venv/bin/python benchmarks/bench_ranking.py [--sets go,composite] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memtrove import Vault  # noqa: E402
from memtrove.eval.gold import GoldExample, load_gold, run_gold  # noqa: E402

GO_DOCS = ROOT.parent / "shared" / "bench" / "prose" / "go-proposals"
GO_GOLD = ROOT / "tests" / "benchmarks" / "go_proposals.jsonl"
GO_SESSIONS = ROOT / "tests" / "benchmarks" / "go_proposals_sessions.jsonl"
METHODS = ("bm25", "vector", "hybrid", "query", "surfacing")
SHOWN = ("nDCG@10", "R@10", "MRR", "hit@3")


def _row(name: str, metrics: dict[str, float], n: int) -> str:
    return f"  {name:<22}" + "".join(f"{metrics[m]:>9.3f}" for m in SHOWN) + f"{n:>6}"


def _header(title: str) -> str:
    return f"{title}\n  {'method':<22}" + "".join(f"{m:>9}" for m in SHOWN) + f"{'n':>6}"


def _by_tag(vault: Vault, examples: list[GoldExample], method: str) -> dict[str, Any]:
    """Per-tag means: each tag's examples run as their own gold set."""
    tags = sorted({tag for example in examples for tag in example.tags})
    out: dict[str, Any] = {}
    for tag in tags:
        chosen = [example for example in examples if tag in example.tags]
        report = run_gold(vault, chosen, method=method)
        out[tag] = {**report.metrics, "n": report.n}
    return out


def run_set(
    name: str, vault: Vault, files: list[Path], tagged: bool, methods: tuple[str, ...] = METHODS
) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for file in files:
        examples = load_gold(file)
        print(_header(f"{name}: {file.name}"), flush=True)
        for method in methods:
            sessions = [False, True] if method == "surfacing" else [False]
            for session in sessions:
                report = run_gold(vault, examples, method=method, session=session)
                label = method + (" --session" if session else "")
                entry: dict[str, Any] = {
                    "metrics": report.metrics,
                    "n": report.n,
                    "tokens": report.details.get("tokens", {}),
                    "notes": report.notes,
                }
                if tagged:
                    entry["by_tag"] = _by_tag(vault, examples, method)
                results[f"{file.stem}:{label}"] = entry
                print(_row(label, report.metrics, report.n), flush=True)
        if tagged:
            for method in (m for m in ("bm25", "query", "surfacing") if m in methods):
                by_tag = results[f"{file.stem}:{method}"]["by_tag"]
                cells = "  ".join(
                    f"{tag} {v['hit@3']:.2f}/{v['MRR']:.2f}" for tag, v in by_tag.items()
                )
                print(f"  {method} hit@3/MRR by tag: {cells}")
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="go,composite")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    wanted = set(args.sets.split(","))
    methods = tuple(m for m in args.methods.split(",") if m)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="memtrove-ranking-") as temporary:
        root = Path(temporary)
        if "go" in wanted:
            if not GO_DOCS.is_dir():
                print(f"skipping go: {GO_DOCS} not found", file=sys.stderr)
            else:
                with Vault.open(root / "go.sqlite", config_dir=root / "go-config") as vault:
                    vault.add_collection(GO_DOCS, name="go")
                    vault.update()
                    vault.embed()
                    out["go"] = run_set(
                        "go", vault, [GO_GOLD, GO_SESSIONS], tagged=False, methods=methods
                    )
        if "composite" in wanted:
            from tests.benchmarks import composite_set

            with composite_set.open_vault(root / "composite") as vault:
                vault.embed()
                out["composite"] = run_set(
                    "composite", vault, [composite_set.QUESTIONS], tagged=True, methods=methods
                )
    if args.json:
        print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
