"""The second vector space (``MEMTROVE_EMBED_SECOND=minilm``): its vectors, and the third
fusion channel they feed.

The default embedder (wordllama) pools static word vectors: fast, blind to paraphrase. A
second, transformer embedder (MiniLM) reads a question worded unlike its answer. Its
vectors live beside the first space's (migration m023), one per fragment, keyed by content
hash and sequence; its identity and dimension are checked like the first space's. A search
scores every second-space vector in memory (a 10k-fragment vault is a 15 MB matrix), keeps
each document's best fragment, and hands the fusion the ``depth`` best documents passing
the filters plus the cosine of every candidate the other channels found.

The channel is active when the setting names an embedder and the vault holds its vectors;
without the setting nothing here runs, and retrieval is exactly what it is without it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from memtrove.db.connection import Connection
from memtrove.errors import EmbeddingSpaceError, MemtroveError
from memtrove.models.protocols import Vectors
from memtrove.retrieval.filters import Filters, filter_sql
from memtrove.retrieval.vectors import EmbeddingSpace, record_space
from memtrove.text import now_iso

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from memtrove.models.registry import Models

__all__ = [
    "STAGE",
    "SecondChannel",
    "SecondMatrix",
    "check_second_space",
    "clear_second",
    "insert_second",
    "second_channel",
    "second_count",
    "second_pending",
    "second_space",
    "second_state",
    "set_second_space",
]

STAGE = "minilm"  # the stage name a ranking shows for this channel
NO_SECOND_VECTORS = "the vault has no second-space vectors yet; run `memtrove embed`"
_CHUNK = 900
# Fragments of active documents without a second-space vector (what `embed` has to do).
PENDING_FRAGMENTS = (
    "FROM fragments f WHERE f.hash IN (SELECT hash FROM documents WHERE active = 1) "
    "AND NOT EXISTS (SELECT 1 FROM second_vectors s WHERE s.hash = f.hash AND s.seq = f.seq)"
)


def second_space(connection: Connection) -> EmbeddingSpace | None:
    row = connection.execute("SELECT identity, dimensions FROM second_space").fetchone()
    return EmbeddingSpace(str(row[0]), int(row[1])) if row and row[0] else None


def second_count(connection: Connection) -> int:
    return int(connection.execute("SELECT COUNT(*) FROM second_vectors").fetchone()[0])


def second_pending(connection: Connection) -> int:
    """Fragments of active documents still without a second-space vector."""
    return int(connection.execute(f"SELECT COUNT(*) {PENDING_FRAGMENTS}").fetchone()[0])


def check_second_space(
    connection: Connection, identity: str, dimensions: int
) -> EmbeddingSpace | None:
    """Raise if the second space holds another model's vectors; return the stored space."""
    space = second_space(connection)
    if space is not None and (space.identity, space.dimensions) != (identity, dimensions):
        raise EmbeddingSpaceError(
            f"the vault's second-space vectors come from {space}, but the second embedder is "
            f"{identity} ({dimensions}-d); run `memtrove embed --force` to re-embed with it"
        )
    return space


def set_second_space(connection: Connection, identity: str, dimensions: int) -> None:
    """Record the second space (inside a write transaction), keeping its version."""
    record_space(connection, "second_space", identity, dimensions)


def clear_second(connection: Connection) -> None:
    """Drop every second-space vector and the space (inside a write transaction)."""
    connection.execute("DELETE FROM second_vectors")
    # the row stays (its version must never go back, or a process holding the old vectors
    # in memory could take new ones for them); an empty identity is no space
    connection.execute("UPDATE second_space SET identity = '', dimensions = 0")


def insert_second(
    connection: Connection, keys: Sequence[tuple[str, int]], vectors: Vectors
) -> None:
    """Store vectors for (hash, seq) fragment keys (inside a write transaction)."""
    import numpy as np

    array = np.ascontiguousarray(vectors, dtype=np.float32)
    now = now_iso()
    connection.executemany(
        "INSERT INTO second_vectors (hash, seq, embedding, embedded_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (hash, seq) DO NOTHING",
        [(h, s, array[n].tobytes(), now) for n, (h, s) in enumerate(keys)],
    )


def _version(connection: Connection) -> int:
    row = connection.execute("SELECT version FROM second_space WHERE id = 1").fetchone()
    return int(row[0]) if row is not None else -1


class SecondMatrix:
    """Every second-space vector in memory, with the content hash each belongs to;
    reloaded when the space's version moves."""

    def __init__(self) -> None:
        self._version: int | None = None
        self._lock = threading.Lock()
        self.hashes: list[str] = []
        self.position: dict[str, int] = {}  # hash -> index into hashes
        self.owner: npt.NDArray[np.int64] | None = None  # row -> index into hashes
        self.matrix: Vectors | None = None

    def ready(self, connection: Connection) -> bool:
        import numpy as np

        with self._lock:
            version = _version(connection)
            if version != self._version:
                rows = connection.execute(
                    "SELECT hash, embedding FROM second_vectors ORDER BY hash, seq"
                ).fetchall()
                index: dict[str, int] = {}
                owner = [index.setdefault(str(h), len(index)) for h, _ in rows]
                self.hashes, self.position = list(index), index
                self.owner = np.asarray(owner, dtype=np.int64)
                width = len(rows[0][1]) // 4 if rows else 0
                blob = b"".join(bytes(r[1]) for r in rows if len(r[1]) == width * 4)
                if rows and len(blob) != len(rows) * width * 4:
                    blob, self.hashes, self.position = b"", [], {}
                    self.owner = np.zeros(0, np.int64)
                self.matrix = np.frombuffer(blob, dtype=np.float32).reshape(-1, max(width, 1))
                self._version = version
            return bool(self.hashes)

    def best_by_hash(self, query: Vectors) -> npt.NDArray[np.float32]:
        """Each content hash's best fragment cosine to ``query`` (indexed like ``hashes``)."""
        import numpy as np

        assert self.matrix is not None and self.owner is not None
        scores = self.matrix @ np.asarray(query, dtype=np.float32)
        best = np.full(len(self.hashes), -1.0, dtype=np.float32)
        np.maximum.at(best, self.owner, scores)
        return best


class SecondChannel(NamedTuple):
    """The channel's cosines (doc id -> [0, 1]); ``skipped`` or ``error`` say why it has none."""

    cosines: dict[int, float]
    skipped: str | None = None
    error: MemtroveError | None = None


def second_channel(
    connection: Connection,
    models: Models,
    matrix: SecondMatrix,
    query: str,
    depth: int,
    filters: Filters,
    pool: Sequence[int],
) -> SecondChannel:
    """The ``depth`` documents nearest the query in the second space (passing ``filters``)
    and the cosine of each document of ``pool``; empty when the channel is off."""
    if not models.settings.embed_second:
        return SecondChannel({})
    try:
        embedder = models.second_embedder
        space = second_space(connection)
        if space is None or not matrix.ready(connection):
            return SecondChannel({}, skipped=NO_SECOND_VECTORS)
        check_second_space(connection, embedder.identity, embedder.dimensions)
        if matrix.matrix is None or matrix.matrix.shape[1] != embedder.dimensions:
            raise EmbeddingSpaceError(
                f"the vault's second-space vectors are not {embedder.dimensions}-d as their "
                "space says; run `memtrove embed --force` to re-embed them"
            )
        vector = embedder.embed_query(query)
    except MemtroveError as error:
        return SecondChannel({}, error=error)
    return SecondChannel(_cosines(connection, matrix, vector, depth, filters, pool))


def _cosines(
    connection: Connection,
    matrix: SecondMatrix,
    vector: Vectors,
    depth: int,
    filters: Filters,
    pool: Sequence[int],
) -> dict[int, float]:
    import numpy as np

    best = matrix.best_by_hash(vector)
    order = np.argsort(-best, kind="stable")
    where, params = filter_sql("d", filters)
    conditions = " AND ".join(["d.active = 1", "d.invalidated_at IS NULL", *where])
    result: dict[int, float] = {}
    start, step = 0, max(depth * 2, 64)
    while len(result) < depth and start < len(order):  # nearest hashes until depth documents
        chosen = [int(n) for n in order[start : start + step]]
        start += step
        for part in range(0, len(chosen), _CHUNK):
            chunk = chosen[part : part + _CHUNK]
            hashes = [matrix.hashes[n] for n in chunk]
            score = {matrix.hashes[n]: float(best[n]) for n in chunk}
            rows = connection.execute(
                f"SELECT d.id, d.hash FROM documents d WHERE d.hash IN "
                f"({','.join('?' * len(hashes))}) AND {conditions}",
                [*hashes, *params],
            ).fetchall()
            for doc, body_hash in rows:
                result[int(doc)] = score[str(body_hash)]
        step *= 4
    ranked = sorted(result.items(), key=lambda item: (-item[1], item[0]))[:depth]
    cosines = {doc: min(1.0, max(0.0, value)) for doc, value in ranked}
    missing = [doc for doc in dict.fromkeys(pool) if doc not in cosines]
    if missing:
        for part in range(0, len(missing), _CHUNK):
            chunk = missing[part : part + _CHUNK]
            for doc, body_hash in connection.execute(
                f"SELECT id, hash FROM documents WHERE id IN ({','.join('?' * len(chunk))})",
                chunk,
            ):
                n = matrix.position.get(str(body_hash))
                value = float(best[n]) if n is not None else 0.0
                cosines[int(doc)] = min(1.0, max(0.0, value))
    return cosines


def second_state(connection: Connection, setting: str | None) -> str:
    """One line on the channel for ``status`` and ``doctor``: off, active, or what it lacks."""
    count = second_count(connection)
    if not setting:
        kept = f" ({count} vectors kept; MEMTROVE_EMBED_SECOND=minilm uses them)" if count else ""
        return f"off{kept}"
    from memtrove.models.minilm import INSTALL, minilm_available

    if not minilm_available():
        return f"not available: MEMTROVE_EMBED_SECOND={setting} needs the extra ({INSTALL})"
    space = second_space(connection)
    if not count or space is None:
        return "on, no vectors yet: run `memtrove embed`"
    pending = second_pending(connection)
    waiting = f", {pending} fragments pending (`memtrove embed`)" if pending else ""
    return f"active: {count} vectors of {space}{waiting}"
