"""What redaction costs: indexing with it against the same indexing without it, and the
redaction work of one hook.

Index
    The generated corpus of ``--size`` notes (default 10,000; ``corpus.py``, under
    ``.bench/corpus-<n>``) is indexed into a fresh vault (``Vault.open``, ``add_collection``,
    ``update()``) ``--repeats`` times each way, alternating: once with the collection's
    default (``redact: true``) and once with ``redact: false``, which skips only the
    redaction step. Medians, and the fastest run of each way (``_min``: on a machine
    shared with other work the medians move by more than the budget, the fastest runs
    much less); ``overhead`` is the extra time with redaction in percent. The engine alone
    over the same bodies (``Redactor.findings`` on every note's text, the fastest of three
    passes) is reported beside it, and as a share of the index without redaction.

Hook
    A context-surfacing run redacts the prompt before it is recorded (``hook_dedupe`` and
    ``context_usage``) and every snippet, title and fact it injects. Measured in a fresh
    process per run (``--hook-runs``, default 20), after importing what the hook imports
    anyway (the vault, the renderer): importing the engine, building it, then redacting a
    prompt with secret words in it and an injected context of ~2.7 KB that also has some
    (the worst case: the expressions that judge a value are compiled). p50 in ms. The
    renderer's guard imports the engine itself, so that figure is the work after the
    import; ``with_import`` is the same from a process that loaded only the vault.

Run from the repository root::

    .venv/bin/python benchmarks/bench_redaction.py [--size 10000] [--repeats 3] [--json]
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

from corpus import BENCH_DIR, corpus_dir, generate_corpus, iter_markdown
from memtrove import Vault


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def index_once(folder: Path, work: Path, redact: bool, notes: int) -> float:
    with tempfile.TemporaryDirectory(dir=work) as scratch:
        started = time.perf_counter()
        with Vault.open(Path(scratch) / "vault.sqlite", config_dir=Path(scratch) / "config") as v:
            v.add_collection(folder, name="bench", redact=redact)
            report = v.update()
        elapsed = time.perf_counter() - started
    if report.added != notes:
        raise RuntimeError(f"indexed {report.added} of {notes} notes")
    return elapsed


def engine_seconds(folder: Path) -> tuple[float, int]:
    from memtrove.security.redaction import DEFAULT

    texts = [Path(file.absolute).read_text(encoding="utf-8") for file in iter_markdown(folder)]
    fastest, found = float("inf"), 0
    for _ in range(3):
        started = time.perf_counter()
        found = sum(len(DEFAULT.findings(text)) for text in texts)
        fastest = min(fastest, time.perf_counter() - started)
    return fastest, found


_HOOK_WORK = (
    "redact_text('why does the deploy token expire after 401 errors? key: x9Kq2mZ8pL'); "
    "redact_text('<vault-context>' + 'note text about deploys, tokens and the api_key "
    "rotation ' * 40); print((time.perf_counter() - s) * 1000)"
)


def hook_first(runs: int, *, with_import: bool = False) -> list[float]:
    """What redaction adds to a cold hook process: with what the hook imports anyway
    already loaded (the vault, the renderer), importing the engine, building it, one
    prompt and one injected context. The renderer's guard imports the engine itself, so
    ``with_import`` measures the engine's import too, from a process that has loaded only
    the vault."""
    loaded = "memtrove.vault" if with_import else "memtrove.vault, memtrove.hooks.render"
    script = (
        f"import {loaded}, time; s = time.perf_counter(); "
        "from memtrove.security.redaction import redact_text; " + _HOOK_WORK
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return [
        float(
            subprocess.run(
                [sys.executable, "-c", script], capture_output=True, check=True, env=env
            ).stdout
        )
        for _ in range(runs)
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--hook-runs", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    folder = corpus_dir(args.size)
    if not folder.exists():
        log(f"generating {args.size} notes in {folder} ...")
        generate_corpus(folder, args.size)
    work = BENCH_DIR / "tmp"
    work.mkdir(parents=True, exist_ok=True)
    with_redaction: list[float] = []
    without: list[float] = []
    for number in range(args.repeats):
        for redact, bucket in ((True, with_redaction), (False, without)):
            bucket.append(index_once(folder, work, redact, args.size))
            log(f"run {number + 1}: redact={redact} {bucket[-1]:.2f} s")
    engine, found = engine_seconds(folder)
    first = hook_first(args.hook_runs)
    with_import = hook_first(args.hook_runs, with_import=True)
    on, off = statistics.median(with_redaction), statistics.median(without)
    on_min, off_min = min(with_redaction), min(without)
    result = {
        "notes": args.size,
        "index_with_redaction_s": round(on, 3),
        "index_without_redaction_s": round(off, 3),
        "index_overhead_percent": round((on - off) / off * 100, 1),
        "index_with_redaction_min_s": round(on_min, 3),
        "index_without_redaction_min_s": round(off_min, 3),
        "index_overhead_percent_min": round((on_min - off_min) / off_min * 100, 1),
        "docs_per_s_with_redaction": round(args.size / on),
        "engine_alone_s": round(engine, 3),
        "engine_share_of_index_percent": round(engine / off_min * 100, 1),
        "engine_findings": found,
        "hook_cold_redaction_ms_p50": round(statistics.median(first), 2),
        "hook_cold_redaction_with_import_ms_p50": round(statistics.median(with_import), 2),
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print("| measure | value |\n|---|---|")
        for key, value in result.items():
            print(f"| {key} | {value} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
