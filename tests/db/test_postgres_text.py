"""The PostgreSQL text index against SQLite FTS5: the same documents in, the same top ten
(ids and bm25 scores, bit for bit) out, for questions, phrases, prefixes and exclusions, before
and after rows are taken out and after the totals are recounted."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from memtrove.db.connection import Connection, open_connection
from memtrove.db.migrations import migrate
from memtrove.db.postgres.connection import PostgresConnection, open_postgres
from memtrove.db.postgres.text_index import PostgresTextIndex
from memtrove.db.text_query import parse_query

BENCH = Path(__file__).resolve().parents[2].parent / "shared" / "bench" / "prose"
LIMIT = 150

QUESTIONS = [
    "How does the monotonic clock reading work in time.Time?",
    "What is the proposal for type aliases?",
    "How are generics implemented with dictionaries and gcshape stenciling?",
    "soft memory limit for the garbage collector",
    "How does the GC pacer redesign work?",
    "non-cooperative goroutine preemption using signals",
    "Why were open-coded defers added?",
    "fuzzing support in the go command",
    "structured logging package slog",
    "How does the checksum database (sumdb) protect module downloads?",
    "What does go install do with versions?",
    "workspaces in gopls and go.work files",
    "register-based calling convention for the internal ABI",
    "How are loop variables scoped per iteration?",
    "profile-guided optimization PGO",
    "error values wrapping and inspection Is As",
    "try builtin for error handling",
    "binary-only packages",
    "vendor directory behavior in Go 1.5",
    "the code of conduct",
    "how does the scavenger return memory to the OS",
    "page allocator scaling",
    "sharded per-cpu values",
    "number literal syntax binary octal",
    "signed shift counts",
    "mid-stack inlining in the compiler",
    "DWARF information for inlined functions",
    "XML streaming tokens",
    "test2json output of go test",
    "subtests and sub-benchmarks in the testing package",
    "benchmark data format",
    "GODEBUG settings and compatibility",
    "GOTOOLCHAIN toolchain downloads",
    "execution tracer overhead",
    "goroutine leak detection using the garbage collector",
    "mutex spinning",
    "WebAssembly exported functions wasmexport",
    "code coverage redesign",
    "embedding files in binaries",
    "io/fs file system interface",
    "vulnerability database",
    "lazy module loading and pruned module graphs",
    "64-bit atomic field alignment on 32-bit platforms",
    "cgo rules for passing pointers",
    "heap hugepage utilization",
]
SPECIAL = [
    '"monotonic clock" time',
    '"type parameters" constraints',
    '"error handling"',
    '"garbage collector" pacer heap',
    '"go command" modul*',
    "generic* interfaces",
    "sched* goroutine",
    "fuzz*",
    "preempt* signal*",
    "garbage collector -generics",
    "module proxy -sumdb -checksum",
    '"memory limit" -pacer',
    'fuzz* -draft "corpus"',
    "zzzqqq nothingmatches",
    "the and of",
]


def _documents() -> list[tuple[int, str, str, str]]:
    files = sorted((BENCH / "go-proposals").glob("*.md"))
    files += sorted((BENCH / "k8s-keps").rglob("*.md"))
    rows = []
    for number, file in enumerate(files[:LIMIT]):
        text = file.read_text(encoding="utf-8", errors="replace")
        lines = text.splitlines()
        heading = next((i for i, line in enumerate(lines) if line.startswith("# ")), None)
        title = lines[heading][2:].strip() if heading is not None else file.stem
        body = "\n".join(lines[heading + 1 :] if heading is not None else lines)
        collection = file.relative_to(BENCH).parts[0]
        path = "/".join(file.relative_to(BENCH).parts[1:])
        rows.append((7 + 3 * number, f"{collection}/{path}", title, body))
    return rows


def _register(connection: Any, rows: list[tuple[int, str, str, str]]) -> None:
    """``documents`` rows for the indexed ones, for conditions to filter on."""
    for doc_id, filepath, title, _ in rows:
        collection, path = filepath.split("/", 1)
        connection.execute(
            "INSERT INTO content (hash, doc, created_at) VALUES (?, ?, ?)", (str(doc_id), "", "t")
        )
        connection.execute(
            "INSERT INTO documents (id, collection, path, title, hash, docid, created_at, "
            "modified_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (doc_id, collection, path, title, str(doc_id), f"d{doc_id}", "t", "t"),
        )


@pytest.fixture
def engines(
    url: str, tmp_path: Path
) -> Iterator[tuple[PostgresTextIndex, Connection, list[tuple[int, str, str, str]]]]:
    if not (BENCH / "go-proposals").is_dir():
        pytest.skip(f"no bench documents at {BENCH}")
    rows = _documents()
    pg = open_postgres(url)
    migrate(cast(Any, pg), label="vault")
    lite = open_connection(tmp_path / "vault.sqlite")
    migrate(lite)
    text = pg.text
    started = time.perf_counter()
    with pg.transaction():
        text.add_documents(rows)
    pg_seconds = time.perf_counter() - started
    started = time.perf_counter()
    with lite.transaction():
        lite.text.add_documents(rows)
    lite_seconds = time.perf_counter() - started
    print(
        f"\nindexed {len(rows)} documents: PostgreSQL {len(rows) / pg_seconds:.0f} docs/s, "
        f"SQLite {len(rows) / lite_seconds:.0f} docs/s"
    )
    for connection in (pg, lite):
        with connection.transaction():
            _register(connection, rows)
    yield text, lite, rows
    pg.close()
    lite.close()


def _same(
    text: PostgresTextIndex, lite: Connection, query: str, **options: Any
) -> list[tuple[int, float]]:
    parsed = parse_query(query)
    ours = text.search(parsed, 10, **options)
    theirs = lite.text.search(parsed, 10, **options)
    assert [i for i, _ in ours] == [i for i, _ in theirs], query
    for (_, mine), (_, fts5) in zip(ours, theirs, strict=True):
        assert mine == fts5, (query, mine, fts5)  # to the last bit
    return ours


def _all_same(text: PostgresTextIndex, lite: Connection) -> int:
    found = 0
    for query in QUESTIONS + SPECIAL:
        found += bool(_same(text, lite, query))
    return found


Engines = tuple[PostgresTextIndex, Connection, list[tuple[int, str, str, str]]]


def test_the_same_ranking(engines: Engines) -> None:
    text, lite, rows = engines
    started = time.perf_counter()
    assert _all_same(text, lite) == len(QUESTIONS) + len(SPECIAL) - 1  # all but zzzqqq
    for query in SPECIAL:  # the phrases, prefixes and exclusions find something
        assert bool(text.search(parse_query(query), 10)) == ("zzzqqq" not in query), query
    # An exclusion takes out rows that would match.
    assert {i for i, _ in text.search(parse_query("garbage collector -generics"), None)} < {
        i for i, _ in text.search(parse_query("garbage collector"), None)
    }
    print(f"{len(QUESTIONS) + len(SPECIAL)} searches: {time.perf_counter() - started:.2f} s")
    assert text.document_count() == lite.text.document_count() == len(rows)
    terms = ["monoton", "gener", "garbag", "zzzqqq", "the", "preempt"]
    assert text.term_counts(terms) == lite.text.term_counts(terms)
    # All of them, unlimited, and a ranking of every row for a common word.
    parsed = parse_query("memory")
    ours = text.search(parsed, None)
    theirs = lite.text.search(parsed, None)
    assert [i for i, _ in ours] == [i for i, _ in theirs]
    assert max(abs(a - b) for (_, a), (_, b) in zip(ours, theirs, strict=True)) < 1e-9


def test_conditions_filter(engines: Engines) -> None:
    text, lite, _ = engines
    for query in QUESTIONS[:10] + SPECIAL[:6]:
        _same(text, lite, query, conditions=["d.collection = ?"], params=["go-proposals"])
        _same(text, lite, query, conditions=["d.id % ? = 0", "d.title <> ?"], params=[2, "x"])


def test_archived_index(engines: Engines) -> None:
    text, lite, rows = engines
    archived = rows[::3]
    with text._connection.transaction():
        text.add_documents(archived, index="archived")
    with lite.transaction():
        lite.text.add_documents(archived, index="archived")
    for query in QUESTIONS[:15] + SPECIAL:
        _same(text, lite, query, index="archived")


def test_after_removals_and_recount(engines: Engines) -> None:
    text, lite, rows = engines
    removed = [doc_id for doc_id, *_ in rows[5::4]]
    pg = cast(PostgresConnection, text._connection)
    with pg.transaction():
        text.remove_documents([*removed, 99999])
    with lite.transaction():
        lite.text.remove_documents([*removed, 99999])
    assert text.document_count() == lite.text.document_count() == len(rows) - len(removed)
    _all_same(text, lite)  # the totals still count the removed rows, on both
    drifted = _same(text, lite, QUESTIONS[0])
    text.recount_totals(["documents"])
    lite.text.recount_totals(["documents"])
    _all_same(text, lite)
    assert _same(text, lite, QUESTIONS[0]) != drifted  # the recount changed the scores
    # Rows put back after the recount count again.
    back = [row for row in rows if row[0] in removed[:5]]
    with pg.transaction():
        text.add_documents(back)
    with lite.transaction():
        lite.text.add_documents(back)
    _all_same(text, lite)
    terms = ["monoton", "gener", "garbag", "fuzz"]
    assert text.term_counts(terms) == lite.text.term_counts(terms)


SMALL = [
    (5, "notes/a.md", "Running tests", "the runner runs running tests; tests run fast"),
    (3, "notes/b.md", "Running tests", "the runner runs running tests; tests run fast"),
    (9, "notes/c.md", "Échecs et café", "le café est très chaud; café café café"),
    (2, "notes/d.md", "中文 notes", "我们 使用 中文 搜索 文档 中文"),
    (11, "notes/e.md", "Repeats", "go go go go stop go go"),
    (4, "notes/f.md", "Split", "alpha beta"),
    (6, "notes/g.md", "beta", "gamma alpha"),
]
SMALL_QUERIES = [
    "running tests",
    "run*",
    "runn* -fast",
    '"go go"',
    '"go go" stop',
    '"alpha beta"',
    '"beta gamma"',
    "cafe",
    "café chaud",
    "中文",
    "中文搜索",
    "使用",
    "alpha -gamma",
    "notes",
    '"tests run" runner*',
]


def test_edge_cases(url: str, tmp_path: Path) -> None:
    pg = open_postgres(url)
    migrate(cast(Any, pg), label="vault")
    lite = open_connection(tmp_path / "vault.sqlite")
    migrate(lite)
    text = pg.text
    try:
        assert text.search(parse_query("anything"), 10) == []  # nothing indexed yet
        with pg.transaction():
            text.add_documents(SMALL)
        with lite.transaction():
            lite.text.add_documents(SMALL)
        for query in SMALL_QUERIES:
            _same(text, lite, query)
        ties = text.search(parse_query("running tests"), None)
        assert [i for i, _ in ties[:2]] == [3, 5] and ties[0][1] == ties[1][1]
        with pg.transaction():
            text.remove_documents([doc_id for doc_id, *_ in SMALL])
        with lite.transaction():
            lite.text.remove_documents([doc_id for doc_id, *_ in SMALL])
        assert text.search(parse_query("running"), 10) == lite.text.search(
            parse_query("running"), 10
        )
        assert text.document_count() == lite.text.document_count() == 0
    finally:
        pg.close()
        lite.close()
