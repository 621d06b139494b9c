"""The rows a flush of the PostgreSQL text index writes in ``COPY``'s binary format, read
back from the server and compared with what each row must hold, computed plainly from the
tokenizer: the postings of each term (rows in id order, hits per column, lengths), each
row's sizes, and the positions of each term in each row, column by column. Edge cases included: empty columns, a row
with no token, rows added out of id order, a term PostgreSQL text cannot hold as it is,
non-ASCII text, and one index of a single column."""

from __future__ import annotations

import struct
from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Any, cast

import pytest

from memtrove.db.migrations import migrate
from memtrove.db.postgres.connection import PostgresConnection, open_postgres
from memtrove.db.postgres.text_sql import storable
from memtrove.db.postgres.text_store import COLUMNS, TextStore
from memtrove.db.text_tokens import document_tokens

ROWS: list[tuple[int, tuple[str, ...]]] = [
    (40, ("notes/a.md", "Raft leader election", "The leader sends heartbeats; a follower votes.")),
    (7, ("notes/b.md", "", "Followers follow the leader. Leader leases expire.")),
    (19, ("", "", "")),
    (3, ("x.md", "!!! ???", "---")),
    (25, ("naïve/Ünïcode.md", "Crème brûlée", "café CAFÉ Café naïve 東京 tokyo")),
    (12, ("c.md", "cut", "tab\u2082ed a\x00b text with a nul, tab\tand newline\nhere")),
    (30, ("d.md", "repeated", " ".join(["alpha beta"] * 300))),
]


@pytest.fixture
def pg(url: str) -> Iterator[PostgresConnection]:
    connection = open_postgres(url)
    migrate(cast(Any, connection), label="vault")
    yield connection
    connection.close()


def _expected(rows: Sequence[tuple[int, Sequence[str]]], columns: int) -> tuple[Any, Any]:
    postings: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    sizes: dict[int, list[int]] = {}
    for doc_id, texts in sorted(rows):
        by_column = []
        for text in texts:
            found: dict[str, list[int]] = defaultdict(list)
            tokens = [storable(token) for token in document_tokens(text)]
            for position, token in enumerate(tokens):
                found[token].append(position)
            by_column.append((found, len(tokens)))
        sizes[doc_id] = [size for _, size in by_column]
        for term in dict.fromkeys(term for found, _ in by_column for term in found):
            hits = [found.get(term, []) for found, _ in by_column]
            numbers = [len(hit) for hit in hits] + [0] * (3 - columns)
            places = tuple(position for hit in hits for position in hit)
            postings[term].append((doc_id, *numbers, sum(sizes[doc_id]), places))
    return dict(postings), sizes


def _stored(pg: PostgresConnection, idx: int) -> tuple[Any, Any]:
    postings = {}
    for term, docs, c0, c1, c2, lengths, blob in pg.execute(
        "SELECT term, docs, c0, c1, c2, lengths, positions FROM text_postings WHERE idx = ?",
        (idx,),
    ):
        positions = list(struct.unpack(f">{len(blob) // 4}i", blob))
        entries = []
        for entry in zip(docs, c0, c1, c2, lengths, strict=True):
            count = sum(entry[1:4])
            entries.append((*entry, tuple(positions[:count])))
            del positions[:count]
        assert not positions  # every position belongs to an entry
        postings[str(term)] = entries
    sizes = {
        int(doc): list(values)
        for doc, values in pg.execute("SELECT doc_id, sizes FROM text_rows WHERE idx = ?", (idx,))
    }
    return postings, sizes


@pytest.mark.parametrize("idx", [0, 2])
def test_a_flush_writes_what_each_row_holds(pg: PostgresConnection, idx: int) -> None:
    columns = COLUMNS[idx]
    rows = [(doc_id, texts[-columns:]) for doc_id, texts in ROWS]
    store = TextStore(pg)
    with pg.transaction():
        store.add(idx, rows[:4])
        store.add(idx, rows[4:])
        store.flush()
    postings, sizes = _stored(pg, idx)
    want_postings, want_sizes = _expected(rows, columns)
    assert sizes == want_sizes
    assert postings == want_postings
    assert store.totals(idx) == (
        len(rows),
        [sum(values[col] for values in want_sizes.values()) for col in range(columns)],
    )
    assert "tab\\xe2\\x82" in postings  # a character the stemmer cut is stored escaped


def test_a_row_of_the_wrong_shape_is_refused(pg: PostgresConnection) -> None:
    store = TextStore(pg)
    with pytest.raises(ValueError, match="3 columns"):
        store.add(0, [(1, ("only one",))])
