"""The vault's fragment vectors held in memory, for fast exact nearest-neighbour search.

The vector index's own k-nearest scans every vector for each query (sqlite-vec: about 65 ms
for 90k x 256 vectors here, more as ``k`` grows); a matrix product over the same vectors in
memory takes about 10 ms. The matrix is read by the index's scan
(:meth:`memtrove.db.vector_index.VectorIndex.scan`; SQLite: sqlite-vec's chunk tables, about
0.1 s for 90k vectors), checked against ``content_vectors``, and reloaded when the vectors
change: the vault's ``vector_version`` counter (moved by triggers on ``content_vectors``,
whoever writes) is read before each search; other writes (session rows, documents) leave the
matrix alone. When the index cannot scan (an unexpected chunk layout), the vectors are read
one by one instead (slower, same result). Vaults past :data:`MAX_IN_MEMORY` vectors are
searched by the index directly.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from memtrove.db.connection import Connection
from memtrove.db.vector_index import ScanUnavailable, VectorBlock
from memtrove.models.protocols import Vectors
from memtrove.retrieval.vector_file import (
    MIN_VECTORS,
    VectorFileWriter,
    keep_freed_memory,
    map_vectors,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


__all__ = ["MAX_IN_MEMORY", "VectorMatrix", "load_vectors", "scan_nearest", "vector_stamp"]

MAX_IN_MEMORY = 1_000_000  # 1M x 256 float32 is 1 GB
# A process's first vector search scans the chunks instead of loading the matrix: at 90k
# vectors a scan takes ~35 ms, loading ~300 ms, so a one-shot command (``vsearch``,
# ``query``, a cold hook) never pays for a matrix it would use once. The second search
# loads it: a process that searches twice (a server, an evaluation) will search again.
SCANS_BEFORE_LOADING = 1


class VectorMatrix:
    """Row ids (``content_vectors.id``) and their vectors, loaded on demand; ``file``, when
    given, is where the vectors are kept mapped between processes (see
    :mod:`memtrove.retrieval.vector_file`)."""

    def __init__(self, file: str | None = None) -> None:
        import numpy as np

        self.file = file
        self._ids: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._matrix: Vectors = np.zeros((0, 0), dtype=np.float32)
        # For similarities: the row ids in ascending order (None until first asked for),
        # and the positions that sort them (None when they are already in order).
        self._sorted: npt.NDArray[np.int64] | None = None
        self._order: npt.NDArray[np.int64] | None = None
        self._version: int | None = None
        self._lock = threading.Lock()
        self._searches = 0

    def searching(self) -> bool:
        """Count a nearest-neighbour search; whether it should load the matrix (the first
        :data:`SCANS_BEFORE_LOADING` searches of a process scan instead)."""
        with self._lock:
            self._searches += 1
            return self._searches > SCANS_BEFORE_LOADING

    def ready(self, connection: Connection, *, load: bool = True) -> bool:
        """Load or refresh the matrix if needed; False when the vault should read the
        vectors from the index instead. A current vector file is mapped rather than
        loaded; with ``load=False`` nothing else is loaded."""
        import numpy as np

        with self._lock:
            version = vector_stamp(connection)
            if version == self._version:
                return len(self._ids) > 0
            if self.file is not None:
                mapped = map_vectors(self.file, version)
                if mapped is not None:
                    self._set(*mapped)
                    self._version = version
                    return True
            if not load:
                return False
            count = _count(connection)
            if count == 0 or count > MAX_IN_MEMORY or not connection.vectors.exists():
                self._set(np.zeros(0, np.int64), np.zeros((0, 0), np.float32))
                self._version = version
                return False
            self._set(*load_vectors(connection, count))
            self._version = version
            return len(self._ids) > 0

    def writer(self, connection: Connection, count: int) -> VectorFileWriter | None:
        """A writer of the vector file for the vault's current vectors, when one is kept
        (a file is named, the vault holds at least :data:`MIN_VECTORS` vectors)."""
        if self.file is None or count < MIN_VECTORS:
            return None
        return VectorFileWriter(self.file, vector_stamp(connection), count)

    def _set(self, ids: npt.NDArray[np.int64], matrix: Vectors) -> None:
        self._ids, self._matrix = ids, matrix
        self._sorted, self._order = None, None

    @property
    def size(self) -> int:
        """Vectors loaded (the vault's count as of the last :meth:`ready`)."""
        return len(self._ids)

    def nearest(self, query: Vectors, k: int) -> list[tuple[int, float]]:
        """The ``k`` most similar rows as (row id, cosine), best first."""
        import numpy as np

        if not len(self._ids) or k <= 0:
            return []
        scores = self._matrix @ np.asarray(query, dtype=np.float32)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[np.lexsort((self._ids[top], -scores[top]))]
        return [(int(self._ids[i]), float(scores[i])) for i in top]

    def similarities(self, query: Vectors, rowids: Sequence[int]) -> dict[int, float]:
        """Cosine of the query with each given row (rows not loaded are left out)."""
        import numpy as np

        if not len(self._ids) or not rowids:
            return {}
        if self._sorted is None:  # sorted once: a search per id, not a 90k-key dict
            ascending = bool(np.all(self._ids[1:] > self._ids[:-1]))
            self._order = None if ascending else np.argsort(self._ids, kind="stable")
            self._sorted = self._ids if self._order is None else self._ids[self._order]
        ordered = self._sorted
        wanted = np.fromiter((int(r) for r in rowids), dtype=np.int64, count=len(rowids))
        found = np.searchsorted(ordered, wanted)
        found[found >= len(ordered)] = 0
        present = ordered[found] == wanted
        if not present.any():
            return {}
        places = found[present] if self._order is None else self._order[found[present]]
        scores = self._matrix[places] @ np.asarray(query, dtype=np.float32)
        return {
            int(rowid): float(score)
            for rowid, score in zip(wanted[present].tolist(), scores.tolist(), strict=True)
        }


def vector_stamp(connection: Connection) -> int:
    """The vault's vector stamp (``vector_version``): it changes whenever a vector does."""
    row = connection.execute("SELECT version FROM vector_version WHERE id = 1").fetchone()
    return int(row[0]) if row is not None else -1


def _count(connection: Connection) -> int:
    return int(connection.execute("SELECT COUNT(*) FROM content_vectors").fetchone()[0])


def load_vectors(
    connection: Connection, count: int | None = None
) -> tuple[npt.NDArray[np.int64], Vectors]:
    """Every stored vector with its row id (``content_vectors.id``): from the index's scan
    when it can give one holding ``count`` vectors (``content_vectors``' count when not
    given), else read one by one."""
    if count is None:
        count = _count(connection)
    loaded = _read_chunks(connection)
    if loaded is None or len(loaded[0]) != count:
        loaded = connection.vectors.read_all()
    return loaded


def _chunks(connection: Connection) -> Iterator[VectorBlock]:
    """The index's scan (:meth:`memtrove.db.vector_index.VectorIndex.scan`), with freed
    blocks kept for the next chunk's blob."""
    keep_freed_memory()
    return connection.vectors.scan()


def _read_chunks(connection: Connection) -> tuple[npt.NDArray[np.int64], Vectors] | None:
    """Every valid vector of the scan with its row id; None when there is no scan."""
    import numpy as np

    try:
        parts = [(ids[mask], matrix[mask]) for ids, matrix, mask in _chunks(connection)]
    except ScanUnavailable:  # read the rows
        return None
    if not parts:
        return None
    ids = np.concatenate([part[0] for part in parts])
    return ids, np.ascontiguousarray(np.concatenate([part[1] for part in parts]))


def scan_nearest(
    connection: Connection,
    query: Vectors,
    k: int,
    count: int,
    keep: VectorFileWriter | None = None,
) -> list[tuple[int, float]] | None:
    """The ``k`` nearest rows as (row id, cosine), best first, read block by block from the
    index's scan without building the matrix; None when the index cannot scan or its rows do
    not add up to ``count`` (the caller then asks the index's k-nearest).
    ``keep`` is given every valid row as it is read."""
    import numpy as np

    vector = np.asarray(query, dtype=np.float32)
    found_ids: list[npt.NDArray[np.int64]] = []
    found_scores: list[npt.NDArray[np.float32]] = []
    valid_rows = 0
    try:
        for ids, matrix, mask in _chunks(connection):
            if matrix.shape[1] != len(vector):
                return None
            valid_rows += int(mask.sum())
            kept, scores = ids[mask], (matrix @ vector)[mask]
            if keep is not None:
                keep.add(kept, matrix[mask] if not mask.all() else matrix)
            if len(scores) > k:
                top = np.argpartition(-scores, k - 1)[:k]
                kept, scores = kept[top], scores[top]
            found_ids.append(kept)
            found_scores.append(scores)
    except ScanUnavailable:
        return None
    if valid_rows != count:
        return None
    if not found_ids:
        return []
    ids = np.concatenate(found_ids)
    scores = np.concatenate(found_scores)
    order = np.lexsort((ids, -scores))[:k]
    return [(int(ids[i]), float(scores[i])) for i in order]
