"""The text index seam (``connection.text``): rows in and out, searches, entities, totals."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrove import InvalidQueryError
from memtrove.db.connection import Connection, open_connection, write_transaction
from memtrove.db.migrations import migrate
from memtrove.db.schema import MIGRATIONS
from memtrove.db.text_query import ParsedQuery, parse_query
from memtrove.retrieval.fts import search_fts


@pytest.fixture
def connection(tmp_path: Path) -> Iterator[Connection]:
    opened = open_connection(tmp_path / "vault.sqlite")
    migrate(opened, MIGRATIONS)
    yield opened
    opened.close()


def _document(connection: Connection, doc_id: int, path: str) -> None:
    connection.execute(
        "INSERT INTO content (hash, doc, created_at) VALUES (?, ?, ?)",
        (f"h{doc_id}", "body", "2026-01-01T00:00:00Z"),
    )
    connection.execute(
        "INSERT INTO documents (id, collection, path, title, hash, docid, created_at, "
        "modified_at) VALUES (?, 'notes', ?, ?, ?, ?, ?, ?)",
        (doc_id, path, path, f"h{doc_id}", f"d{doc_id:05}", "2026-01-01", "2026-01-01"),
    )


def test_documents_go_in_are_found_and_come_out(connection: Connection) -> None:
    text = connection.text
    with write_transaction(connection):
        for doc_id in (1, 2, 3):
            _document(connection, doc_id, f"n{doc_id}.md")
        text.add_documents(
            [
                (1, "notes/n1.md", "Write-ahead log", "readers keep going while one writer"),
                (2, "notes/n2.md", "Queues", "we chose a queue for the writer"),
                (3, "notes/n3.md", "数据库", "我们使用数据库"),
            ]
        )
    assert text.document_count() == 3
    assert sorted(doc for doc, _ in text.search(parse_query("writer"), 10)) == [1, 2]
    assert all(score < 0 for _, score in text.search(parse_query("writer"), 10))
    assert [doc for doc, _ in text.search(parse_query("数据"), 10)] == [3]
    only = text.search(parse_query("writer"), None, conditions=["d.path = ?"], params=["n2.md"])
    assert [doc for doc, _ in only] == [2]
    assert text.search(ParsedQuery(), 10) == []
    assert text.title_matches(["write ahead log"], 10) == [1]
    assert text.term_counts(["writer", "queue", "absent"]) == {"writer": 2, "queue": 1, "absent": 0}
    assert dict(text.vocabulary())["writer"] == 2
    searchable = connection.execute(
        f"SELECT id FROM documents d WHERE {text.indexed_condition('d')} ORDER BY id"
    ).fetchall()
    assert [row[0] for row in searchable] == [1, 2, 3]
    with write_transaction(connection):
        text.remove_documents([2, 99])
    assert text.document_count() == 2
    assert text.settle_totals(("documents",))  # the delete left the totals inflated
    assert not text.settle_totals(("documents",))


def test_archived_rows_rank_apart(connection: Connection) -> None:
    with write_transaction(connection):
        _document(connection, 1, "n1.md")
        connection.text.add_documents(
            [(1, "notes/n1.md", "Old", "an old decision")], index="archived"
        )
    assert connection.text.search(parse_query("decision"), 10) == []
    assert [
        doc for doc, _ in connection.text.search(parse_query("decision"), None, index="archived")
    ] == [1]
    with write_transaction(connection):
        connection.text.remove_documents([1], index="archived")
    assert connection.text.search(parse_query("decision"), None, index="archived") == []


def test_passages_are_found_by_their_document(connection: Connection) -> None:
    with write_transaction(connection):
        _document(connection, 7, "long.md")
        connection.text.add_passages(7, ["pods and nodes", "raise the cpu limit", "more pods"])
    hits = connection.text.search_passages(parse_query("cpu limit"), 5)
    assert [(doc, number) for doc, _, number in hits] == [(7, 1)]
    with write_transaction(connection):
        connection.text.remove_documents([7], index="passages")
        assert connection.text.search_passages(parse_query("pods"), 5) == []
        connection.text.add_passages(7, ["pods again"])
        connection.text.clear("passages")
    assert connection.text.search_passages(parse_query("pods"), 5) == []


def test_a_query_the_index_refuses_is_an_invalid_query(
    connection: Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memtrove.db.sqlite import text_index

    monkeypatch.setattr(text_index, "build_match", lambda parsed: "AND AND")
    with pytest.raises(InvalidQueryError):
        connection.text.search(parse_query("anything"), 10)
    with pytest.raises(InvalidQueryError, match="cannot search for 'anything'"):
        search_fts(connection, "anything")


def test_entities_are_listed_renamed_and_matched(connection: Connection) -> None:
    text = connection.text
    with write_transaction(connection):
        connection.execute(
            "INSERT INTO entity_nodes (entity_id, entity_type, name, mention_count, last_seen, "
            "vault) VALUES ('default:tool:postgresql', 'tool', 'PostgreSQL', 3, '', 'default')"
        )
        text.add_entity("default:tool:postgresql", "PostgreSQL", "tool")
        text.add_entity("other:tool:redis", "Redis", "tool", row=40)
        text.rename_entity("default:tool:postgresql", "Postgres SQL")
    assert list(text.entity_rows()) == [
        (1, "default:tool:postgresql", "Postgres SQL", "tool"),
        (40, "other:tool:redis", "Redis", "tool"),
    ]
    assert text.best_entities(["postg"], 10, "default") == [
        ("default:tool:postgresql", "tool", "PostgreSQL", 3)
    ]
    assert text.best_entities(["redi"], 10, "default") == []
    unranked = text.match_entities(["redi", "postg"], 10)
    assert sorted(row[4] or "" for row in unranked) == ["", "default"]  # Redis has no node
    assert text.match_entities([], 10) == []


def test_the_totals_record_travels(connection: Connection, tmp_path: Path) -> None:
    with write_transaction(connection):
        _document(connection, 1, "n1.md")
        connection.text.add_documents([(1, "notes/n1.md", "Title", "some body words")])
    record = connection.text.totals_record()
    assert record is not None
    other = open_connection(tmp_path / "other.sqlite")
    migrate(other, MIGRATIONS)
    with write_transaction(other):
        other.text.add_documents([(1, "notes/n1.md", "Title", "a different body")])
        other.text.restore_totals_record(record)
    assert other.text.totals_record() == record
    with write_transaction(other):
        other.text.compact(("documents", "passages"))
    other.close()
