"""The vector index of a vault, as every engine provides it.

Contract: :class:`VectorIndex` (``connection.vectors``) keeps the fragment vectors of the
vault's one embedding space, each named by its ``content_vectors.id``. The space exists
once the first vector fixes its dimensions (:meth:`VectorIndex.create`); until then
``exists`` is False, ``dimensions`` None, deletes do nothing and the other reads must not be
asked (callers check :meth:`VectorIndex.exists` first, once). Vectors go in and come out as packed
little-endian float32 bytes (numpy's ``tobytes``), whole scans as numpy arrays. Similarity
is the cosine. The SQLite index is
:class:`memtrove.db.sqlite.vector_index.SqliteVectorIndex` (sqlite-vec's ``vec0``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "BATCH",
    "FETCH",
    "ScanUnavailable",
    "VectorBlock",
    "VectorIndex",
    "as_matrix",
    "in_batches",
]

BATCH = 500  # ids per ``IN`` list
FETCH = 4096  # rows per batch of embeddings_by_body

VectorBlock: TypeAlias = tuple[
    "npt.NDArray[np.int64]", "npt.NDArray[np.float32]", "npt.NDArray[np.bool_]"
]
"""Part of a scan: ids, their vectors (one row each) and which rows hold a stored vector."""


class ScanUnavailable(Exception):
    """The engine cannot give its vectors as a scan (:meth:`VectorIndex.scan`) here: read
    them with :meth:`VectorIndex.read_all` or ask :meth:`VectorIndex.nearest` instead."""


class VectorIndex(Protocol):
    max_k: int
    """The largest ``k`` :meth:`nearest` accepts."""

    def exists(self) -> bool:
        """Whether the space exists (a first vector fixed its dimensions)."""
        ...

    def dimensions(self) -> int | None:
        """The dimensions the space was created with (None without a space)."""
        ...

    def create(self, dimensions: int) -> None:
        """Create the space for vectors of ``dimensions`` values, unless it exists."""
        ...

    def drop(self) -> None:
        """Remove the space and every vector in it."""
        ...

    def insert(self, rows: Iterable[tuple[int, bytes]], *, recorded_only: bool = False) -> None:
        """Store vectors as (id, vector); ``recorded_only`` skips the ids no
        ``content_vectors`` row has."""
        ...

    def delete(self, ids: Sequence[int]) -> None:
        """Remove the vectors of ``ids``."""
        ...

    def delete_body(self, body_hash: str) -> None:
        """Remove the vectors of one body's fragments (its ``content_vectors`` ids)."""
        ...

    def nearest(self, query: bytes, k: int) -> list[tuple[int, float]]:
        """The ``k`` (at most :attr:`max_k`) vectors most similar to ``query`` as (id,
        cosine), best first."""
        ...

    def embedding(self, vector_id: int) -> bytes | None:
        """The vector of one id (None when it has none)."""
        ...

    def embeddings(self, ids: Sequence[int]) -> list[tuple[int, bytes]]:
        """(id, vector) of the ``ids`` that have one, in the engine's order."""
        ...

    def body_embeddings(self, body_hash: str) -> list[bytes]:
        """The vectors of one body's fragments, in fragment order."""
        ...

    def embeddings_by_body(self) -> Iterator[list[tuple[str, bytes]]]:
        """Every vector with its body's hash, in batches, ordered by hash."""
        ...

    def ids(self) -> list[int]:
        """The id of every stored vector."""
        ...

    def recorded_count(self) -> int:
        """How many stored vectors have their ``content_vectors`` row."""
        ...

    def scan(self) -> Iterator[VectorBlock]:
        """Every stored vector, block by block, as fast as the engine can read them all;
        raises :class:`ScanUnavailable` (before or between blocks) when it cannot."""
        ...

    def read_all(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Every stored vector and its id, read one by one (slower than :meth:`scan`,
        always available); two empty arrays without vectors."""
        ...


def in_batches(connection: Any, sql: str, ids: Sequence[int]) -> list[tuple[int, bytes]]:
    """(id, vector) rows of ``sql`` (whose ``{marks}`` is an ``IN`` list's placeholders) for
    ``ids``, :data:`BATCH` at a time, in the engine's order."""
    found: list[tuple[int, bytes]] = []
    for start in range(0, len(ids), BATCH):
        chunk = [int(i) for i in ids[start : start + BATCH]]
        rows = connection.execute(sql.format(marks=",".join("?" * len(chunk))), chunk)
        found.extend((int(row[0]), bytes(row[1])) for row in rows)
    return found


def as_matrix(
    rows: Sequence[tuple[Any, Any]],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """(ids, one vector per row) of (id, packed float32) rows; two empty arrays for none."""
    import numpy as np

    if not rows:
        return np.zeros(0, np.int64), np.zeros((0, 0), np.float32)
    ids = np.fromiter((int(r[0]) for r in rows), dtype=np.int64, count=len(rows))
    matrix = np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype=np.float32)
    return ids, np.ascontiguousarray(matrix.reshape(len(rows), -1))
