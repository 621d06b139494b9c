"""The rest of the PostgreSQL text index against SQLite FTS5, on the same real documents:
passages (best passage per document), entity names (prefix matches and their ranking),
the vocabulary, title phrases, the totals record an export carries, settling drifted
totals, and the write buffer (what a rolled-back savepoint or transaction wrote is gone,
what a committed one wrote is searchable)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from memtrove.db.connection import Connection, open_connection
from memtrove.db.migrations import migrate
from memtrove.db.postgres.connection import PostgresConnection, open_postgres
from memtrove.db.text_query import parse_query
from tests.db.test_postgres_text import BENCH, QUESTIONS, SPECIAL, _documents

Pair = tuple[PostgresConnection, Connection, list[tuple[int, str, str, str]]]


@pytest.fixture
def pair(url: str, tmp_path: Path) -> Iterator[Pair]:
    if not (BENCH / "go-proposals").is_dir():
        pytest.skip(f"no bench documents at {BENCH}")
    rows = _documents()[:80]
    pg = open_postgres(url)
    migrate(cast(Any, pg), label="vault")
    lite = open_connection(tmp_path / "vault.sqlite")
    migrate(lite)
    for connection in (pg, lite):
        with connection.transaction():
            connection.text.add_documents(rows)
    yield pg, lite, rows
    pg.close()
    lite.close()


def _sections(body: str) -> list[str]:
    return [part for part in body.split("\n## ") if part.strip()][:40]


def test_passages(pair: Pair) -> None:
    pg, lite, rows = pair
    for connection in (pg, lite):
        with connection.transaction():
            for doc_id, _, _, body in rows:
                connection.text.add_passages(doc_id, _sections(body))
    for query in QUESTIONS[:25] + SPECIAL:
        parsed = parse_query(query)
        ours = pg.text.search_passages(parsed, 10)
        theirs = lite.text.search_passages(parsed, 10)
        assert [(d, n) for d, _, n in ours] == [(d, n) for d, _, n in theirs], query
        for (_, a, _), (_, b, _) in zip(ours, theirs, strict=True):
            assert abs(a - b) < 1e-9
    removed = [doc_id for doc_id, *_ in rows[::5]]
    for connection in (pg, lite):
        with connection.transaction():
            connection.text.remove_documents(removed, index="passages")
    for query in QUESTIONS[:10]:
        parsed = parse_query(query)
        assert [d for d, _, _ in pg.text.search_passages(parsed, 10)] == [
            d for d, _, _ in lite.text.search_passages(parsed, 10)
        ]
    assert pg.text.settle_totals() is True  # removals drifted the passage totals
    assert pg.text.settle_totals() is False


def test_passage_filters_match(pair: Pair, url: str) -> None:
    pg, lite, rows = pair
    for connection in (pg, lite):
        with connection.transaction():
            for doc_id, filepath, title, body in rows:
                collection, path = filepath.split("/", 1)
                connection.execute(
                    "INSERT INTO content (hash, doc, created_at) VALUES (?, ?, ?)",
                    (str(doc_id), "", "t"),
                )
                connection.execute(
                    "INSERT INTO documents (id, collection, path, title, hash, docid, "
                    "created_at, modified_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (doc_id, collection, path, title, str(doc_id), f"d{doc_id}", "t", "t"),
                )
                connection.text.add_passages(doc_id, _sections(body))
    for query in QUESTIONS[:15]:
        parsed = parse_query(query)
        ours = pg.text.search_passages(parsed, 8, ["d.id % ? = 1"], [2])
        theirs = lite.text.search_passages(parsed, 8, ["d.id % ? = 1"], [2])
        assert [(d, n) for d, _, n in ours] == [(d, n) for d, _, n in theirs], query
    # The indexed condition picks the same documents.
    sql = "SELECT d.id FROM documents d WHERE {} ORDER BY d.id"
    with pg.transaction():
        pg.text.remove_documents([rows[0][0]])
    with lite.transaction():
        lite.text.remove_documents([rows[0][0]])
    ours = pg.execute(sql.format(pg.text.indexed_condition("d"))).fetchall()
    theirs = lite.execute(sql.format(lite.text.indexed_condition("d"))).fetchall()
    assert [tuple(r) for r in ours] == [tuple(r) for r in theirs] and len(ours) == len(rows) - 1


NAMES = [
    ("e1", "Kubernetes API server", "project"),
    ("e2", "kube-scheduler", "component"),
    ("e3", "Go Garbage Collector", "component"),
    ("e4", "Café Résumé", "topic"),
    ("e5", "garbage collection pacer", "topic"),
    ("e6", "Gopher", "person"),
    ("e7", "GC", "acronym"),
    ("e8", "API gateway", "component"),
]


def test_entities(pair: Pair) -> None:
    pg, lite, _ = pair
    for connection in (pg, lite):
        with connection.transaction():
            for number, (entity_id, name, kind) in enumerate(NAMES):
                connection.execute(
                    "INSERT INTO entity_nodes (entity_id, entity_type, name, vault, "
                    "mention_count) VALUES (?, ?, ?, ?, ?)",
                    (entity_id, kind, name, "default", number + 1),
                )
                connection.text.add_entity(
                    entity_id, name, kind, row=10 + number if number == 3 else None
                )
            connection.text.add_entity("ghost", "garbage ghost", "topic")
    assert list(pg.text.entity_rows()) == [tuple(r) for r in lite.text.entity_rows()]
    for prefixes in (
        ["garbage"],
        ["gar", "go"],
        ["api"],
        ["cafe"],
        ["café"],
        ["kube"],
        ["zz"],
        ["garbage coll"],
    ):
        assert pg.text.match_entities(prefixes, 3) == [
            tuple(r) for r in lite.text.match_entities(prefixes, 3)
        ], prefixes
        assert pg.text.best_entities(prefixes, 5, "default") == [
            tuple(r) for r in lite.text.best_entities(prefixes, 5, "default")
        ], prefixes
    for connection in (pg, lite):
        with connection.transaction():
            connection.text.rename_entity("e6", "Garbage Gopher")
    assert list(pg.text.entity_rows()) == [tuple(r) for r in lite.text.entity_rows()]
    assert pg.text.best_entities(["garb"], 5, "default") == [
        tuple(r) for r in lite.text.best_entities(["garb"], 5, "default")
    ]


def test_vocabulary_titles_and_totals(pair: Pair) -> None:
    pg, lite, rows = pair
    assert list(pg.text.vocabulary()) == sorted(
        (str(term), int(count)) for term, count in lite.text.vocabulary()
    )
    for phrases in (["type aliases"], ["garbage collector", "fuzzing"], ["proposal"], ["zzz"]):
        assert sorted(pg.text.title_matches(phrases, 50)) == sorted(
            lite.text.title_matches(phrases, 50)
        ), phrases
    assert pg.text.totals_record() == lite.text.totals_record()
    record = lite.text.totals_record()
    assert record is not None
    with pg.transaction():
        pg.text.remove_documents([rows[0][0]])
        pg.text.restore_totals_record(record)
    assert pg.text.totals_record() == record
    assert pg.text.settle_totals(["documents"]) is True
    assert pg.text.totals_record() != record


def test_write_buffer(pair: Pair) -> None:
    pg, _, rows = pair
    new = (99001, "notes/new.md", "Zyxwv", "a zyxwv note")
    with pg.transaction():
        pg.text.add_documents([new])
        assert [i for i, _ in pg.text.search(parse_query("zyxwv"), 5)] == [99001]  # seen at once
        with pytest.raises(RuntimeError), pg.savepoint():
            pg.text.add_documents([(99002, "notes/b.md", "Zyxwv two", "zyxwv again")])
            raise RuntimeError("undo")
    assert [i for i, _ in pg.text.search(parse_query("zyxwv"), 5)] == [99001]
    with pytest.raises(RuntimeError), pg.transaction():
        pg.text.add_documents([(99003, "notes/c.md", "Zyxwv three", "zyxwv")])
        raise RuntimeError("undo")
    assert [i for i, _ in pg.text.search(parse_query("zyxwv"), 5)] == [99001]
    assert pg.text.document_count() == len(rows) + 1
    # Outside a transaction a write is sent at once.
    pg.text.add_documents([(99004, "notes/d.md", "Zyxwv four", "zyxwv zyxwv")])
    other = open_postgres(pg_url(pg))
    try:
        assert 99004 in {i for i, _ in other.text.search(parse_query("zyxwv"), 5)}
    finally:
        other.close()


def pg_url(pg: PostgresConnection) -> str:
    info = pg.raw.info
    return f"postgresql://{info.user}@{info.host}:{info.port}/{info.dbname}?schema={pg.schema}"


def test_segments_merge_and_drop_dead_rows(pair: Pair) -> None:
    """Single-row writes make small segments, merged as they pile up; a row edited over and
    over (taken out, put back) counts once; after compact no segment holds a dead entry."""
    pg, lite, _ = pair
    extra = [
        (90000 + n, f"notes/{n}.md", f"Edited {n}", f"garbage collector note {n}")
        for n in range(20)
    ]
    for row in extra:
        for connection in (pg, lite):
            with connection.transaction():
                connection.text.add_documents([row])
    for round_ in range(3):
        for row in extra[::3]:
            edited = (row[0], row[1], row[2], row[3] + f" pacer edit {round_}")
            for connection in (pg, lite):
                with connection.transaction():
                    connection.text.remove_documents([row[0]])
                    connection.text.add_documents([edited])
    levels = pg.execute("SELECT level, COUNT(*) FROM text_segments GROUP BY level").fetchall()
    assert all(int(count) < 8 for level, count in levels if int(level) < 2), levels
    for query in ["garbage collector", "pacer edit", "note", "edit*", '"collector note"']:
        parsed = parse_query(query)
        ours, theirs = pg.text.search(parsed, 15), lite.text.search(parsed, 15)
        assert [i for i, _ in ours] == [i for i, _ in theirs], query
        assert ours == theirs  # to the last bit
    terms = ["pacer", "edit", "note"]
    assert pg.text.term_counts(terms) == lite.text.term_counts(terms)
    before = dict(pg.text.vocabulary())
    assert pg.execute("SELECT COUNT(*) FROM text_dead").fetchone()[0] > 0
    with pg.transaction():
        pg.text.compact(["documents"])
    assert pg.execute("SELECT COUNT(*) FROM text_dead").fetchone()[0] == 0
    assert pg.execute("SELECT COUNT(*) FROM text_segments WHERE idx = 0").fetchone()[0] == 1
    live = pg.execute(
        "SELECT COUNT(*) FROM text_postings p, unnest(p.docs) AS u (doc) WHERE p.idx = 0 "
        "AND NOT EXISTS (SELECT 1 FROM text_rows r WHERE r.idx = 0 AND r.doc_id = u.doc)"
    ).fetchone()[0]
    assert live == 0  # no entry of a row taken out is left
    assert dict(pg.text.vocabulary()) == before
    parsed = parse_query("pacer edit")
    assert [i for i, _ in pg.text.search(parsed, 10)] == [
        i for i, _ in lite.text.search(parsed, 10)
    ]
