"""The vector index of a PostgreSQL vault (:class:`memtrove.db.vector_index.VectorIndex`):
each vector in ``vector_index`` (its id is ``content_vectors.id``), the space's dimensions
in the one row of ``vector_index_space``, both created when the first vector fixes the
dimensions.

The column's storage is a :class:`Storage`. Without any extension it is :data:`BYTEA`: packed
float32 as given, the k nearest found in memory as the SQLite vault's matrix finds them
(every vector read once, the cosines one matrix product). With pgvector it is a ``vector(n)``
column under an HNSW index (:mod:`memtrove.db.postgres.pgvector_index`, which also picks the
storage when the connection opens its index). A space keeps the storage its table was made
with: the index reads it from the ``embedding`` column's type, so a BYTEA space stays BYTEA
in a database that gains pgvector later, and only a space made afterwards (after a
:meth:`PostgresVectorIndex.drop`) takes the new one. :attr:`PostgresVectorIndex.kind` names
the storage in use.

Vectors of the wrong size are refused with the sqlite-vec index's one-line messages. There is
no chunked scan (:meth:`PostgresVectorIndex.scan` says so), so the retrieval's matrix loads
through :meth:`PostgresVectorIndex.read_all`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from memtrove.db.sqlite.connection import DatabaseError, OperationalError
from memtrove.db.vector_index import FETCH, ScanUnavailable, VectorBlock, as_matrix, in_batches

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["BYTEA", "BYTEA_KIND", "PostgresVectorIndex", "Statements", "Storage", "check_size"]

BYTEA_KIND = "bytea (in-memory cosine)"

# The type of vector_index.embedding and the schema of that type (None without a space).
_SPACE_TYPE = (
    "SELECT t.typname, n.nspname FROM pg_attribute a "
    "JOIN pg_type t ON t.oid = a.atttypid JOIN pg_namespace n ON n.oid = t.typnamespace "
    "WHERE a.attrelid = to_regclass('vector_index') AND a.attname = 'embedding' "
    "AND NOT a.attisdropped AND to_regclass('vector_index_space') IS NOT NULL"
)


class Statements(Protocol):
    """What the index uses of :class:`memtrove.db.postgres.connection.PostgresConnection`."""

    def execute(self, sql: str, parameters: Any = ..., /) -> Any: ...

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Any: ...

    @property
    def in_transaction(self) -> bool: ...


class Storage(Protocol):
    """How one kind of ``embedding`` column holds vectors."""

    kind: str
    """What :attr:`PostgresVectorIndex.kind` shows (``doctor``, ``status``)."""
    max_k: int
    type: tuple[str, str]
    """The column's type as the catalogue names it: (type, the type's schema)."""
    value: str
    """The placeholder of one vector in an ``INSERT``."""

    def read(self, column: str) -> str:
        """SQL reading ``column`` back as bytes (:meth:`decode` makes them packed float32)."""
        ...

    def column(self, dimensions: int) -> str:
        """The column's type for vectors of ``dimensions``."""
        ...

    def usable(self, connection: Statements, dimensions: int) -> bool:
        """Whether a new space of ``dimensions`` can take this storage now."""
        ...

    def index(self, connection: Statements) -> None:
        """Create the search index of a new ``vector_index`` table (if any)."""
        ...

    def encode(self, vector: bytes) -> Any:
        """One packed float32 vector as the value :attr:`value` takes."""
        ...

    def decode(self, stored: Any) -> bytes:
        """One vector read through :meth:`read` as packed float32."""
        ...

    def matrix(
        self, rows: Sequence[tuple[Any, Any]]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """(ids, one vector per row) of (id, :meth:`read`) rows."""
        ...

    def nearest(self, connection: Statements, query: bytes, k: int) -> list[tuple[int, float]]:
        """The ``k`` (1 to :attr:`max_k`) vectors nearest ``query`` as (id, cosine), best
        first."""
        ...


class _Bytea:
    """Vectors as ``BYTEA``: the bytes given, the nearest a matrix product in memory."""

    kind = BYTEA_KIND
    max_k = 4096  # as the SQLite vault's, so that callers ask alike
    type = ("bytea", "pg_catalog")
    value = "?"

    def read(self, column: str) -> str:
        return column

    def column(self, dimensions: int) -> str:
        return "BYTEA"

    def usable(self, connection: Statements, dimensions: int) -> bool:
        return True

    def index(self, connection: Statements) -> None:
        """None: BYTEA vectors are read whole, never looked up."""

    def encode(self, vector: bytes) -> Any:
        return vector

    def decode(self, stored: Any) -> bytes:
        return bytes(stored)

    def matrix(
        self, rows: Sequence[tuple[Any, Any]]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        return as_matrix(rows)

    def nearest(self, connection: Statements, query: bytes, k: int) -> list[tuple[int, float]]:
        import numpy as np

        ids, matrix = self.matrix(
            connection.execute("SELECT id, embedding FROM vector_index ORDER BY id").fetchall()
        )
        if not len(ids):
            return []
        wanted = np.frombuffer(query, dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(wanted))
        cosines = (matrix @ wanted) / np.where(norms > 0, norms, 1.0)
        best = np.argsort(-cosines, kind="stable")[:k]
        return [(int(ids[i]), float(cosines[i])) for i in best]


BYTEA: Storage = _Bytea()


def check_size(vector: bytes, dimensions: int, role: str) -> None:
    """Refuse a vector (``role`` "inserted" or "query") that is not ``dimensions`` float32,
    in sqlite-vec's words (an ``OperationalError``, as the SQLite vault raises)."""
    if len(vector) % 4:
        raise OperationalError(
            f'{role.capitalize()} vector for the "embedding" column is invalid: invalid '
            f"float32 vector BLOB length. Must be divisible by 4, found {len(vector)}"
        )
    if len(vector) // 4 != dimensions:
        raise OperationalError(
            f'Dimension mismatch for {role} vector for the "embedding" column. Expected '
            f"{dimensions} dimensions but received {len(vector) // 4}."
        )


class PostgresVectorIndex:
    """The vault's vector index on its space's storage; a new space takes ``new_spaces``
    (:data:`BYTEA` by default), and a space of another column type is read through
    ``storage_of(type name, its schema)``."""

    __slots__ = ("_connection", "_new_spaces", "_storage", "_storage_of", "kind", "max_k")

    kind: str
    """The storage in use, or a new space's without a space: ``bytea (in-memory cosine)``
    or ``pgvector (hnsw, cosine)``."""
    max_k: int
    """The largest ``k`` :meth:`nearest` accepts (the storage's)."""

    def __init__(
        self,
        connection: Statements,
        new_spaces: Storage = BYTEA,
        storage_of: Callable[[str, str], Storage | None] | None = None,
    ) -> None:
        self._connection = connection
        self._new_spaces = new_spaces
        self._storage_of = storage_of
        self._use(new_spaces)
        self.exists()

    def _use(self, storage: Storage) -> None:
        self._storage = storage
        self.kind, self.max_k = storage.kind, storage.max_k

    def exists(self) -> bool:
        """Whether the space exists; the index then follows its column's storage (another
        connection may have made the space anew)."""
        row = self._connection.execute(_SPACE_TYPE).fetchone()
        if row is None:
            if self._storage is not self._new_spaces:
                self._use(self._new_spaces)
            return False
        found = (str(row[0]), str(row[1]))
        if found != self._storage.type:
            for storage in (self._new_spaces, BYTEA):
                if found == storage.type:
                    self._use(storage)
                    return True
            other = self._storage_of(*found) if self._storage_of is not None else None
            if other is None:
                raise DatabaseError(
                    f"the vault's vector table holds vectors of type {found[1]}.{found[0]}, "
                    "which this index cannot read"
                )
            self._use(other)
        return True

    def dimensions(self) -> int | None:
        if not self.exists():
            return None
        row = self._connection.execute("SELECT dimensions FROM vector_index_space").fetchone()
        return None if row is None else int(row[0])

    def create(self, dimensions: int) -> None:
        if self.exists():
            return
        storage = self._new_spaces
        if not storage.usable(self._connection, int(dimensions)):
            storage = BYTEA  # e.g. more dimensions than an HNSW index takes
        self._connection.execute(
            "CREATE TABLE vector_index (id BIGINT PRIMARY KEY, "
            f"embedding {storage.column(int(dimensions))} NOT NULL)"
        )
        storage.index(self._connection)
        self._connection.execute(
            "CREATE TABLE vector_index_space (id BIGINT PRIMARY KEY CHECK (id = 1), "
            "dimensions BIGINT NOT NULL)"
        )
        self._connection.execute(
            "INSERT INTO vector_index_space (id, dimensions) VALUES (1, ?)", (int(dimensions),)
        )
        self._use(storage)

    def drop(self) -> None:
        self._connection.execute("DROP TABLE IF EXISTS vector_index")
        self._connection.execute("DROP TABLE IF EXISTS vector_index_space")
        self._use(self._new_spaces)

    def insert(self, rows: Iterable[tuple[int, bytes]], *, recorded_only: bool = False) -> None:
        rows = [(int(vector_id), bytes(vector)) for vector_id, vector in rows]
        if not rows:
            return
        dimensions = self.dimensions()  # None: the insert fails on the missing table
        if dimensions is not None:
            for _, vector in rows:
                check_size(vector, dimensions, "inserted")
        storage = self._storage
        if recorded_only:
            self._connection.executemany(
                f"INSERT INTO vector_index (id, embedding) SELECT cv.id, {storage.value} "
                "FROM content_vectors cv WHERE cv.id = ?",
                [(storage.encode(vector), vector_id) for vector_id, vector in rows],
            )
        else:
            self._connection.executemany(
                f"INSERT INTO vector_index (id, embedding) VALUES (?, {storage.value})",
                [(vector_id, storage.encode(vector)) for vector_id, vector in rows],
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
        dimensions = self.dimensions()
        if dimensions is None or k <= 0:
            return []
        check_size(query, dimensions, "query")
        return self._storage.nearest(self._connection, query, min(int(k), self.max_k))

    def embedding(self, vector_id: int) -> bytes | None:
        row = self._connection.execute(
            f"SELECT {self._storage.read('embedding')} FROM vector_index WHERE id = ?", (vector_id,)
        ).fetchone()
        return None if row is None else self._storage.decode(row[0])

    def embeddings(self, ids: Sequence[int]) -> list[tuple[int, bytes]]:
        storage = self._storage
        rows = in_batches(
            self._connection,
            f"SELECT id, {storage.read('embedding')} FROM vector_index WHERE id IN ({{marks}})",
            ids,
        )
        return [(vector_id, storage.decode(stored)) for vector_id, stored in rows]

    def body_embeddings(self, body_hash: str) -> list[bytes]:
        storage = self._storage
        rows = self._connection.execute(
            f"SELECT {storage.read('v.embedding')} FROM content_vectors "
            "cv JOIN vector_index v ON v.id = cv.id WHERE cv.hash = ? ORDER BY cv.seq",
            (body_hash,),
        ).fetchall()
        return [storage.decode(row[0]) for row in rows]

    def embeddings_by_body(self) -> Iterator[list[tuple[str, bytes]]]:
        storage = self._storage
        cursor = self._connection.execute(
            f"SELECT cv.hash, {storage.read('v.embedding')} FROM "
            "content_vectors cv JOIN vector_index v ON v.id = cv.id ORDER BY cv.hash, cv.id"
        )
        while rows := cursor.fetchmany(FETCH):
            yield [(str(row[0]), storage.decode(row[1])) for row in rows]

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
        storage = self._storage
        return storage.matrix(
            self._connection.execute(
                f"SELECT id, {storage.read('embedding')} FROM vector_index ORDER BY id"
            ).fetchall()
        )
