"""``build_graphs``: the temporal backbone and bulk semantic edges, for whole vaults.

- **temporal**: the active documents in effective-time order (``authored_at``, else
  ``modified_at``; then ``created_at`` and id to break ties), each linked to the next by a
  ``temporal`` edge (earlier -> later, weight 1).
- **semantic**: each active document's vector (the normalised mean of its fragment vectors,
  as ``find_similar`` uses) against every other's, in batches of rows: for each document its
  ``k`` nearest neighbours with cosine >= ``threshold`` become ``semantic`` edges weighted by
  the cosine. Memory is O(n x dimensions + batch x n + n x k), never an n x n matrix. A pair
  gets one semantic edge whatever the direction, and none when enrichment already classified
  it (first writer wins; see :mod:`memtrove.graph.relations`).

Both are safe to rerun: an existing edge is never duplicated and weights never drop, so a
second run on an unchanged vault adds nothing. Edges are written in batches, each its own
short transaction.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memtrove.db.connection import Connection, write_transaction
from memtrove.errors import InvalidQueryError
from memtrove.graph.relations import count_relations, insert_semantic_edges, insert_temporal_edges

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "DEFAULT_NEIGHBOURS",
    "DEFAULT_SEMANTIC_THRESHOLD",
    "GRAPH_TYPES",
    "GraphBuildReport",
    "build_graphs",
    "parse_graph_types",
]

DEFAULT_SEMANTIC_THRESHOLD = 0.7
DEFAULT_NEIGHBOURS = 5
GRAPH_TYPES = ("temporal", "semantic")
_ROW_BATCH = 512  # rows of the similarity product at a time: 512 x n float32
_WRITE_BATCH = 5000


@dataclass
class GraphBuildReport:
    """New edges written and totals afterwards, per graph built (None: not built)."""

    temporal: int | None = None
    temporal_total: int | None = None
    semantic: int | None = None
    semantic_total: int | None = None
    documents: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def new_edges(self) -> int:
        return (self.temporal or 0) + (self.semantic or 0)

    @property
    def total_edges(self) -> int:
        return (self.temporal_total or 0) + (self.semantic_total or 0)

    def text(self) -> str:
        """``N new edge(s), M total`` and what was built."""
        parts = []
        if self.temporal is not None:
            parts.append(f"temporal {self.temporal} new / {self.temporal_total} total")
        if self.semantic is not None:
            parts.append(f"semantic {self.semantic} new / {self.semantic_total} total")
        line = f"{self.new_edges} new edge(s), {self.total_edges} total"
        detail = f" ({'; '.join(parts)})" if parts else ""
        notes = "".join(f"\n{note}" for note in self.notes)
        return line + detail + notes

    def as_dict(self) -> dict[str, object]:
        """The answer shape of the MCP tool and the REST route."""
        answer: dict[str, object] = {}
        if self.temporal is not None:
            answer["temporal"] = self.temporal
            answer["temporalTotal"] = self.temporal_total
        if self.semantic is not None:
            answer["semantic"] = self.semantic
            answer["semanticTotal"] = self.semantic_total
        answer["documents"] = self.documents
        answer["notes"] = list(self.notes)
        return answer


def parse_graph_types(graph_types: object) -> tuple[str, ...]:
    """``["all"]``, ``["temporal"]``, ``"semantic"``... as the graphs to build, in order;
    anything else is refused with one line naming the choices."""
    if isinstance(graph_types, str):
        graph_types = [graph_types]
    if not isinstance(graph_types, list | tuple) or not graph_types:
        raise InvalidQueryError("graph_types must be a list of: temporal, semantic, all")
    wanted: set[str] = set()
    for item in graph_types:
        if not isinstance(item, str) or item.strip().lower() not in (*GRAPH_TYPES, "all"):
            raise InvalidQueryError(
                f"unknown graph type {str(item)[:40]!r} (choose temporal, semantic or all)"
            )
        name = item.strip().lower()
        wanted.update(GRAPH_TYPES if name == "all" else (name,))
    return tuple(kind for kind in GRAPH_TYPES if kind in wanted)


def build_graphs(
    connection: Connection,
    graph_types: tuple[str, ...] = GRAPH_TYPES,
    *,
    threshold: float = DEFAULT_SEMANTIC_THRESHOLD,
    neighbours: int = DEFAULT_NEIGHBOURS,
) -> GraphBuildReport:
    """Build the graphs named in ``graph_types`` (see the module doc)."""
    if not isinstance(threshold, int | float) or not 0.0 <= float(threshold) <= 1.0:
        raise InvalidQueryError(f"semantic_threshold must be between 0 and 1, got {threshold!r}")
    if (
        isinstance(neighbours, bool)
        or not isinstance(neighbours, int)
        or not 1 <= neighbours <= 100
    ):
        raise InvalidQueryError(f"neighbours must be between 1 and 100, got {neighbours!r}")
    report = GraphBuildReport()
    report.documents = int(
        connection.execute("SELECT COUNT(*) FROM documents WHERE active = 1").fetchone()[0]
    )
    if "temporal" in graph_types:
        report.temporal = _build_temporal(connection)
        report.temporal_total = count_relations(connection, "temporal")
    if "semantic" in graph_types:
        added, note = _build_semantic(connection, float(threshold), neighbours)
        report.semantic = added
        report.semantic_total = count_relations(connection, "semantic")
        if note:
            report.notes.append(note)
    return report


def _build_temporal(connection: Connection) -> int:
    ids = [
        int(row[0])
        for row in connection.execute(
            "SELECT id FROM documents WHERE active = 1 "
            "ORDER BY COALESCE(authored_at, modified_at), created_at, id"
        )
    ]
    pairs = list(itertools.pairwise(ids))
    added = 0
    for start in range(0, len(pairs), _WRITE_BATCH):
        with write_transaction(connection):
            added += insert_temporal_edges(connection, pairs[start : start + _WRITE_BATCH])
    return added


def _document_vectors(
    connection: Connection,
) -> tuple[list[int], npt.NDArray[np.float32]] | None:
    """Active documents with vectors and their normalised centroids, read in chunks."""
    import numpy as np

    if not connection.vectors.exists():
        return None
    by_hash: dict[str, list[int]] = {}
    for doc_id, body_hash in connection.execute(
        "SELECT id, hash FROM documents WHERE active = 1 ORDER BY id"
    ):
        by_hash.setdefault(str(body_hash), []).append(int(doc_id))
    slot: dict[str, int] = {}
    sums: npt.NDArray[np.float32] | None = None
    width = 0
    for rows in connection.vectors.embeddings_by_body():
        for body_hash, blob in rows:
            key = str(body_hash)
            if key not in by_hash:
                continue
            vector = np.frombuffer(bytes(blob), dtype=np.float32)
            if sums is None:
                width = len(vector)
                sums = np.zeros((len(by_hash), width), dtype=np.float32)
            if len(vector) != width:
                continue
            position = slot.setdefault(key, len(slot))
            sums[position] += vector
    if sums is None or not slot:
        return None
    centroids = sums[: len(slot)]
    norms = np.linalg.norm(centroids, axis=1)
    usable = np.isfinite(norms) & (norms > 0)
    hashes = list(slot)
    documents: list[int] = []
    rows_kept: list[int] = []
    for position, body_hash in enumerate(hashes):
        if usable[position]:
            for doc_id in by_hash[body_hash]:
                documents.append(doc_id)
                rows_kept.append(position)
    matrix = centroids[rows_kept] / norms[rows_kept, None]
    return documents, np.ascontiguousarray(matrix, dtype=np.float32)


def _nearest_pairs(
    documents: list[int],
    matrix: npt.NDArray[np.float32],
    threshold: float,
    neighbours: int,
) -> Iterator[tuple[int, int, float]]:
    """(lower id, higher id, cosine) for each document's top neighbours over threshold."""
    import numpy as np

    count = len(documents)
    ids = np.asarray(documents, dtype=np.int64)
    k = min(neighbours, count - 1)
    if k <= 0:
        return
    for start in range(0, count, _ROW_BATCH):
        block = matrix[start : start + _ROW_BATCH] @ matrix.T
        rows = np.arange(block.shape[0])
        block[rows, rows + start] = -np.inf  # never a document with itself
        top = np.argpartition(-block, k - 1, axis=1)[:, :k]
        scores = np.take_along_axis(block, top, axis=1)
        for row, (columns, values) in enumerate(zip(top, scores, strict=True)):
            source = int(ids[start + row])
            for column, value in zip(columns, values, strict=True):
                if value >= threshold:
                    target = int(ids[column])
                    if source != target:
                        low, high = (source, target) if source < target else (target, source)
                        yield low, high, min(1.0, float(value))


def _build_semantic(connection: Connection, threshold: float, neighbours: int) -> tuple[int, str]:
    loaded = _document_vectors(connection)
    if loaded is None:
        return 0, "semantic: the vault has no vectors yet; run `memtrove embed` first"
    documents, matrix = loaded
    best: dict[tuple[int, int], float] = {}
    for low, high, weight in _nearest_pairs(documents, matrix, threshold, neighbours):
        if weight > best.get((low, high), -1.0):
            best[(low, high)] = weight
    del matrix
    edges = [(low, high, weight) for (low, high), weight in sorted(best.items())]
    added = 0
    for start in range(0, len(edges), _WRITE_BATCH):
        with write_transaction(connection):
            added += insert_semantic_edges(
                connection, edges[start : start + _WRITE_BATCH], metadata={"by": "build_graphs"}
            )
    return added, ""
