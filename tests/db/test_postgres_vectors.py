"""The PostgreSQL vector index against the SQLite one: the same vectors in, the same
answers out (ids, vectors, bodies, counts, the k nearest)."""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from memtrove.db.connection import Connection, open_connection
from memtrove.db.migrations import migrate
from memtrove.db.postgres.connection import PostgresConnection, open_postgres
from memtrove.db.vector_index import ScanUnavailable

DIMENSIONS = 8


def _vector(seed: int) -> bytes:
    generator = random.Random(seed)
    return struct.pack(f"<{DIMENSIONS}f", *(generator.uniform(-1, 1) for _ in range(DIMENSIONS)))


def _fill(connection: Any) -> None:
    """Three bodies of fragments with vectors, one fragment without."""
    with connection.transaction():
        for body in ("a", "b", "c"):
            connection.execute(
                "INSERT INTO content (hash, doc, created_at) VALUES (?, ?, ?)", (body, body, "t")
            )
        ids = 0
        for body, seqs in (("a", 3), ("b", 2), ("c", 4)):
            for seq in range(seqs):
                ids += 1
                connection.execute(
                    "INSERT INTO content_vectors (id, hash, seq, model, fragment_type, "
                    "embed_input_fp, embedded_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (ids, body, seq, "m", "section", "fp", "t"),
                )
        connection.vectors.create(DIMENSIONS)
        connection.vectors.insert([(i, _vector(i)) for i in range(1, ids)])  # the last: none
        connection.vectors.insert([(999, _vector(999))], recorded_only=True)  # no row: skipped


@pytest.fixture
def engines(url: str, tmp_path: Path) -> Iterator[tuple[PostgresConnection, Connection]]:
    pg = open_postgres(url)
    migrate(cast(Any, pg), label="vault")
    lite = open_connection(tmp_path / "vault.sqlite")
    migrate(lite)
    for connection in (pg, lite):
        assert not connection.vectors.exists() and connection.vectors.dimensions() is None
        _fill(connection)
    yield pg, lite
    pg.close()
    lite.close()


def test_the_same_vectors_come_back(engines: tuple[PostgresConnection, Connection]) -> None:
    pg, lite = engines
    for name in ("dimensions", "ids", "recorded_count"):
        assert sorted_if_list(getattr(pg.vectors, name)()) == sorted_if_list(
            getattr(lite.vectors, name)()
        ), name
    assert pg.vectors.embedding(4) == lite.vectors.embedding(4) == _vector(4)
    assert pg.vectors.embedding(9) is None and lite.vectors.embedding(9) is None
    assert sorted(pg.vectors.embeddings([1, 5, 9, 3])) == sorted(
        lite.vectors.embeddings([1, 5, 9, 3])
    )
    assert pg.vectors.body_embeddings("b") == lite.vectors.body_embeddings("b")
    flat = [row for block in pg.vectors.embeddings_by_body() for row in block]
    assert sorted(flat) == sorted(
        row for block in lite.vectors.embeddings_by_body() for row in block
    )
    pg_ids, pg_matrix = pg.vectors.read_all()
    lite_ids, lite_matrix = lite.vectors.read_all()
    order = lite_ids.argsort()
    assert pg_ids.tolist() == lite_ids[order].tolist()
    assert pg_matrix.tobytes() == lite_matrix[order].tobytes()
    with pytest.raises(ScanUnavailable):
        next(iter(pg.vectors.scan()))


def test_the_same_nearest(engines: tuple[PostgresConnection, Connection]) -> None:
    pg, lite = engines
    for seed in range(20):
        query = _vector(1000 + seed)
        ours = pg.vectors.nearest(query, 5)
        theirs = lite.vectors.nearest(query, 5)
        assert [i for i, _ in ours] == [i for i, _ in theirs]
        assert [round(s, 5) for _, s in ours] == [round(s, 5) for _, s in theirs]


def test_deletes_alike(engines: tuple[PostgresConnection, Connection]) -> None:
    pg, lite = engines
    for connection in (pg, lite):
        with connection.transaction():
            connection.vectors.delete([1, 2])
            connection.vectors.delete_body("b")
    assert sorted(pg.vectors.ids()) == sorted(lite.vectors.ids()) == [3, 6, 7, 8]
    pg.vectors.drop()
    assert not pg.vectors.exists() and pg.vectors.dimensions() is None


def sorted_if_list(value: Any) -> Any:
    return sorted(value) if isinstance(value, list) else value
