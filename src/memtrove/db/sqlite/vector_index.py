"""The vector index of a SQLite vault (:class:`memtrove.db.vector_index.VectorIndex`): the
sqlite-vec virtual table ``vectors_vec`` (``vec0``, cosine distance), whose rowid is
``content_vectors.id``, created when the first vector fixes the dimension. Its scan reads
sqlite-vec's chunk tables (:mod:`memtrove.db.sqlite.vector_chunks`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from memtrove.db.sqlite.vector_chunks import read_chunks
from memtrove.db.vector_index import FETCH, VectorBlock, as_matrix, in_batches

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from memtrove.db.engine import Connection

__all__ = ["SqliteVectorIndex"]


class SqliteVectorIndex:
    __slots__ = ("_connection",)

    max_k = 4096  # sqlite-vec's limit on k

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    def exists(self) -> bool:
        row = self._connection.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vectors_vec'"
        ).fetchone()
        return row is not None

    def dimensions(self) -> int | None:
        row = self._connection.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'vectors_vec'"
        ).fetchone()
        declared = re.search(r"float\[(\d+)\]", str(row[0])) if row is not None else None
        return int(declared.group(1)) if declared else None

    def create(self, dimensions: int) -> None:
        if not self.exists():
            self._connection.execute(
                "CREATE VIRTUAL TABLE vectors_vec USING vec0("
                f"embedding float[{int(dimensions)}] distance_metric=cosine)"
            )

    def drop(self) -> None:
        self._connection.execute("DROP TABLE IF EXISTS vectors_vec")

    def insert(self, rows: Iterable[tuple[int, bytes]], *, recorded_only: bool = False) -> None:
        if recorded_only:
            self._connection.executemany(
                "INSERT INTO vectors_vec (rowid, embedding) "
                "SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM content_vectors WHERE id = ?1)",
                rows,
            )
        else:
            self._connection.executemany(
                "INSERT INTO vectors_vec (rowid, embedding) VALUES (?, ?)", rows
            )

    def delete(self, ids: Sequence[int]) -> None:
        if ids and self.exists():
            self._connection.executemany(
                "DELETE FROM vectors_vec WHERE rowid = ?", [(int(i),) for i in ids]
            )

    def delete_body(self, body_hash: str) -> None:
        if self.exists():
            self._connection.execute(
                "DELETE FROM vectors_vec WHERE rowid IN "
                "(SELECT id FROM content_vectors WHERE hash = ?)",
                (body_hash,),
            )

    def nearest(self, query: bytes, k: int) -> list[tuple[int, float]]:
        rows: list[tuple[int, float]] = self._connection.execute(
            "SELECT rowid, 1.0 - distance FROM vectors_vec WHERE embedding MATCH ? AND k = ?",
            (query, k),
        ).fetchall()
        return rows

    def embedding(self, vector_id: int) -> bytes | None:
        row = self._connection.execute(
            "SELECT embedding FROM vectors_vec WHERE rowid = ?", (vector_id,)
        ).fetchone()
        return None if row is None else bytes(row[0])

    def embeddings(self, ids: Sequence[int]) -> list[tuple[int, bytes]]:
        return in_batches(
            self._connection,
            "SELECT rowid, embedding FROM vectors_vec WHERE rowid IN ({marks})",
            ids,
        )

    def body_embeddings(self, body_hash: str) -> list[bytes]:
        rows = self._connection.execute(
            "SELECT v.embedding FROM content_vectors cv JOIN vectors_vec v ON v.rowid = cv.id "
            "WHERE cv.hash = ? ORDER BY cv.seq",
            (body_hash,),
        ).fetchall()
        return [bytes(row[0]) for row in rows]

    def embeddings_by_body(self) -> Iterator[list[tuple[str, bytes]]]:
        cursor = self._connection.execute(
            "SELECT cv.hash, v.embedding FROM content_vectors cv "
            "JOIN vectors_vec v ON v.rowid = cv.id ORDER BY cv.hash"
        )
        while rows := cursor.fetchmany(FETCH):
            yield rows

    def ids(self) -> list[int]:
        return [int(row[0]) for row in self._connection.execute("SELECT rowid FROM vectors_vec")]

    def recorded_count(self) -> int:
        row = self._connection.execute(
            "SELECT COUNT(*) FROM content_vectors cv WHERE cv.id IN (SELECT rowid FROM vectors_vec)"
        ).fetchone()
        return int(row[0])

    def scan(self) -> Iterator[VectorBlock]:
        return read_chunks(self._connection)

    def read_all(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        return as_matrix(
            self._connection.execute("SELECT rowid, embedding FROM vectors_vec").fetchall()
        )
