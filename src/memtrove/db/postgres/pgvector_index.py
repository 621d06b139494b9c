"""pgvector's storage for a PostgreSQL vault's vector index, and the choice between it and
``BYTEA`` when the connection opens its index (:func:`open_vector_index`).

With the ``vector`` extension in the vault's database, a space's vectors sit in a
``vector(n)`` column under an HNSW index of cosine distance (``vector_cosine_ops``), and the
k nearest are its approximate search (``ORDER BY embedding <=> query LIMIT k``) with
``hnsw.ef_search`` at k, and at least :data:`EF_SEARCH_MIN`: on 2,000 random 64-d vectors
pgvector's default of 40 kept 96% of the exact 10 nearest, 100 kept 99.9% for about 1 ms more
a query. A scan gives at most ``ef_search``'s ceiling of rows, hence ``max_k`` 1000; a space
wider than HNSW takes (2,000 dimensions) is made as BYTEA.

The extension's objects are named with its schema, since a vault's ``search_path`` is its own
schema only. Vectors go in as text (each float32 written so that the server's ``strtof`` reads
back the same float) and come out through ``vector_send`` (the type's binary form: a 4-byte
header, then big-endian float32), so the bytes read equal the bytes written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memtrove.db.postgres.vector_index import PostgresVectorIndex, Statements, Storage
from memtrove.db.sqlite.connection import DatabaseError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["PGVECTOR_KIND", "Pgvector", "find_pgvector", "open_vector_index"]

PGVECTOR_KIND = "pgvector (hnsw, cosine)"
HNSW_MAX_DIMENSIONS = 2000  # pgvector's ceiling for an HNSW index on ``vector``
EF_SEARCH_MAX = 1000  # hnsw.ef_search's ceiling: an HNSW scan gives at most that many rows
EF_SEARCH_MIN = 100  # candidates kept however few are asked: recall, for little time

_INSTALLED = (
    "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
    "WHERE e.extname = 'vector'"
)
_SAVEPOINT = "memtrove_pgvector"


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Pgvector:
    """Vectors as pgvector's ``vector(n)`` of the extension in ``schema``, under HNSW."""

    kind = PGVECTOR_KIND
    max_k = EF_SEARCH_MAX

    def __init__(self, schema: str) -> None:
        self.schema = schema
        self.type = ("vector", schema)
        self._name = _quoted(schema)
        self.value = f"?::{self._name}.vector"

    def read(self, column: str) -> str:
        return f"substring({self._name}.vector_send({column}) FROM 5)"

    def column(self, dimensions: int) -> str:
        return f"{self._name}.vector({int(dimensions)})"

    def usable(self, connection: Statements, dimensions: int) -> bool:
        if not 0 < dimensions <= HNSW_MAX_DIMENSIONS:
            return False
        # Still there: the extension may have been dropped, or made in a rolled-back transaction.
        row = connection.execute("SELECT to_regtype(?)", (f"{self._name}.vector",)).fetchone()
        return row is not None and row[0] is not None

    def index(self, connection: Statements) -> None:
        connection.execute(
            "CREATE INDEX vector_index_hnsw ON vector_index "
            f"USING hnsw (embedding {self._name}.vector_cosine_ops)"
        )

    def encode(self, vector: bytes) -> Any:
        import numpy as np

        # repr gives the shortest decimal of each value (a float32 widened exactly); the
        # server's strtof rounds it back to that float32.
        values = np.frombuffer(vector, dtype="<f4").tolist()
        return "[" + ",".join(map(repr, values)) + "]"

    def decode(self, stored: Any) -> bytes:
        import numpy as np

        return np.frombuffer(bytes(stored), dtype=">f4").astype("<f4").tobytes()

    def matrix(
        self, rows: Sequence[tuple[Any, Any]]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        import numpy as np

        if not rows:
            return np.zeros(0, np.int64), np.zeros((0, 0), np.float32)
        ids = np.fromiter((int(r[0]) for r in rows), dtype=np.int64, count=len(rows))
        packed = np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype=">f4")
        return ids, packed.astype(np.float32).reshape(len(rows), -1)

    def nearest(self, connection: Statements, query: bytes, k: int) -> list[tuple[int, float]]:
        # A transaction's own setting (set_config's is_local) when inside one, else the
        # session's: either way it holds for the next statement.
        connection.execute(
            "SELECT set_config('hnsw.ef_search', ?, ?)",
            (str(min(max(k, EF_SEARCH_MIN), EF_SEARCH_MAX)), connection.in_transaction),
        )
        rows = connection.execute(
            f"SELECT id, embedding OPERATOR({self._name}.<=>) {self.value} AS distance "
            "FROM vector_index ORDER BY distance LIMIT ?",
            (self.encode(query), k),
        ).fetchall()
        return [(int(row[0]), 1.0 - float(row[1])) for row in rows]


def storage_of(type_name: str, schema: str) -> Storage | None:
    """The storage of a space whose column is of ``schema.type_name`` (None: not pgvector's)."""
    return Pgvector(schema) if type_name == "vector" else None


def find_pgvector(connection: Statements, *, create: bool) -> Pgvector | None:
    """pgvector's storage when the database has the extension; when it has not and
    ``create``, the extension is made (in ``public``, within a savepoint inside a
    transaction) if the server offers it and the role may, else None, silently."""
    row = connection.execute(_INSTALLED).fetchone()
    if row is not None:
        return Pgvector(str(row[0]))
    if not create:
        return None
    offered = connection.execute(
        "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
    ).fetchone()
    if offered is None:
        return None
    inside = connection.in_transaction
    if inside and connection.execute("SHOW transaction_read_only").fetchone()[0] == "on":
        return None  # no DDL in a read-only transaction (an export's snapshot): not this time
    try:
        if inside:
            connection.execute(f"SAVEPOINT {_SAVEPOINT}")
        connection.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
    except DatabaseError:  # not allowed (or no public schema): BYTEA it is
        if inside:
            connection.execute(f"ROLLBACK TO SAVEPOINT {_SAVEPOINT}")
            connection.execute(f"RELEASE SAVEPOINT {_SAVEPOINT}")
        row = connection.execute(_INSTALLED).fetchone()  # unless another session made it
        return None if row is None else Pgvector(str(row[0]))
    if inside:
        connection.execute(f"RELEASE SAVEPOINT {_SAVEPOINT}")
    return Pgvector("public")


def open_vector_index(connection: Statements) -> PostgresVectorIndex:
    """The vault's vector index, its storage chosen now: an existing space's is its table's
    (BYTEA stays BYTEA), and a new space takes pgvector when the database has the extension
    (it is made only when the vault has no space yet), else BYTEA."""
    index = PostgresVectorIndex(connection, storage_of=storage_of)
    pgvector = find_pgvector(connection, create=not index.exists())
    if pgvector is None:
        return index
    return PostgresVectorIndex(connection, pgvector, storage_of=storage_of)
