"""How fast ``memtrove mine`` imports, and how much memory a huge session costs.

1. Speed, without ``--embed``, on the 2.7 MB Claude Code session with subagents and the
   192-conversation ChatGPT export of ``../shared/bench/mine/`` (read in place, never
   copied): each run mines the file into a fresh vault; the first import and a rerun
   (everything unchanged) are timed, and, as baselines measured in the same process, the
   reader alone (parse and cut into exchanges, no vault) and the reader followed by a bare
   FTS5 insert of each exchange's text (the floor any writer has). Medians of ``--runs``.
   A generated ChatGPT export of ``--generated`` exchanges (10 per conversation, prose,
   lists and code over a 20,000-word vocabulary, ~2.6 KB a document like the real export)
   is timed the same way, so the rate is not dominated by start-up, with the time split
   into its stages (reading, rendering, redaction, hashing and parsing, quality and
   fragments; the database is the rest).
2. Memory: a generated Claude Code session of ``--large-mb`` megabytes (tool results of
   100 KB each, the shape that makes sessions huge) is mined in a child process, whose peak
   RSS is compared with a child that only opens the vault.

Run from the repository root::

    .venv/bin/python benchmarks/bench_mine.py [--runs 5] [--generated 50000] [--large-mb 200] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT.parent / "shared" / "bench" / "mine"
SESSION = (
    BENCH
    / "claude-code"
    / "marot-spotter__session-with-subagents"
    / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
)
CHATGPT = BENCH / "chatgpt" / "pkuppens-my_chat_gpt__conversations.json"


def reader_only(label: str, path: Path) -> tuple[int, float]:
    from memtrove.mine.exchanges import Skips, exchanges
    from memtrove.mine.formats import reader

    started = time.perf_counter()
    count = sum(1 for c in reader(label).read(path, Skips()) for _ in exchanges(c))
    return count, time.perf_counter() - started


def fts_baseline(label: str, path: Path) -> tuple[int, float]:
    """The reader, then each exchange's document text into a bare FTS5 table (one
    transaction, no redaction, fragments, rows or indexes): the floor a writer can reach."""
    import sqlean

    from memtrove.mine.exchanges import Skips, exchanges
    from memtrove.mine.formats import reader
    from memtrove.mine.writer import render

    with tempfile.TemporaryDirectory(prefix="bench-mine-fts-") as folder:
        connection = sqlean.connect(str(Path(folder) / "fts.sqlite"))
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute(
            "CREATE VIRTUAL TABLE t USING fts5(path, body, tokenize='porter unicode61')"
        )
        started = time.perf_counter()
        count = 0
        with connection:
            for conversation in reader(label).read(path, Skips()):
                for exchange in exchanges(conversation):
                    document = render(exchange, path.name)
                    if document is not None:
                        connection.execute(
                            "INSERT INTO t VALUES (?, ?)", (document.path, document.text)
                        )
                        count += 1
        seconds = time.perf_counter() - started
        connection.close()
    return count, seconds


def mine_once(path: Path) -> dict[str, float]:
    from memtrove import Vault

    with (
        tempfile.TemporaryDirectory(prefix="bench-mine-") as folder,
        Vault.open(Path(folder) / "v.sqlite", config_dir=Path(folder) / "config") as vault,
    ):
        started = time.perf_counter()
        first = vault.mining.mine(path)
        import_seconds = time.perf_counter() - started
        started = time.perf_counter()
        again = vault.mining.mine(path)
        rerun_seconds = time.perf_counter() - started
    assert again.written == 0 and again.unchanged == first.written
    return {
        "exchanges": first.exchanges,
        "written": first.written,
        "import_s": import_seconds,
        "rerun_s": rerun_seconds,
    }


def speed(label: str, path: Path, runs: int) -> dict[str, Any]:
    mine_once(path)  # warm: imports, the page cache
    samples = []
    readers = []
    floors = []
    for _ in range(runs):  # interleaved, so a burst of load on the machine hits all three
        samples.append(mine_once(path))
        readers.append(reader_only(label, path))
        floors.append(fts_baseline(label, path))
    exchanges = samples[0]["exchanges"]
    import_s = statistics.median(s["import_s"] for s in samples)
    rerun_s = statistics.median(s["rerun_s"] for s in samples)
    read_s = statistics.median(seconds for _, seconds in readers)
    fts_s = statistics.median(seconds for _, seconds in floors)
    megabytes = path.stat().st_size / 1e6
    return {
        "file": path.name,
        "megabytes": round(megabytes, 2),
        "exchanges": exchanges,
        "import_seconds": round(import_s, 3),
        "import_exchanges_per_s": round(exchanges / import_s),
        "import_mb_per_s": round(megabytes / import_s, 1),
        "rerun_seconds": round(rerun_s, 3),
        "rerun_exchanges_per_s": round(exchanges / rerun_s),
        "reader_seconds": round(read_s, 3),
        "reader_exchanges_per_s": round(exchanges / read_s),
        "import_vs_reader": round(import_s / read_s, 1),
        "fts_baseline_seconds": round(fts_s, 3),
        "fts_baseline_exchanges_per_s": round(floors[0][0] / fts_s),
        "import_vs_fts_baseline": round(import_s / fts_s, 2),
    }


def stages(label: str, path: Path, runs: int) -> dict[str, float]:
    """Where an import's time goes: each stage of the writer's preparation run on its own
    over the whole file (medians, seconds); the database's share is the import less these."""
    from memtrove.index.classify import quality_score
    from memtrove.index.markdown import document_title
    from memtrove.index.preparing import fragment_rows
    from memtrove.mine.exchanges import Skips, exchanges
    from memtrove.mine.formats import reader
    from memtrove.mine.writer import _parsed, render
    from memtrove.security.redaction import DEFAULT

    timings: dict[str, list[float]] = {}

    def lap(name: str, started: float) -> float:
        now = time.perf_counter()
        timings.setdefault(name, []).append(now - started)
        return now

    for _ in range(runs):
        started = time.perf_counter()
        found = [e for c in reader(label).read(path, Skips()) for e in exchanges(c)]
        started = lap("read", started)
        documents = [d for d in (render(e, path.name) for e in found) if d is not None]
        started = lap("render", started)
        texts = [DEFAULT.redact(d.text) for d in documents]
        started = lap("redact", started)
        parsed = []
        for document, text in zip(documents, texts, strict=True):
            hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()
            one = _parsed(document, text)
            parsed.append((one, document_title(one, document.path)))
        started = lap("hash_parse", started)
        for one, _ in parsed:
            quality_score(one.body, True)
        started = lap("quality", started)
        for one, title in parsed:
            fragment_rows(one, title)
        lap("fragments", started)
    return {name: round(statistics.median(values), 4) for name, values in timings.items()}


def write_chatgpt(path: Path, exchanges: int, seed: int = 14) -> None:
    """A ChatGPT export of ``exchanges`` exchanges, 10 per conversation: questions of ~150
    characters, answers of ~2,300 in paragraphs, lists and code, over 20,000 words."""
    generator = random.Random(seed)
    vocabulary = [
        "".join(generator.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(generator.randint(3, 10)))
        for _ in range(20_000)
    ]  # fmt: skip

    weights = list(itertools.accumulate(1 / rank for rank in range(1, len(vocabulary) + 1)))

    def sentence(words: int) -> str:  # words drawn by Zipf's law, as in prose
        chosen = generator.choices(vocabulary, cum_weights=weights, k=words)
        return " ".join(chosen).capitalize() + "."

    def answer() -> str:
        parts = [" ".join(sentence(generator.randint(8, 20)) for _ in range(4)) for _ in range(3)]
        if generator.random() < 0.6:
            parts.append("\n".join(f"- {sentence(8)}" for _ in range(generator.randint(2, 6))))
        if generator.random() < 0.4:
            code = "\n".join(f"    {generator.choice(vocabulary)}({n})" for n in range(8))
            parts.append(f"```python\ndef {generator.choice(vocabulary)}():\n{code}\n```")
        parts.append(" ".join(sentence(generator.randint(8, 20)) for _ in range(3)))
        return "\n\n".join(parts)

    with path.open("w", encoding="utf-8") as handle:
        handle.write("[")
        for number in range(0, exchanges, 10):
            mapping: dict[str, Any] = {"root": {"id": "root", "parent": None, "children": []}}
            parent = "root"
            stamp = 1_700_000_000 + number * 60
            for turn in range(min(10, exchanges - number)):
                for role, text in (("user", sentence(25)), ("assistant", answer())):
                    node = f"n{number}-{turn}-{role}"
                    mapping[parent]["children"].append(node)
                    mapping[node] = {
                        "id": node, "parent": parent, "children": [],
                        "message": {
                            "id": node, "author": {"role": role}, "create_time": stamp + turn,
                            "content": {"content_type": "text", "parts": [text]},
                            "metadata": {},
                        },
                    }  # fmt: skip
                    parent = node
            handle.write(("," if number else "") + json.dumps({
                "title": sentence(5), "create_time": stamp, "update_time": stamp + 10,
                "mapping": mapping, "current_node": parent, "conversation_id": f"c{number}",
            }))  # fmt: skip
        handle.write("]")


def generated(exchanges: int, runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-mine-generated-") as folder:
        path = Path(folder) / "conversations.json"
        write_chatgpt(path, exchanges)
        result = speed("chatgpt", path, runs)
        result["stages_seconds"] = _with_rest(result, stages("chatgpt", path, runs))
    return result


def _with_rest(result: dict[str, Any], timings: dict[str, float]) -> dict[str, float]:
    """The stages, and what the import spent besides them (the database, mostly)."""
    rest = result["import_seconds"] - sum(timings.values())
    return {**timings, "database_and_rest": round(rest, 4)}


def write_large(path: Path, megabytes: int) -> int:
    """A session of prompts, each with 20 Read calls returning 100 KB; its exchange count."""
    dump = "y" * 100_000
    prompts = 0
    parent: str | None = None
    with path.open("w", encoding="utf-8") as handle:
        while handle.tell() < megabytes * 1_000_000:
            prompts += 1
            uuid = f"p{prompts}"
            handle.write(json.dumps({
                "type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": "large",
                "timestamp": "2025-05-01T10:00:00Z",
                "message": {"role": "user", "content": f"Summarise log batch {prompts} please"},
            }) + "\n")  # fmt: skip
            parent = uuid
            for call in range(20):
                tool = f"{uuid}-t{call}"
                handle.write(json.dumps({
                    "type": "assistant", "uuid": f"{tool}-c", "parentUuid": parent,
                    "timestamp": "2025-05-01T10:00:01Z",
                    "message": {"id": f"{tool}-m", "role": "assistant", "content": [
                        {"type": "tool_use", "id": tool, "name": "Read",
                         "input": {"file_path": f"/logs/{prompts}/{call}.log"}}]},
                }) + "\n")  # fmt: skip
                handle.write(json.dumps({
                    "type": "user", "uuid": f"{tool}-r", "parentUuid": f"{tool}-c",
                    "timestamp": "2025-05-01T10:00:02Z",
                    "message": {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": tool, "content": dump}]},
                }) + "\n")  # fmt: skip
                parent = f"{tool}-r"
    return prompts


CHILD = """
import resource, sys, time
from pathlib import Path
from memtrove import Vault
folder = Path(sys.argv[1])
with Vault.open(folder / "v.sqlite", config_dir=folder / "config") as vault:
    started = time.perf_counter()
    report = vault.mining.mine(sys.argv[2]) if len(sys.argv) > 2 else None
    seconds = time.perf_counter() - started
print(report.exchanges if report else 0, round(seconds, 2),
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def child_rss(folder: Path, *file: Path) -> tuple[int, float, int]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder), *map(str, file)],
        capture_output=True,
        text=True,
        check=True,
    )
    exchanges, seconds, rss_kb = done.stdout.split()
    return int(exchanges), float(seconds), int(rss_kb)


def memory(megabytes: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-mine-large-") as folder:
        root = Path(folder)
        path = root / "exports" / "large.jsonl"
        path.parent.mkdir()
        prompts = write_large(path, megabytes)
        _, _, baseline_kb = child_rss(root / "baseline")
        exchanges, seconds, peak_kb = child_rss(root / "mined", path)
        size = path.stat().st_size / 1e6
    assert exchanges == prompts, (exchanges, prompts)
    return {
        "megabytes": round(size),
        "exchanges": exchanges,
        "seconds": seconds,
        "mb_per_s": round(size / seconds, 1),
        "peak_rss_mb": round(peak_kb / 1024),
        "baseline_rss_mb": round(baseline_kb / 1024),
        "mining_rss_mb": round((peak_kb - baseline_kb) / 1024),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--generated", type=int, default=50_000, help="0 skips it")
    parser.add_argument("--large-mb", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    results: dict[str, Any] = {"runs": options.runs}
    if options.large_mb > 0:  # first: a child forked from a process grown by the speed runs
        results["large_session"] = memory(options.large_mb)  # would report its size as RSS
    if SESSION.is_file() and CHATGPT.is_file():
        results["claude_code"] = speed("claude-code", SESSION, options.runs)
        results["chatgpt"] = speed("chatgpt", CHATGPT, options.runs)
        for name, label, path in (
            ("claude_code", "claude-code", SESSION),
            ("chatgpt", "chatgpt", CHATGPT),
        ):
            results[name]["stages_seconds"] = _with_rest(
                results[name], stages(label, path, options.runs)
            )
    else:
        print(f"skipping the speed runs: {BENCH} is not here", file=sys.stderr)
    if options.generated > 0:
        results["generated"] = generated(options.generated, options.runs)
    results["self_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    if options.json:
        print(json.dumps(results, indent=2))
        return
    for name in ("claude_code", "chatgpt", "generated"):
        if name in results:
            r = results[name]
            print(
                f"{name}: {r['exchanges']} exchanges from {r['megabytes']} MB: import "
                f"{r['import_seconds']}s ({r['import_exchanges_per_s']} exchanges/s, "
                f"{r['import_mb_per_s']} MB/s), rerun {r['rerun_seconds']}s "
                f"({r['rerun_exchanges_per_s']}/s), reader alone {r['reader_seconds']}s "
                f"({r['reader_exchanges_per_s']}/s; import = {r['import_vs_reader']}x reader); "
                f"reader + bare FTS5 insert {r['fts_baseline_seconds']}s "
                f"({r['fts_baseline_exchanges_per_s']}/s; import = "
                f"{r['import_vs_fts_baseline']}x it)"
            )
            if "stages_seconds" in r:
                print(
                    "  stages (s): " + ", ".join(f"{k} {v}" for k, v in r["stages_seconds"].items())
                )
    if "large_session" in results:
        r = results["large_session"]
        print(
            f"large session: {r['megabytes']} MB, {r['exchanges']} exchanges in {r['seconds']}s "
            f"({r['mb_per_s']} MB/s); peak RSS {r['peak_rss_mb']} MB against "
            f"{r['baseline_rss_mb']} MB for a process that only opens the vault "
            f"(+{r['mining_rss_mb']} MB)"
        )


if __name__ == "__main__":
    main()
