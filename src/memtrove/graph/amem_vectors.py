"""Document centroids for A-MEM's links: each active document's normalised mean fragment
vector, held in memory for a run, and its nearest neighbours by cosine."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memtrove.db.connection import Connection
from memtrove.retrieval.vector_matrix import load_vectors

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Centroids"]

_SLACK = 1e-5  # float32 rounding of a cosine is far below this
_GROUPS = 64
"""Column groups whose maxima bound each row's k-th best cosine from below (see
:meth:`Centroids.neighbours`)."""


class Centroids:
    """Each active document's normalised mean fragment vector, for nearest neighbours."""

    def __init__(self, connection: Connection) -> None:
        import numpy as np

        self.ids: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.matrix: npt.NDArray[np.float32] = np.zeros((0, 0), dtype=np.float32)
        self.row: dict[int, int] = {}
        if not connection.vectors.exists():
            return
        owners: dict[str, list[int]] = {}
        for doc_id, body_hash in connection.execute(
            "SELECT id, hash FROM documents WHERE active = 1"
        ):
            owners.setdefault(str(body_hash), []).append(int(doc_id))
        # The vectors are read as one matrix (the index's scan) and summed per body by
        # numpy: a Python step per vector was most of the time of loading 100k of them.
        group_of: dict[str, int] = {}
        vector_ids: list[int] = []
        vector_groups: list[int] = []
        stored = 0
        for vector_id, body_hash in connection.execute(
            "SELECT id, hash FROM content_vectors ORDER BY id"
        ):
            stored += 1
            key = str(body_hash)
            if key in owners:
                vector_ids.append(int(vector_id))
                vector_groups.append(group_of.setdefault(key, len(group_of)))
        if not vector_ids:
            return
        rowids, vectors = load_vectors(connection, stored)
        if not len(rowids):
            return
        known = np.asarray(vector_ids, dtype=np.int64)
        place = np.searchsorted(known, rowids).clip(max=len(known) - 1)
        kept = known[place] == rowids
        groups = np.asarray(vector_groups, dtype=np.int64)[place[kept]]
        if not len(groups):
            return
        if not kept.all():
            vectors = vectors[kept]
        if len(groups) > 1 and bool((groups[1:] < groups[:-1]).any()):
            order = np.argsort(groups, kind="stable")  # a body's vectors, all together
            groups, vectors = groups[order], vectors[order]
        bounds = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1], True]).tolist()
        keys = list(group_of)
        documents: list[int] = []
        rows: list[Any] = []
        for start, end in itertools.pairwise(bounds):
            total = vectors[start:end].sum(axis=0, dtype=np.float64)
            norm = float(np.linalg.norm(total))
            if math.isfinite(norm) and norm > 0:
                unit = (total / norm).astype(np.float32)
                for doc_id in owners[keys[groups[start]]]:
                    documents.append(doc_id)
                    rows.append(unit)
        if documents:
            self.ids = np.asarray(documents, dtype=np.int64)
            self.matrix = np.ascontiguousarray(np.vstack(rows), dtype=np.float32)
            self.row = {doc_id: n for n, doc_id in enumerate(documents)}

    def neighbours(
        self, doc_ids: Sequence[int], k: int, floor: float
    ) -> dict[int, list[tuple[int, float]]]:
        """Per document, up to ``k`` other documents with cosine >= ``floor``, best first
        (equal cosines: the smaller document id first)."""
        import numpy as np

        known = [doc_id for doc_id in doc_ids if doc_id in self.row]
        if not known or len(self.ids) < 2 or k < 1:
            return {}
        positions = np.fromiter((self.row[doc_id] for doc_id in known), np.int64, len(known))
        block = self.matrix[positions] @ self.matrix.T
        count, width = block.shape
        block[np.arange(count), positions] = -np.inf
        # Only values at or above each row's cut can be among its k best. The cut is the
        # floor, raised to the k-th largest of the row's column-group maxima (k values at
        # least that high exist, so the k-th best is too): a few comparisons per value,
        # where a partial sort of every row was most of the time of linking 10k notes.
        cut = np.full(count, floor, dtype=np.float32)
        span = width // _GROUPS
        if k < _GROUPS and span >= 4:
            covered = span * _GROUPS
            maxima = block[:, :covered].reshape(count, _GROUPS, span).max(axis=2)
            if covered < width:  # the last few columns: one more group
                maxima = np.hstack([maxima, block[:, covered:].max(axis=1, keepdims=True)])
            place = maxima.shape[1] - k
            cut = np.maximum(cut, np.partition(maxima, place, axis=1)[:, place])
        # A matrix product may round one cosine differently by column position, so equal
        # vectors (documents sharing a body) can differ in their last bits: the candidates
        # (taken with a hair of slack) get their cosines again, each the same sum of the same
        # products in float64, so that equal vectors tie and the smaller id comes first.
        rows, columns = np.nonzero(block >= (cut - _SLACK)[:, None])
        values = np.einsum(
            "ij,ij->i",
            self.matrix[positions[rows]].astype(np.float64),
            self.matrix[columns].astype(np.float64),
        )
        kept = values >= floor
        rows, columns, values = rows[kept], columns[kept], values[kept]
        found = self.ids[columns]
        order = np.lexsort((found, -values, rows))  # by row, best first, then by id
        answer: dict[int, list[tuple[int, float]]] = {doc_id: [] for doc_id in known}
        lists = [answer[doc_id] for doc_id in known]
        for row, other, value in zip(
            rows[order].tolist(), found[order].tolist(), values[order].tolist(), strict=True
        ):
            chosen = lists[row]
            if len(chosen) < k and other != known[row]:
                chosen.append((other, value))
        return answer
