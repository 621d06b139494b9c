"""Stop-hook latency: ``decision-extractor``, ``handoff-generator`` and ``feedback-loop`` as
Claude Code runs them, one process each after every response, without an LLM, against the
10k-note retrieval vault.

1. The vault of ``bench_retrieval.py`` (``.bench/retrieval-10000``; build it with that
   script first) is copied to a scratch folder, so the hooks' writes never touch it.
2. ``--sessions`` sessions (default 20) of ``--turns`` turns (default 3). Each turn's prompt
   is a generated question; ``context-surfacing`` runs on it first (untimed), so the vault
   holds the session's recall events as in real use. The turn's reply is appended to the
   session's transcript (Claude Code JSONL): it names the first injected document's path,
   decides something ("we decided to ...") and edits a file, so every hook has work to do.
   With ``../shared/bench/mine/claude-code`` present, each transcript starts with one of
   the recorded sessions there (read, never copied into the repository).
3. After each turn the three Stop hooks run in turn, each in a fresh
   ``python -m memtrove hook NAME`` process (bytecode caching on, as installed), timed from
   process start to the JSON answer (``json``) and to exit (``exit``: the work is done after
   the answer), after 2 untimed warm-up turns.

Reports per hook p50 / p95 / max in milliseconds and the ratio of the exit p50 to the JSON
p50 of ``context-surfacing`` (the baseline: timed the same way in the same run, on the same
turns, so it saw the same load; its quiet-machine figure is in the README), plus a bare
interpreter start and the hooks' 30 s timeout. The machine may be shared: read the medians. Run from the repository root::

    .venv/bin/python benchmarks/bench_stop_hooks.py [--sessions 20] [--turns 3] [--served] [--json]

``--served`` starts ``memtrove serve`` on the copy first, so every hook (context-surfacing
too) takes the warm path: the server answers and does the work after answering.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from bench_hooks import baseline, hook_env, log, make_prompts, start_server, timed_process
from corpus import BENCH_DIR, percentile

HOOKS = ("decision-extractor", "handoff-generator", "feedback-loop")
REFERENCE = "context-surfacing"  # timed in the same run: the load every hook saw
TIMEOUT_SECONDS = 30
WARMUP_TURNS = 2
RECORDED = Path(__file__).resolve().parents[2] / "shared" / "bench" / "mine" / "claude-code"


@dataclass
class Row:
    hook: str
    runs: int
    json_p50_ms: float
    exit_p50_ms: float
    exit_p95_ms: float
    exit_max_ms: float
    ratio_p50: float
    timeout_s: int


def entry(role: str, content: object) -> str:
    return json.dumps({"type": role, "message": {"role": role, "content": content}}) + "\n"


def reply_for(prompt: str, surfaced: str, turn: int) -> str:
    text = (
        f"Looking at {surfaced or 'the notes'} for this. We decided to keep the retry budget "
        f"at {turn + 2} attempts for this path. I updated the handler accordingly."
    )
    edit = {
        "type": "tool_use",
        "id": f"toolu_{turn}",
        "name": "Edit",
        "input": {
            "file_path": f"/project/src/handler_{turn}.py",
            "old_string": "a",
            "new_string": "b",
        },
    }
    return entry("assistant", [{"type": "text", "text": text}, edit])


def surfaced_path(context: str) -> str:
    for line in context.splitlines():
        if line.endswith(".md") and "/" in line and not line.startswith(("-", "<", "*")):
            return line.strip()
    return ""


def run(
    sessions: int, turns: int, envs: dict[str, str], root: Path
) -> dict[str, list[tuple[float, float]]]:
    prompts = make_prompts(sessions * turns + WARMUP_TURNS, 10_000)
    recorded = sorted(RECORDED.rglob("*.jsonl")) if RECORDED.is_dir() else []
    surfacing = [sys.executable, "-m", "memtrove", "hook", "context-surfacing"]
    timings: dict[str, list[tuple[float, float]]] = {name: [] for name in (*HOOKS, REFERENCE)}
    stamp = time.time_ns()
    index = 0
    for session in range(-1, sessions):  # session -1: the warm-up turns
        session_id = f"{stamp}-{session}"
        transcript = root / f"{session_id}.jsonl"
        start = recorded[session % len(recorded)].read_text() if recorded else ""
        transcript.write_text(start, encoding="utf-8")
        for turn in range(WARMUP_TURNS if session < 0 else turns):
            prompt = prompts[index % len(prompts)]
            index += 1
            payload = {
                "session_id": session_id,
                "hook_event_name": "UserPromptSubmit",
                "prompt": prompt,
            }
            surfaced_ms, _, line = timed_process(surfacing, json.dumps(payload).encode(), envs)
            if session >= 0:
                timings["context-surfacing"].append((surfaced_ms, surfaced_ms))
            context = json.loads(line)["hookSpecificOutput"]["additionalContext"]
            with transcript.open("a", encoding="utf-8") as handle:
                handle.write(entry("user", prompt))
                handle.write(reply_for(prompt, surfaced_path(context), turn))
            stop = {
                "session_id": session_id,
                "hook_event_name": "Stop",
                "transcript_path": str(transcript),
                "stop_hook_active": False,
            }
            for name in HOOKS:
                command = [sys.executable, "-m", "memtrove", "hook", name]
                answer_ms, exit_ms, answer = timed_process(command, json.dumps(stop).encode(), envs)
                if json.loads(answer) != {"continue": True, "suppressOutput": False}:
                    raise RuntimeError(f"{name} answered {answer!r}")
                if session >= 0:
                    timings[name].append((answer_ms, exit_ms))
    return timings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument(
        "--served", action="store_true", help="with memtrove serve running (the warm path)"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    source = BENCH_DIR / "retrieval-10000"
    if not (source / "vault.sqlite").exists():
        log(f"no vault at {source}; run benchmarks/bench_retrieval.py --size 10000 first")
        return 1
    with tempfile.TemporaryDirectory(prefix="bench-stop-", dir=BENCH_DIR) as scratch:
        root = Path(scratch)
        shutil.copyfile(source / "vault.sqlite", root / "vault.sqlite")
        shutil.copytree(source / "config", root / "config")
        env = hook_env(root / "vault.sqlite", root / "config", root / "cache", "balanced")
        bare = baseline("pass", env, 15)
        log(f"baseline: python start {bare:.0f} ms; {args.sessions} sessions x {args.turns} turns")
        server = start_server(env) if args.served else None
        try:
            timings = run(args.sessions, args.turns, env, root)
        finally:
            if server is not None:
                server.terminate()
                server.wait(timeout=60)
        stats = json.loads(
            subprocess.run(
                [sys.executable, "-c", STATS, str(root / "vault.sqlite")],
                env=env, capture_output=True, check=True,
            ).stdout
        )  # fmt: skip
    rows = []
    reference = statistics.median(answer for answer, _ in timings[REFERENCE])
    for name in (*HOOKS, REFERENCE):
        answers = [a for a, _ in timings[name]]
        exits = [e for _, e in timings[name]]
        p50 = statistics.median(exits)
        row = Row(
            hook=name,
            runs=len(exits),
            json_p50_ms=round(statistics.median(answers), 1),
            exit_p50_ms=round(p50, 1),
            exit_p95_ms=round(percentile(exits, 0.95), 1),
            exit_max_ms=round(max(exits), 1),
            ratio_p50=round(p50 / reference, 2),
            timeout_s=TIMEOUT_SECONDS,
        )
        rows.append(row)
    if args.json:
        print(json.dumps({"python_start_ms": round(bare, 1), "written": stats,
                          "hooks": [asdict(r) for r in rows]}, indent=2))  # fmt: skip
        return 0
    print(f"python start {bare:.0f} ms (p50); written: {stats}")
    print(
        f"{'hook':<20}{'runs':>5}{'json p50':>10}{'exit p50':>10}{'p95':>8}{'max':>8}{'ratio':>7}"
    )
    for r in rows:
        print(
            f"{r.hook:<20}{r.runs:>5}{r.json_p50_ms:>10.0f}{r.exit_p50_ms:>10.0f}"
            f"{r.exit_p95_ms:>8.0f}{r.exit_max_ms:>8.0f}{r.ratio_p50:>7.2f}"
        )
    print(f"timeout {TIMEOUT_SECONDS} s per hook")
    return 0


STATS = """
import json, sys
from memtrove import Vault
with Vault.open(sys.argv[1]) as v:
    c = v._connection
    q = lambda sql: c.execute(sql).fetchone()[0]
    print(json.dumps({
        "observations": q("SELECT COUNT(*) FROM documents WHERE path LIKE 'agent/observations/%'"),
        "handoffs": q("SELECT COUNT(*) FROM documents WHERE path LIKE 'agent/handoffs/%'"),
        "referenced_events": q("SELECT COUNT(*) FROM recall_events WHERE was_referenced = 1"),
        "checked_events": q("SELECT COUNT(*) FROM recall_events WHERE checked_at IS NOT NULL"),
    }))
"""


if __name__ == "__main__":
    sys.exit(main())
