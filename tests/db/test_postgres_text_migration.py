"""m029 on PostgreSQL: a text index written before it (positions in ``text_places``, one row
per document) is rewritten with each term's positions in its postings, and then reads and
merges as an index written after it. The rows before are laid out as that version wrote
them: two segments, a row taken out of the first (its entries dead, its places gone) and
written again, with other words, in the second."""

from __future__ import annotations

import struct
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, cast

from memtrove.db.migrations import migrate
from memtrove.db.postgres.connection import PostgresConnection, open_postgres
from memtrove.db.postgres.text_sql import storable
from memtrove.db.postgres.text_store import TextStore
from memtrove.db.schema.postgres import MIGRATIONS
from memtrove.db.text_tokens import document_tokens

FIRST = {
    3: ("a.md", "Raft leader election", "The leader sends heartbeats; a follower votes."),
    5: ("b.md", "Leases", "Leader leases expire. The leader renews leader leases."),
    8: ("c.md", "", "naïve café CAFÉ, the leader"),
}
AGAIN = {5: ("b.md", "Elections", "A follower becomes a candidate, then the leader.")}
SECOND = {
    9: ("d.md", "Heartbeats", "heartbeats and the follower follows the leader leader"),
    **AGAIN,
}


def _columns(texts: Sequence[str]) -> list[dict[str, list[int]]]:
    found = []
    for text in texts:
        positions: dict[str, list[int]] = defaultdict(list)
        for position, token in enumerate(storable(t) for t in document_tokens(text)):
            positions[token].append(position)
        found.append(positions)
    return found


def _write_old_segment(
    pg: PostgresConnection, seg: int, rows: dict[int, tuple[str, ...]], live: set[int]
) -> None:
    """A segment as the text index wrote it before m029: postings without positions, and
    the places and sizes of its rows still live."""
    postings: dict[str, list[tuple[int, ...]]] = defaultdict(list)
    for doc_id, texts in sorted(rows.items()):
        columns = _columns(texts)
        length = sum(len(document_tokens(text)) for text in texts)
        order = list(dict.fromkeys(term for column in columns for term in column))
        counts, starts, positions = [], [0], []
        for term in order:
            hits = [column.get(term, []) for column in columns]
            counts += [len(hit) for hit in hits]
            positions += [p for hit in hits for p in hit]
            starts.append(len(positions))
            postings[term].append((doc_id, *(len(hit) for hit in hits), length))
        if doc_id in live:
            pg.execute(
                "INSERT INTO text_places (idx, doc_id, terms, counts, starts, positions) "
                "VALUES (0, ?, ?, ?, ?, ?)",
                (doc_id, order, counts, starts, positions),
            )
            pg.execute(
                "INSERT INTO text_rows (idx, doc_id, seg, sizes) VALUES (0, ?, ?, ?)",
                (doc_id, seg, [len(document_tokens(text)) for text in texts]),
            )
        else:
            pg.execute("INSERT INTO text_dead (idx, doc_id, seg) VALUES (0, ?, ?)", (doc_id, seg))
    for term, entries in postings.items():
        pg.execute(
            "INSERT INTO text_postings (idx, term, seg, docs, c0, c1, c2, lengths) "
            "VALUES (0, ?, ?, ?, ?, ?, ?, ?)",
            (term, seg, *(list(values) for values in zip(*entries, strict=True))),
        )
    pg.execute("INSERT INTO text_segments (idx, seg, level) VALUES (0, ?, 0)", (seg,))


def _entries(pg: PostgresConnection) -> dict[tuple[str, int, int], tuple[int, ...]]:
    """(term, seg, row) -> its positions, column after column, from the postings."""
    found = {}
    for term, seg, docs, c0, c1, c2, blob in pg.execute(
        "SELECT term, seg, docs, c0, c1, c2, positions FROM text_postings WHERE idx = 0"
    ):
        positions = list(struct.unpack(f">{len(blob) // 4}i", blob))
        for doc, *counts in zip(docs, c0, c1, c2, strict=True):
            found[(str(term), int(seg), int(doc))] = tuple(positions[: sum(counts)])
            del positions[: sum(counts)]
        assert not positions
    return found


def _expected(rows: dict[int, tuple[str, ...]]) -> dict[tuple[str, int], tuple[int, ...]]:
    found = {}
    for doc_id, texts in rows.items():
        columns = _columns(texts)
        for term in {term for column in columns for term in column}:
            found[(term, doc_id)] = tuple(p for column in columns for p in column.get(term, []))
    return found


def test_m029_moves_positions_into_the_postings(url: str) -> None:
    pg = open_postgres(url)
    try:
        migrate(cast(Any, pg), MIGRATIONS[:-1], label="vault")  # up to m028
        with pg.transaction():
            first, second = (
                int(pg.execute("SELECT nextval('text_segment_ids')").fetchone()[0])
                for _ in range(2)
            )
            _write_old_segment(pg, first, FIRST, live={3, 8})  # 5 was taken out, then...
            _write_old_segment(pg, second, SECOND, live=set(SECOND))  # ...written again
            pg.execute("INSERT INTO text_totals (idx, rows, tokens) VALUES (0, 4, '{4,9,30}')")
        assert migrate(cast(Any, pg), label="vault") == ["m029_text_positions"]
        assert "text_places" not in pg.catalog.tables()
        live = {**{doc: FIRST[doc] for doc in (3, 8)}, **SECOND}
        entries = _entries(pg)
        for (term, seg, doc), positions in entries.items():
            if seg == first and doc == 5:  # dead: zeros of its length, never read
                assert set(positions) <= {0}
            else:
                assert positions == _expected(live)[(term, doc)]
        store = TextStore(pg)
        # A phrase reads the positions: "the leader" in the bodies of 3, 5 (again), 8, 9.
        phrase = store.places(0, ("the", "leader"), False)
        assert sorted(phrase) == [3, 5, 8, 9]
        assert phrase[5][0][2] == [6] and phrase[5][1][2] == [7]  # the new text of 5
        with pg.transaction():
            store.optimize(0)  # one segment: the dead entries gone, the positions kept
        merged = _entries(pg)
        assert {(term, doc): positions for (term, _, doc), positions in merged.items()} == (
            _expected(live)
        )
    finally:
        pg.close()
