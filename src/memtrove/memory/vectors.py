"""Entry vectors: stored as float32 bytes, compared by cosine."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["cosine_to_all", "pack", "unit_matrix"]


def pack(vector: Any) -> bytes:
    """A vector's float32 bytes (its own bytes, whatever buffer it is a view of)."""
    import numpy as np

    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


def unit_matrix(blobs: Sequence[bytes]) -> Any:
    """The vectors as rows of unit length (zero rows stay zero); ``None`` when the blobs
    have different sizes (vectors of another dimension are never compared)."""
    import numpy as np

    if not blobs or len({len(blob) for blob in blobs}) != 1:
        return None
    matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


def cosine_to_all(vector: Any, matrix: Any) -> Any:
    """Cosine of ``vector`` with every row of a :func:`unit_matrix`."""
    import numpy as np

    query = np.asarray(vector, dtype=np.float32).reshape(-1)
    if matrix is None or matrix.shape[1] != query.shape[0]:
        return np.zeros(0 if matrix is None else matrix.shape[0], dtype=np.float32)
    norm = float(np.linalg.norm(query)) or 1.0
    return matrix @ (query / norm)
