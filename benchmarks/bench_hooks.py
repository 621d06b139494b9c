"""Hook latency: ``memtrove hook context-surfacing`` as Claude Code runs it, one process per
prompt, against the 10k-note retrieval vault, without any server.

1. The vault of ``bench_retrieval.py`` (``.bench/retrieval-10000/vault.sqlite``, its
   config in ``.bench/retrieval-10000/config``; build it with that script first) is copied
   to a scratch folder for each profile, so the hooks' session rows never touch it and one
   profile's prompt dedupe does not skip another's prompts.
2. ``--prompts`` prompts (default 60) are made from the corpus's generated questions and
   keyword queries, five to a session (so multi-turn lookback runs as in real use).
3. Every prompt runs through each profile in turn (default ``speed,balanced,deep``;
   ``balanced+vectors`` races the cold vector leg with ``MEMTROVE_HOOK_VECTORS=on``), each
   in a fresh ``python -m memtrove hook context-surfacing`` process, after 3 untimed
   warm-up prompts; interleaving spreads a busy machine's noise over all profiles alike.
   A profile ending in ``@served`` (``balanced@served``) runs with ``memtrove serve``
   started on its vault copy first, so its hooks take the warm path.
   Bytecode caching is on for these processes, as in an installed package.

Reports, per profile, the time from process start to the JSON answer (``json``) and to
process exit (``exit``, after logging ``context_usage``) as p50 / p95 in milliseconds, the
share of prompts that got context, and injected tokens (``ceil(chars / 4)``) against the
profile's budget. The baselines, timed the same way, are a bare interpreter start and
``import memtrove.vault`` (the floor of any process that opens a vault); ``ratio`` is a
profile's p50 over the bare start. Run from the
repository root::

    .venv/bin/python benchmarks/bench_hooks.py [--prompts 60] [--profiles speed,balanced] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from corpus import BENCH_DIR, corpus_dir, generate_labelled_queries, percentile

BUDGETS = {"speed": 400, "balanced": 800, "deep": 1200}
SESSION_LENGTH = 5
WARMUP = 3


@dataclass
class Row:
    profile: str
    runs: int
    json_p50_ms: float
    json_p95_ms: float
    exit_p50_ms: float
    exit_p95_ms: float
    ratio_p50: float
    injected_share: float
    tokens_mean: float
    tokens_max: int
    budget: int


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def make_prompts(count: int, size: int) -> list[str]:
    """Prompts a user might type: questions as they are, keyword queries as a question."""
    corpus = corpus_dir(size)
    pool = generate_labelled_queries(count * 4, corpus=corpus if corpus.exists() else None)
    prompts: list[str] = []
    for kind, text in pool:
        if kind == "question":
            prompts.append(text if len(text) >= 20 else f"{text} (what do my notes say?)")
        elif kind in ("keywords", "long", "word"):
            prompts.append(f"What do we know about {text}?")
        if len(prompts) == count:
            break
    return prompts


def hook_env(vault: Path, config: Path, cache: Path, profile: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMTROVE_", "XDG_CACHE"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its .pyc files
    name, _, extra = profile.partition("@")[0].partition("+")
    env.update(
        MEMTROVE_VAULT=str(vault),
        MEMTROVE_CONFIG_DIR=str(config),
        XDG_CACHE_HOME=str(cache),
        MEMTROVE_PROFILE=name,
        MEMTROVE_HOOK_VECTORS="on" if extra == "vectors" else "auto",
    )
    return env


def timed_process(
    command: list[str], stdin: bytes, env: dict[str, str]
) -> tuple[float, float, str]:
    """(ms to the first stdout line, ms to exit, that line)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(stdin)
    process.stdin.close()
    line = process.stdout.readline()
    answered = time.perf_counter()
    process.stdout.read()
    process.wait()
    ended = time.perf_counter()
    if process.returncode != 0:
        raise RuntimeError(f"{command} exited {process.returncode}")
    return (answered - started) * 1000, (ended - started) * 1000, line.decode()


def start_server(env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``memtrove serve --port 0`` for a profile's vault; returns once it has published
    itself for the warm path (its server file exists) and answered one search."""
    server = subprocess.Popen(
        [sys.executable, "-m", "memtrove", "serve", "--port", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    servers = Path(env["XDG_CACHE_HOME"]) / "memtrove" / "servers"
    deadline = time.monotonic() + 120
    while not any(servers.glob("*.json")):
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("memtrove serve did not start")
        time.sleep(0.1)
    # Load the model and vectors as a long-running server would have long since done.
    subprocess.run(
        [sys.executable, "-m", "memtrove", "vsearch", "warm up the server"],
        env=env,
        check=True,
        capture_output=True,
    )
    return server


def baseline(code: str, env: dict[str, str], runs: int) -> float:
    times = [
        timed_process([sys.executable, "-c", code + "; print('x')"], b"", env)[0]
        for _ in range(runs)
    ]
    return statistics.median(times)


def summarize(
    profile: str, answer_ms: list[float], exit_ms: list[float], tokens: list[int], bare_ms: float
) -> Row:
    injected = [count for count in tokens if count]
    p50 = statistics.median(answer_ms)
    return Row(
        profile=profile,
        runs=len(answer_ms),
        json_p50_ms=round(p50, 1),
        json_p95_ms=round(percentile(answer_ms, 0.95), 1),
        exit_p50_ms=round(statistics.median(exit_ms), 1),
        exit_p95_ms=round(percentile(exit_ms, 0.95), 1),
        ratio_p50=round(p50 / bare_ms, 2),
        injected_share=round(len(injected) / len(tokens), 2),
        tokens_mean=round(statistics.mean(injected), 1) if injected else 0.0,
        tokens_max=max(tokens, default=0),
        budget=BUDGETS[profile.partition("@")[0].partition("+")[0]],
    )


def run_profiles(
    profiles: list[str], prompts: list[str], envs: dict[str, dict[str, str]], bare_ms: float
) -> list[Row]:
    """Every prompt through every profile in turn, so load changes hit all profiles alike."""
    command = [sys.executable, "-m", "memtrove", "hook", "context-surfacing"]
    timings: dict[str, tuple[list[float], list[float], list[int]]] = {
        profile: ([], [], []) for profile in profiles
    }
    stamp = time.time_ns()
    for index in range(-WARMUP, len(prompts)):
        prompt = prompts[index % len(prompts)]
        if index < 0:
            prompt = f"{prompt} (warm-up {index})"
        session = f"{stamp}-{index // SESSION_LENGTH}" if index >= 0 else f"{stamp}-warmup"
        payload = {"session_id": session, "hook_event_name": "UserPromptSubmit", "prompt": prompt}
        for profile in profiles:
            to_json, to_exit, line = timed_process(
                command, json.dumps(payload).encode(), envs[profile]
            )
            if index < 0:
                continue
            answer_ms, exit_ms, tokens = timings[profile]
            answer_ms.append(to_json)
            exit_ms.append(to_exit)
            context = json.loads(line)["hookSpecificOutput"]["additionalContext"]
            tokens.append(math.ceil(len(context) / 4))
    return [summarize(profile, *timings[profile], bare_ms) for profile in profiles]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=10_000, help="corpus size (10000)")
    parser.add_argument("--prompts", type=int, default=60, help="timed prompts per profile")
    parser.add_argument(
        "--profiles",
        default="speed,balanced,deep",
        help="comma-separated; add balanced+vectors, balanced@served, deep@served",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    source = BENCH_DIR / f"retrieval-{args.size}"
    if not (source / "vault.sqlite").exists():
        log(f"no vault at {source}; run benchmarks/bench_retrieval.py --size {args.size} first")
        return 1
    profiles = [name.strip() for name in args.profiles.split(",") if name.strip()]
    prompts = make_prompts(args.prompts, args.size)
    with tempfile.TemporaryDirectory(prefix="bench-hooks-", dir=BENCH_DIR) as scratch:
        root = Path(scratch)
        env = hook_env(root / "vault.sqlite", root / "config", root / "cache", "speed")
        bare = baseline("pass", env, 15)
        imported = baseline("import memtrove.vault", env, 15)
        log(f"baselines: python start {bare:.0f} ms, import memtrove.vault {imported:.0f} ms")
        envs: dict[str, dict[str, str]] = {}
        for profile in profiles:
            # A copy per profile: one profile's prompt dedupe must not skip another's prompts.
            folder = root / profile.replace("+", "-")
            folder.mkdir()
            shutil.copyfile(source / "vault.sqlite", folder / "vault.sqlite")
            shutil.copytree(source / "config", folder / "config")
            envs[profile] = hook_env(
                folder / "vault.sqlite", folder / "config", folder / "cache", profile
            )
        servers = [start_server(envs[p]) for p in profiles if p.endswith("@served")]
        try:
            log(f"{len(prompts)} prompts x {', '.join(profiles)} ...")
            rows = run_profiles(profiles, prompts, envs, bare)
        finally:
            for server in servers:
                server.terminate()
                server.wait(timeout=30)
    if args.json:
        report = {"size": args.size, "python_start_ms": round(bare, 1),
                  "import_vault_ms": round(imported, 1), "profiles": [asdict(r) for r in rows]}  # fmt: skip
        print(json.dumps(report, indent=2))
        return 0
    print(f"python start {bare:.0f} ms, import memtrove.vault {imported:.0f} ms (p50)")
    print(
        f"{'profile':<18}{'json p50':>9}{'p95':>8}{'exit p50':>10}{'p95':>8}{'ratio':>7}"
        f"{'injected':>10}{'tokens':>8}{'max':>6}{'budget':>8}"
    )
    for r in rows:
        print(
            f"{r.profile:<18}{r.json_p50_ms:>9.0f}{r.json_p95_ms:>8.0f}{r.exit_p50_ms:>10.0f}"
            f"{r.exit_p95_ms:>8.0f}{r.ratio_p50:>7.2f}{r.injected_share:>10.0%}"
            f"{r.tokens_mean:>8.0f}{r.tokens_max:>6}{r.budget:>8}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
