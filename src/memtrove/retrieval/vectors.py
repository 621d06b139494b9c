"""The vector index: one embedding space, fragment vectors, nearest neighbours.

Tables (migration m004): ``embedding_space`` records the model identity and dimension every
stored vector belongs to; ``content_vectors`` has one row per embedded fragment, and its id
names the fragment's vector in the engine's vector index (``connection.vectors``,
:class:`memtrove.db.vector_index.VectorIndex`; cosine), created when the first vector fixes
the dimension. Vectors are keyed by content hash, so identical bodies
share them and a renamed file keeps its vectors.

A search ranks documents by the cosine similarity of their best fragment to the query.
"""

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from memtrove.db.connection import Connection
from memtrove.errors import EmbeddingSpaceError
from memtrove.models.protocols import Embedder, Vectors
from memtrove.retrieval.filters import Filters, filter_sql
from memtrove.retrieval.vector_matrix import VectorMatrix, scan_nearest, vector_stamp
from memtrove.text import now_iso

if TYPE_CHECKING:
    pass


__all__ = [
    "EmbeddingSpace",
    "VectorHit",
    "check_space",
    "clear_vectors",
    "delete_vectors",
    "document_similarities",
    "ensure_vector_table",
    "format_document_input",
    "format_query_input",
    "insert_vectors",
    "record_space",
    "search_vectors",
    "set_space",
    "stored_space",
    "vector_count",
]

_MIN_CANDIDATES = 64
_CANDIDATE_FACTOR = 6


class EmbeddingSpace(NamedTuple):
    """The model identity and dimension of the stored vectors."""

    identity: str
    dimensions: int

    def __str__(self) -> str:
        return f"{self.identity} ({self.dimensions}-d)"


class VectorHit(NamedTuple):
    """A document and the cosine similarity of its best fragment, clamped to [0, 1]."""

    doc_id: int
    score: float
    seq: int


def format_document_input(embedder: Embedder, title: str, text: str) -> str:
    """The text embedded for a fragment: its label (or the document title) and content.

    Instruction-tuned models get the prompt shape they were trained with
    (``title: ... | text: ...``); plain models (``input_style = "plain"``) the bare text.
    """
    if getattr(embedder, "input_style", "prefixed") == "plain":
        return f"{title}\n{text}" if title else text
    return f"title: {title or 'none'} | text: {text}"


def format_query_input(embedder: Embedder, query: str) -> str:
    if getattr(embedder, "input_style", "prefixed") == "plain":
        return query
    return f"task: search result | query: {query}"


def stored_space(connection: Connection) -> EmbeddingSpace | None:
    row = connection.execute("SELECT identity, dimensions FROM embedding_space").fetchone()
    return EmbeddingSpace(str(row[0]), int(row[1])) if row else None


def check_space(connection: Connection, identity: str, dimensions: int) -> EmbeddingSpace | None:
    """Raise if the vault holds vectors of another space; return the stored space."""
    space = stored_space(connection)
    if space is not None and (space.identity, space.dimensions) != (identity, dimensions):
        raise EmbeddingSpaceError(
            f"the vault's vectors come from {space}, but the embedder is {identity} "
            f"({dimensions}-d); run `memtrove embed --force` to re-embed everything with it, "
            "or configure the original embedder"
        )
    return space


def record_space(connection: Connection, table: str, identity: str, dimensions: int) -> None:
    """Record a space in its one-row table (``embedding_space`` or ``second_space``; inside
    a write transaction), keeping the row's other columns."""
    if table not in ("embedding_space", "second_space"):
        raise ValueError(f"not a space table: {table!r}")
    connection.execute(
        f"INSERT INTO {table} (id, identity, dimensions, created_at) VALUES (1, ?, ?, ?) "
        "ON CONFLICT (id) DO UPDATE SET identity = excluded.identity, "
        "dimensions = excluded.dimensions, created_at = excluded.created_at",
        (identity, dimensions, now_iso()),
    )


def set_space(connection: Connection, identity: str, dimensions: int) -> None:
    """Record the space (call inside a write transaction)."""
    record_space(connection, "embedding_space", identity, dimensions)
    ensure_vector_table(connection, dimensions)


def ensure_vector_table(connection: Connection, dimensions: int) -> None:
    connection.vectors.create(dimensions)


def clear_vectors(connection: Connection) -> None:
    """Drop every vector and the space; all documents become pending (in a transaction)."""
    connection.execute("DELETE FROM content_vectors")
    connection.vectors.drop()
    connection.execute("DELETE FROM embedding_space")
    connection.execute(
        "UPDATE documents SET embed_state = 'pending', embed_attempts = 0, embed_error = NULL"
    )


def delete_vectors(connection: Connection, body_hash: str) -> None:
    """Drop the vectors of one body's fragments, in both spaces (inside the caller's write
    transaction)."""
    connection.vectors.delete_body(body_hash)
    connection.execute("DELETE FROM content_vectors WHERE hash = ?", (body_hash,))
    connection.execute("DELETE FROM second_vectors WHERE hash = ?", (body_hash,))


def vector_count(connection: Connection) -> int:
    return int(connection.execute("SELECT COUNT(*) FROM content_vectors").fetchone()[0])


def insert_vectors(
    connection: Connection,
    rows: Sequence[tuple[str, int, str, str, str]],
    vectors: Vectors,
    model: str,
) -> None:
    """Store fragment vectors: rows of (hash, seq, fragment_type, label, input fingerprint).

    Runs inside the caller's write transaction; ids are allocated under its lock.
    """
    import numpy as np

    if not rows:
        return
    start = int(
        connection.execute("SELECT COALESCE(MAX(id), 0) FROM content_vectors").fetchone()[0]
    )
    now = now_iso()
    ids = range(start + 1, start + 1 + len(rows))
    connection.executemany(
        "INSERT INTO content_vectors (id, hash, seq, model, fragment_type, fragment_label, "
        "embed_input_fp, embedded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (hash, seq) DO NOTHING",
        [
            (i, h, s, model, t, label, fp, now)
            for i, (h, s, t, label, fp) in zip(ids, rows, strict=True)
        ],
    )
    array = np.ascontiguousarray(vectors, dtype=np.float32)
    connection.vectors.insert(
        [(i, array[n].tobytes()) for n, i in enumerate(ids)], recorded_only=True
    )


def search_vectors(
    connection: Connection,
    query_vector: Vectors,
    limit: int,
    *,
    matrix: VectorMatrix | None = None,
    filters: Filters | None = None,
) -> list[VectorHit]:
    """Active documents ranked by their best fragment's cosine similarity to the query.

    With a ``matrix`` loaded (vectors held in memory) the nearest fragments come from a
    matrix product; otherwise (a process's first search, see ``SCANS_BEFORE_LOADING``) from
    the index's scan, or its k-nearest when it cannot scan.
    Either way the candidates are then joined to active documents through the filters,
    asking for more when too few survive them.
    """
    import numpy as np

    index = connection.vectors
    if limit <= 0 or not index.exists():
        return []
    magnitude = float(np.linalg.norm(np.asarray(query_vector, dtype=np.float32)))
    if not math.isfinite(magnitude) or magnitude == 0.0:
        return []  # a blank query (or one of words the model does not know) points nowhere
    in_memory = matrix is not None and matrix.ready(connection, load=matrix.searching())
    total = matrix.size if in_memory and matrix is not None else vector_count(connection)
    if total == 0:
        return []
    scan = not in_memory  # read the chunks ourselves, until their layout proves unknown
    chosen = filters or Filters()
    where, params = filter_sql("d", chosen)
    # Ask deeper when the caller narrows the search; the standing exclusions (records,
    # internal notes) remove too few fragments to matter: at 10k notes the first
    # limit x 6 fragments held the 50 documents asked for on 60 queries of 60, and asking
    # 4x deeper cost hybrid ~5 ms a query.
    narrowed = bool(chosen.collections or chosen.content_types or chosen.since or chosen.until)
    k = max(_MIN_CANDIDATES, limit * _CANDIDATE_FACTOR * (4 if narrowed else 1))
    blob = np.ascontiguousarray(query_vector, dtype=np.float32).tobytes()
    while True:
        ceiling = total if in_memory or scan else min(total, index.max_k)
        k = min(ceiling, k)
        nearest: Sequence[tuple[int, float]] | None = None
        if in_memory and matrix is not None:
            nearest = matrix.nearest(query_vector, k)
        elif scan:
            keep = matrix.writer(connection, total) if matrix is not None else None
            nearest = scan_nearest(connection, query_vector, k, total, keep)
            if keep is not None:
                if nearest is not None:  # kept only if no vector changed meanwhile
                    keep.finish(vector_stamp(connection))
                    # a deeper round maps the file just written instead of scanning again
                    in_memory = matrix is not None and matrix.ready(connection, load=False)
                else:
                    keep.abandon()
            scan = nearest is not None and not in_memory
        if nearest is None:
            nearest = index.nearest(blob, min(k, index.max_k))
        hits = _documents_of(connection, nearest, limit, where, params)
        if len(hits) >= limit or k >= ceiling:
            return hits
        k = min(ceiling, k * 4)


def _documents_of(
    connection: Connection,
    nearest: Sequence[tuple[int, float]],
    limit: int,
    filters: Sequence[str],
    params: Sequence[object],
) -> list[VectorHit]:
    """Active documents passing ``filters`` (SQL over ``d``) of the nearest fragments, each
    at its best fragment."""
    if not nearest:
        return []
    similarity = {int(rowid): float(score) for rowid, score in nearest}
    where = ["d.active = 1", "d.invalidated_at IS NULL", *filters]
    ids = list(similarity)
    best: dict[int, tuple[float, int]] = {}
    for start in range(0, len(ids), 900):
        chunk = ids[start : start + 900]
        rows = connection.execute(
            "SELECT cv.id, cv.seq, d.id FROM content_vectors cv "
            "JOIN documents d ON d.hash = cv.hash "
            f"WHERE cv.id IN ({','.join('?' * len(chunk))}) AND {' AND '.join(where)}",
            [*chunk, *params],
        ).fetchall()
        for vector_id, seq, doc in rows:
            score = similarity[int(vector_id)]
            if int(doc) not in best or score > best[int(doc)][0]:
                best[int(doc)] = (score, int(seq))
    ranked = sorted(best.items(), key=lambda item: (-item[1][0], item[0]))[:limit]
    return [
        VectorHit(doc_id=doc, score=min(1.0, max(0.0, score)), seq=seq)
        for doc, (score, seq) in ranked
    ]


def document_similarities(
    connection: Connection,
    query_vector: Vectors,
    doc_ids: Sequence[int],
    matrix: VectorMatrix | None = None,
) -> dict[int, float]:
    """Each document's best-fragment cosine similarity to the query (0.0 without vectors)."""
    import numpy as np

    if not doc_ids or not connection.vectors.exists():
        return {}
    placeholders = ",".join("?" * len(doc_ids))
    pairs = connection.execute(
        "SELECT cv.id, d.id FROM documents d JOIN content_vectors cv ON cv.hash = d.hash "
        f"WHERE d.id IN ({placeholders})",
        list(doc_ids),
    ).fetchall()
    if not pairs:
        return {}
    owner = {int(vector_id): int(doc) for vector_id, doc in pairs}
    ids = list(owner)
    if matrix is not None and matrix.ready(connection, load=False):
        result: dict[int, float] = {}
        for rowid, value in matrix.similarities(query_vector, ids).items():
            doc = owner[rowid]
            result[doc] = max(result.get(doc, 0.0), min(1.0, max(0.0, value)))
        return result
    query = np.ascontiguousarray(query_vector, dtype=np.float32)
    best: dict[int, float] = {}
    for start in range(0, len(ids), 500):  # one product per block, as the index reads them
        rows = connection.vectors.embeddings(ids[start : start + 500])
        if not rows:
            continue
        block = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        similarities = block.reshape(len(rows), -1) @ query
        for (rowid, _), similarity in zip(rows, similarities, strict=True):
            doc = owner[int(rowid)]
            value = min(1.0, max(0.0, float(similarity)))
            if value > best.get(doc, -1.0):
                best[doc] = value
    return best
