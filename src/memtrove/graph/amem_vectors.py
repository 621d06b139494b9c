"""Document centroids for A-MEM's links: each active document's normalised mean fragment
vector, held in memory for a run, and its nearest neighbours by cosine."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memtrove.db.connection import Connection

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Centroids"]


class Centroids:
    """Each active document's normalised mean fragment vector, for nearest neighbours."""

    def __init__(self, connection: Connection) -> None:
        import numpy as np

        self.ids: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.matrix: npt.NDArray[np.float32] = np.zeros((0, 0), dtype=np.float32)
        self.row: dict[int, int] = {}
        has_table = connection.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vectors_vec'"
        ).fetchone()
        if has_table is None:
            return
        owners: dict[str, list[int]] = {}
        for doc_id, body_hash in connection.execute(
            "SELECT id, hash FROM documents WHERE active = 1"
        ):
            owners.setdefault(str(body_hash), []).append(int(doc_id))
        sums: dict[str, Any] = {}
        width = 0
        cursor = connection.execute(
            "SELECT cv.hash, v.embedding FROM content_vectors cv "
            "JOIN vectors_vec v ON v.rowid = cv.id"
        )
        for body_hash, blob in cursor:
            key = str(body_hash)
            if key not in owners:
                continue
            vector = np.frombuffer(bytes(blob), dtype=np.float32)
            width = width or len(vector)
            if len(vector) != width:
                continue
            if key in sums:
                sums[key] = sums[key] + vector
            else:
                sums[key] = vector.copy()
        documents: list[int] = []
        rows: list[Any] = []
        for key, total in sums.items():
            norm = float(np.linalg.norm(total))
            if math.isfinite(norm) and norm > 0:
                for doc_id in owners[key]:
                    documents.append(doc_id)
                    rows.append(total / norm)
        if documents:
            self.ids = np.asarray(documents, dtype=np.int64)
            self.matrix = np.ascontiguousarray(np.vstack(rows), dtype=np.float32)
            self.row = {doc_id: n for n, doc_id in enumerate(documents)}

    def neighbours(
        self, doc_ids: Sequence[int], k: int, floor: float
    ) -> dict[int, list[tuple[int, float]]]:
        """Per document, up to ``k`` other documents with cosine >= ``floor``, best first."""
        import numpy as np

        known = [doc_id for doc_id in doc_ids if doc_id in self.row]
        if not known or len(self.ids) < 2:
            return {}
        positions = [self.row[doc_id] for doc_id in known]
        block = self.matrix[positions] @ self.matrix.T
        block[np.arange(len(positions)), positions] = -np.inf
        k = min(k, len(self.ids) - 1)
        top = np.argpartition(-block, k - 1, axis=1)[:, :k]
        answer: dict[int, list[tuple[int, float]]] = {}
        for n, doc_id in enumerate(known):
            pairs = [
                (int(self.ids[column]), float(block[n, column]))
                for column in top[n]
                if block[n, column] >= floor and int(self.ids[column]) != doc_id
            ]
            answer[doc_id] = sorted(pairs, key=lambda pair: (-pair[1], pair[0]))
        return answer
