"""Search latency: ``Vault.search`` against a plain FTS5 query on the same notes.

Builds (or reuses) two indexes of the generated corpus of ``--size`` notes (default
10,000; ``corpus.py``, under ``.bench/corpus-<n>``):

- a memtrove vault, ``.bench/vault-<n>/vault.sqlite`` (config in ``.bench/vault-<n>/config``),
  brought up to date with ``update()`` (a no-op when it is already current);
- the baseline database of ``bench_index.py``, ``.bench/baseline-<n>.sqlite``: one
  ``fts5(path, title, body, tokenize='porter unicode61')`` table, rebuilt when missing or
  made from another corpus.

Then it runs the same ``--queries`` generated queries (default 200: single words, keyword
lists, natural-language questions, quoted phrases, operators and punctuation, identifiers,
CJK, 500+ character prompts) through each side, after ``--warmup`` untimed queries (the
first 20 of the list), timing every call with ``time.perf_counter``. All queries run in
``--repeats`` rounds (default 3) and each query counts with its median, so a moment of
machine noise does not land on one query class:

memtrove
    ``vault.search(query, limit=10)``: query parsing, term selection, the FTS5 query with
    weighted BM25, the document rows, and a snippet per hit.
baseline
    the query lowercased, its ``[^\\W_]+`` words quoted and OR-ed, then
    ``SELECT rowid, bm25(t) FROM t WHERE t MATCH ? ORDER BY rank LIMIT 10`` and one query
    for the hits' path and title.

Reports p50, p95 (linear interpolation) and mean latency in milliseconds; ``ratio`` is
memtrove's latency divided by the baseline's (higher means memtrove is slower). Below the
main table come the same figures per query class and memtrove's slowest queries.

Run from the repository root::

    .venv/bin/python benchmarks/bench_search.py [--size 10000] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from corpus import (
    BENCH_DIR,
    MARKER,
    baseline_search,
    build_baseline,
    corpus_dir,
    generate_corpus,
    generate_labelled_queries,
    open_baseline,
    percentile,
)
from memtrove import Vault
from memtrove.db.connection import Connection


@dataclass(frozen=True)
class Latency:
    p50_ms: float
    p95_ms: float
    mean_ms: float
    max_ms: float

    @classmethod
    def of(cls, seconds: list[float]) -> Latency:
        ms = [value * 1000 for value in seconds]
        return cls(
            p50_ms=round(percentile(ms, 0.50), 3),
            p95_ms=round(percentile(ms, 0.95), 3),
            mean_ms=round(statistics.fmean(ms), 3),
            max_ms=round(max(ms), 3),
        )


@dataclass(frozen=True)
class ClassResult:
    query_class: str
    queries: int
    memtrove: Latency
    baseline: Latency
    memtrove_no_hits: int
    baseline_no_hits: int


@dataclass(frozen=True)
class SlowQuery:
    query_class: str
    query: str
    memtrove_ms: float
    baseline_ms: float
    memtrove_hits: int


@dataclass(frozen=True)
class Report:
    notes: int
    queries: int
    warmup: int
    limit: int
    memtrove: Latency
    baseline: Latency
    ratio_p50: float
    ratio_p95: float
    memtrove_no_hits: int
    baseline_no_hits: int
    memtrove_errors: list[str] = field(default_factory=list)
    by_class: list[ClassResult] = field(default_factory=list)
    slowest: list[SlowQuery] = field(default_factory=list)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def open_vault(size: int, folder: Path) -> Vault:
    """The benchmark vault for ``size`` notes, up to date with ``folder``."""
    home = BENCH_DIR / f"vault-{size}"
    vault = Vault.open(home / "vault.sqlite", config_dir=home / "config")
    if not any(collection.path == folder.resolve() for collection in vault.collections()):
        vault.add_collection(folder, name="bench")
    started = time.perf_counter()
    report = vault.update()
    log(
        f"vault {vault.path}: {report.added} added, {report.updated} updated, "
        f"{report.unchanged} unchanged in {time.perf_counter() - started:.1f} s"
    )
    return vault


def open_baseline_for(size: int, folder: Path) -> Connection:
    """The baseline database for ``size`` notes, rebuilt unless it was made from this corpus."""
    db_path = BENCH_DIR / f"baseline-{size}.sqlite"
    stamp = (folder / MARKER).read_text(encoding="utf-8")
    if db_path.exists():
        connection = open_baseline(db_path)
        try:
            row = connection.execute("SELECT value FROM meta WHERE key = 'corpus'").fetchone()
        except Exception:
            row = None
        if row is not None and row[0] == stamp:
            log(f"baseline {db_path}: reused")
            return connection
        connection.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    started = time.perf_counter()
    count = build_baseline(folder, db_path)
    connection = open_baseline(db_path)
    connection.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    connection.execute("INSERT INTO meta VALUES ('corpus', ?)", (stamp,))
    log(f"baseline {db_path}: {count} notes indexed in {time.perf_counter() - started:.1f} s")
    return connection


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def run_memtrove(
    vault: Vault, queries: list[str], warmup: int, limit: int, repeats: int
) -> tuple[list[float], list[int], list[str]]:
    for query in queries[:warmup]:
        vault.search(query, limit=limit)
    rounds: list[list[float]] = [[] for _ in queries]
    hits: list[int] = [0] * len(queries)
    errors: list[str] = []
    for round_number in range(repeats):
        for index, query in enumerate(queries):
            started = time.perf_counter()
            try:
                hits[index] = len(vault.search(query, limit=limit))
            except Exception as error:  # report, do not stop: a failing query is a finding
                if round_number == 0:
                    errors.append(f"{query!r}: {type(error).__name__}: {error}")
            rounds[index].append(time.perf_counter() - started)
    return [_median(times) for times in rounds], hits, errors


def run_baseline(
    connection: Connection, queries: list[str], warmup: int, limit: int, repeats: int
) -> tuple[list[float], list[int]]:
    for query in queries[:warmup]:
        baseline_search(connection, query, limit)
    rounds: list[list[float]] = [[] for _ in queries]
    hits: list[int] = [0] * len(queries)
    for _ in range(repeats):
        for index, query in enumerate(queries):
            started = time.perf_counter()
            hits[index] = len(baseline_search(connection, query, limit))
            rounds[index].append(time.perf_counter() - started)
    return [_median(times) for times in rounds], hits


def benchmark(size: int, count: int, warmup: int, limit: int, repeats: int = 3) -> Report:
    folder = corpus_dir(size)
    log(f"corpus {folder} ...")
    generate_corpus(folder, size)
    labelled = generate_labelled_queries(count, corpus=folder)
    queries = [text for _, text in labelled]
    vault = open_vault(size, folder)
    try:
        m_seconds, m_hits, errors = run_memtrove(vault, queries, warmup, limit, repeats)
    finally:
        vault.close()
    connection = open_baseline_for(size, folder)
    try:
        b_seconds, b_hits = run_baseline(connection, queries, warmup, limit, repeats)
    finally:
        connection.close()
    memtrove = Latency.of(m_seconds)
    baseline = Latency.of(b_seconds)
    by_class: list[ClassResult] = []
    for name in dict.fromkeys(kind for kind, _ in sorted(labelled)):
        index = [i for i, (kind, _) in enumerate(labelled) if kind == name]
        by_class.append(
            ClassResult(
                query_class=name,
                queries=len(index),
                memtrove=Latency.of([m_seconds[i] for i in index]),
                baseline=Latency.of([b_seconds[i] for i in index]),
                memtrove_no_hits=sum(1 for i in index if m_hits[i] == 0),
                baseline_no_hits=sum(1 for i in index if b_hits[i] == 0),
            )
        )
    slowest = sorted(range(len(queries)), key=lambda i: m_seconds[i], reverse=True)[:8]
    return Report(
        notes=size,
        queries=len(queries),
        warmup=warmup,
        limit=limit,
        memtrove=memtrove,
        baseline=baseline,
        ratio_p50=round(memtrove.p50_ms / baseline.p50_ms, 2),
        ratio_p95=round(memtrove.p95_ms / baseline.p95_ms, 2),
        memtrove_no_hits=sum(1 for found in m_hits if found == 0),
        baseline_no_hits=sum(1 for found in b_hits if found == 0),
        memtrove_errors=errors,
        by_class=by_class,
        slowest=[
            SlowQuery(
                query_class=labelled[i][0],
                query=queries[i],
                memtrove_ms=round(m_seconds[i] * 1000, 3),
                baseline_ms=round(b_seconds[i] * 1000, 3),
                memtrove_hits=m_hits[i],
            )
            for i in slowest
        ],
    )


def _short(text: str, width: int = 90) -> str:
    flat = " ".join(text.split()).replace("|", "\\|")
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def markdown(report: Report) -> str:
    m, b = report.memtrove, report.baseline
    lines = [
        "| notes | memtrove p50 | p95 | baseline p50 | p95 | ratio p50 | ratio p95 |",
        "|---:|---:|---:|---:|---:|---:|---:|",
        f"| {report.notes:,} | {m.p50_ms:.2f} ms | {m.p95_ms:.2f} ms | {b.p50_ms:.2f} ms "
        f"| {b.p95_ms:.2f} ms | {report.ratio_p50:.1f}× | {report.ratio_p95:.1f}× |",
        "",
        f"{report.queries} queries after {report.warmup} warm-up queries, limit {report.limit}; "
        f"mean {m.mean_ms:.2f} ms (memtrove) vs {b.mean_ms:.2f} ms (baseline); "
        f"queries without hits: {report.memtrove_no_hits} (memtrove), "
        f"{report.baseline_no_hits} (baseline). ratio = memtrove ms ÷ baseline ms.",
        "",
        "| class | n | memtrove p50 | p95 | max | baseline p50 | p95 | max | no hits (m/b) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in report.by_class:
        lines.append(
            f"| {c.query_class} | {c.queries} | {c.memtrove.p50_ms:.2f} | {c.memtrove.p95_ms:.2f} "
            f"| {c.memtrove.max_ms:.2f} | {c.baseline.p50_ms:.2f} | {c.baseline.p95_ms:.2f} "
            f"| {c.baseline.max_ms:.2f} | {c.memtrove_no_hits}/{c.baseline_no_hits} |"
        )
    lines += [
        "",
        "| slowest (memtrove) | class | memtrove ms | baseline ms | hits |",
        "|---|---|---:|---:|---:|",
    ]
    for s in report.slowest:
        lines.append(
            f"| {_short(s.query)} | {s.query_class} | {s.memtrove_ms:.2f} "
            f"| {s.baseline_ms:.2f} | {s.memtrove_hits} |"
        )
    if report.memtrove_errors:
        lines += ["", "memtrove errors:", *(f"- {error}" for error in report.memtrove_errors)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=10_000, help="corpus size (default 10000)")
    parser.add_argument("--queries", type=int, default=200, help="timed queries (default 200)")
    parser.add_argument("--warmup", type=int, default=20, help="warm-up queries (default 20)")
    parser.add_argument("--limit", type=int, default=10, help="results per query (default 10)")
    parser.add_argument(
        "--repeats", type=int, default=3, help="timed rounds; each query's median (default 3)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if min(args.size, args.queries, args.limit, args.repeats) < 1 or args.warmup < 0:
        parser.error(
            "--size, --queries, --limit, --repeats must be positive, --warmup not negative"
        )
    report = benchmark(args.size, args.queries, args.warmup, args.limit, args.repeats)
    print(
        json.dumps(asdict(report), indent=2, ensure_ascii=False) if args.json else markdown(report)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
