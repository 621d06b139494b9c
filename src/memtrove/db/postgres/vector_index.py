"""The vector index of a PostgreSQL vault (:class:`memtrove.db.vector_index.VectorIndex`)
without any extension: each vector a ``BYTEA`` of packed float32 in ``vector_index`` (its
id is ``content_vectors.id``), the space's dimensions in the one row of
``vector_index_space``, both created when the first vector fixes the dimensions.

The k nearest are found in memory, as the SQLite vault's matrix finds them: every vector
read once, the cosines one matrix product. There is no chunked scan (:meth:`scan` says so),
so the retrieval's matrix loads through :meth:`read_all`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from memtrove.db.vector_index import (
    FETCH,
    ScanUnavailable,
    VectorBlock,
    as_matrix,
    in_batches,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["PostgresVectorIndex"]


class _Statements(Protocol):
    def execute(self, sql: str, parameters: Any = ..., /) -> Any: ...

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Any: ...


class PostgresVectorIndex:
    __slots__ = ("_connection",)

    max_k = 4096  # as the SQLite vault's, so that callers ask alike

    def __init__(self, connection: _Statements) -> None:
        self._connection = connection

    def exists(self) -> bool:
        row = self._connection.execute(
            "SELECT 1 FROM information_schema.tables "
            "WHERE table_schema = current_schema() AND table_name = 'vector_index_space'"
        ).fetchone()
        return row is not None

    def dimensions(self) -> int | None:
        if not self.exists():
            return None
        row = self._connection.execute("SELECT dimensions FROM vector_index_space").fetchone()
        return None if row is None else int(row[0])

    def create(self, dimensions: int) -> None:
        if self.exists():
            return
        self._connection.execute(
            "CREATE TABLE vector_index (id BIGINT PRIMARY KEY, embedding BYTEA NOT NULL)"
        )
        self._connection.execute(
            "CREATE TABLE vector_index_space (id BIGINT PRIMARY KEY CHECK (id = 1), "
            "dimensions BIGINT NOT NULL)"
        )
        self._connection.execute(
            "INSERT INTO vector_index_space (id, dimensions) VALUES (1, ?)", (int(dimensions),)
        )

    def drop(self) -> None:
        self._connection.execute("DROP TABLE IF EXISTS vector_index")
        self._connection.execute("DROP TABLE IF EXISTS vector_index_space")

    def insert(self, rows: Iterable[tuple[int, bytes]], *, recorded_only: bool = False) -> None:
        rows = [(int(vector_id), bytes(vector)) for vector_id, vector in rows]
        if recorded_only:
            self._connection.executemany(
                "INSERT INTO vector_index (id, embedding) SELECT cv.id, ? "
                "FROM content_vectors cv WHERE cv.id = ?",
                [(vector, vector_id) for vector_id, vector in rows],
            )
        else:
            self._connection.executemany(
                "INSERT INTO vector_index (id, embedding) VALUES (?, ?)", rows
            )

    def delete(self, ids: Sequence[int]) -> None:
        if ids and self.exists():
            self._connection.executemany(
                "DELETE FROM vector_index WHERE id = ?", [(int(i),) for i in ids]
            )

    def delete_body(self, body_hash: str) -> None:
        if self.exists():
            self._connection.execute(
                "DELETE FROM vector_index WHERE id IN "
                "(SELECT id FROM content_vectors WHERE hash = ?)",
                (body_hash,),
            )

    def nearest(self, query: bytes, k: int) -> list[tuple[int, float]]:
        import numpy as np

        ids, matrix = self.read_all()
        if not len(ids) or k <= 0:
            return []
        wanted = np.frombuffer(query, dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(wanted))
        cosines = (matrix @ wanted) / np.where(norms > 0, norms, 1.0)
        best = np.argsort(-cosines, kind="stable")[: min(k, self.max_k)]
        return [(int(ids[i]), float(cosines[i])) for i in best]

    def embedding(self, vector_id: int) -> bytes | None:
        row = self._connection.execute(
            "SELECT embedding FROM vector_index WHERE id = ?", (vector_id,)
        ).fetchone()
        return None if row is None else bytes(row[0])

    def embeddings(self, ids: Sequence[int]) -> list[tuple[int, bytes]]:
        return in_batches(
            self._connection, "SELECT id, embedding FROM vector_index WHERE id IN ({marks})", ids
        )

    def body_embeddings(self, body_hash: str) -> list[bytes]:
        rows = self._connection.execute(
            "SELECT v.embedding FROM content_vectors cv JOIN vector_index v ON v.id = cv.id "
            "WHERE cv.hash = ? ORDER BY cv.seq",
            (body_hash,),
        ).fetchall()
        return [bytes(row[0]) for row in rows]

    def embeddings_by_body(self) -> Iterator[list[tuple[str, bytes]]]:
        cursor = self._connection.execute(
            "SELECT cv.hash, v.embedding FROM content_vectors cv "
            "JOIN vector_index v ON v.id = cv.id ORDER BY cv.hash, cv.id"
        )
        while rows := cursor.fetchmany(FETCH):
            yield [(str(row[0]), bytes(row[1])) for row in rows]

    def ids(self) -> list[int]:
        return [int(row[0]) for row in self._connection.execute("SELECT id FROM vector_index")]

    def recorded_count(self) -> int:
        row = self._connection.execute(
            "SELECT COUNT(*) FROM content_vectors cv WHERE cv.id IN (SELECT id FROM vector_index)"
        ).fetchone()
        return int(row[0])

    def scan(self) -> Iterator[VectorBlock]:
        raise ScanUnavailable("a PostgreSQL vault's vectors load through read_all")

    def read_all(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        return as_matrix(
            self._connection.execute(
                "SELECT id, embedding FROM vector_index ORDER BY id"
            ).fetchall()
        )
