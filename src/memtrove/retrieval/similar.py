"""Documents like a given one: nearest neighbours of its own vectors.

The reference document's fragment vectors (its ``full`` fragment and each section, list or
code fragment) are averaged and normalised into one vector, the document's centroid; other
documents are ranked by the cosine of their best fragment to it, as :func:`search_vectors`
ranks them for a query. The centroid, rather than the best pair of fragments, keeps a shared
boilerplate section (a common heading or template block) from making two otherwise unrelated
notes look alike. No embedder is needed: the stored vectors are compared with each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memtrove.db.connection import Connection
from memtrove.errors import EmbeddingSpaceError
from memtrove.results import Document
from memtrove.retrieval.filters import Filters
from memtrove.retrieval.vector_matrix import VectorMatrix
from memtrove.retrieval.vectors import VectorHit, search_vectors, vector_count

if TYPE_CHECKING:
    pass

__all__ = ["similar_documents"]


def similar_documents(
    connection: Connection,
    document: Document,
    limit: int,
    matrix: VectorMatrix | None = None,
    filters: Filters | None = None,
) -> list[VectorHit]:
    """Up to ``limit`` active documents nearest to ``document`` (within ``filters``), best
    first, itself excluded.

    Raises :class:`EmbeddingSpaceError`, naming the fix, when the vault has no vectors or
    the document has none yet.
    """
    import numpy as np

    if vector_count(connection) == 0:
        raise EmbeddingSpaceError(
            "the vault has no vectors yet; run `memtrove embed` to find similar documents"
        )
    rows = connection.vectors.body_embeddings(document.hash)
    if not rows:
        raise EmbeddingSpaceError(
            f"{document.collection}/{document.path} has no vectors yet; run `memtrove embed`"
        )
    vectors = np.frombuffer(b"".join(rows), dtype=np.float32)
    centroid = vectors.reshape(len(rows), -1).mean(axis=0)
    norm = float(np.linalg.norm(centroid))
    if not np.isfinite(norm) or norm == 0.0:
        return []
    hits = search_vectors(connection, centroid / norm, limit + 1, matrix=matrix, filters=filters)
    return [hit for hit in hits if hit.doc_id != document.doc_id][:limit]
