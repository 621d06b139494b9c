"""The pgvector index against the SQLite one: the same vectors in, the same answers out
(ids, bytes, bodies, counts, deletes, the refused sizes), the k nearest as HNSW finds them
(recall against the exact cosine), and the choice of storage at open (pgvector, BYTEA for a
space made before the database had it, BYTEA without the extension or the right to make it).

The server with pgvector is the PostgreSQL 16 the ``pgserver`` package bundles, started in a
temporary folder for this module; the tests skip when the package is not installed and fail
when it is but its server does not start. The fallback is checked on the suite's own server
(no pgvector).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import numpy as np
import psycopg
import pytest

from memtrove.db.connection import Connection, open_connection
from memtrove.db.migrations import migrate
from memtrove.db.postgres.connection import PostgresConnection, open_postgres
from memtrove.db.postgres.pgvector_index import PGVECTOR_KIND
from memtrove.db.postgres.vector_index import BYTEA_KIND
from memtrove.db.sqlite.connection import OperationalError
from memtrove.db.vector_index import ScanUnavailable
from tests.db.test_postgres_vectors import DIMENSIONS, _fill, _vector, sorted_if_list

RECALL_VECTORS, RECALL_DIMENSIONS, RECALL_QUERIES = 2000, 64, 200


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The URL of a PostgreSQL with pgvector (pgserver's), stopped and removed after."""
    if importlib.util.find_spec("pgserver") is None:
        pytest.skip("pgserver is not installed (pip install -e '.[dev]'): no pgvector server")
    folder = Path(tempfile.mkdtemp(prefix="memtrove-pgvector-"))
    try:
        # Its lock file goes where XDG_RUNTIME_DIR says, read at import: keep it in the folder.
        with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings():
            patch.setenv("XDG_RUNTIME_DIR", str(folder))
            warnings.simplefilter("ignore")
            import pgserver

            running = pgserver.get_server(folder / "data", cleanup_mode="delete")
    except Exception as error:
        shutil.rmtree(folder, ignore_errors=True)
        pytest.fail(f"pgserver is installed but its PostgreSQL did not start: {error!r}")
    try:
        yield str(running.get_uri())
    finally:
        running.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


def _in_schema(url: str) -> str:
    return f"{url}&schema=memtrove_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"


def _database(server: str, name: str) -> str:
    """The URL of ``name`` on the server (``server`` names its ``postgres`` database)."""
    return server.replace("/postgres?", f"/{name}?", 1)


def _admin(server: str, *statements: str) -> None:
    with psycopg.connect(server, autocommit=True) as raw:
        for statement in statements:
            raw.execute(statement)


def _vault(url: str) -> PostgresConnection:
    pg = open_postgres(url)
    migrate(cast(Any, pg), label="vault")
    return pg


def _column(pg: PostgresConnection) -> str:
    row = pg.execute(
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
        "WHERE attrelid = to_regclass('vector_index') AND attname = 'embedding'"
    ).fetchone()
    return str(row[0])


@pytest.fixture
def engines(server: str, tmp_path: Path) -> Iterator[tuple[PostgresConnection, Connection]]:
    pg = _vault(_in_schema(server))
    lite = open_connection(tmp_path / "vault.sqlite")
    migrate(lite)
    for connection in (pg, lite):
        assert not connection.vectors.exists() and connection.vectors.dimensions() is None
        _fill(connection)
    yield pg, lite
    pg.close()
    lite.close()


def test_the_space_is_a_vector_column_under_hnsw(
    engines: tuple[PostgresConnection, Connection],
) -> None:
    pg, _ = engines
    assert pg.vectors.kind == PGVECTOR_KIND and pg.vectors.max_k == 1000
    assert _column(pg) == f"public.vector({DIMENSIONS})"
    definitions = [row[0] for row in pg.execute("SELECT indexdef FROM pg_indexes").fetchall()]
    assert any("USING hnsw (embedding public.vector_cosine_ops)" in d for d in definitions)


def test_the_same_vectors_come_back(engines: tuple[PostgresConnection, Connection]) -> None:
    pg, lite = engines
    for name in ("dimensions", "ids", "recorded_count"):
        assert sorted_if_list(getattr(pg.vectors, name)()) == sorted_if_list(
            getattr(lite.vectors, name)()
        ), name
    assert pg.vectors.embedding(4) == lite.vectors.embedding(4) == _vector(4)
    assert pg.vectors.embedding(9) is None and lite.vectors.embedding(9) is None
    assert sorted(pg.vectors.embeddings([1, 5, 9, 3])) == sorted(
        lite.vectors.embeddings([1, 5, 9, 3])
    )
    assert pg.vectors.body_embeddings("b") == lite.vectors.body_embeddings("b")
    flat = [row for block in pg.vectors.embeddings_by_body() for row in block]
    assert sorted(flat) == sorted(
        row for block in lite.vectors.embeddings_by_body() for row in block
    )
    pg_ids, pg_matrix = pg.vectors.read_all()
    lite_ids, lite_matrix = lite.vectors.read_all()
    order = lite_ids.argsort()
    assert pg_ids.tolist() == lite_ids[order].tolist()
    assert pg_matrix.dtype == np.float32 and pg_matrix.tobytes() == lite_matrix[order].tobytes()
    with pytest.raises(ScanUnavailable):
        next(iter(pg.vectors.scan()))


def test_the_bytes_come_back_exactly(server: str) -> None:
    """Values a decimal round trip could bend: the extremes, subnormals, -0, nine digits."""
    rng = np.random.default_rng(3)
    tricky = np.array(
        [3.4028235e38, -3.4028235e38, 1.1754944e-38, 1e-45, -1e-45, -0.0, 0.1, 1 / 3, 16777217],
        dtype=np.float32,
    )
    rows = [(1, np.resize(tricky, 16).astype(np.float32).tobytes())] + [
        (i, (rng.standard_normal(16) * 10.0 ** rng.integers(-30, 30)).astype(np.float32).tobytes())
        for i in range(2, 200)
    ]
    pg = _vault(_in_schema(server))
    try:
        with pg.transaction():
            pg.vectors.create(16)
            pg.vectors.insert(rows)
        assert pg.vectors.kind == PGVECTOR_KIND
        assert pg.vectors.embedding(1) == rows[0][1]
        assert sorted(pg.vectors.embeddings([i for i, _ in rows])) == rows
        ids, matrix = pg.vectors.read_all()
        assert ids.tolist() == [i for i, _ in rows]
        assert matrix.tobytes() == b"".join(vector for _, vector in rows)
    finally:
        pg.close()


def test_the_same_nearest(engines: tuple[PostgresConnection, Connection]) -> None:
    pg, lite = engines
    for seed in range(20):
        query = _vector(1000 + seed)
        ours = pg.vectors.nearest(query, 5)
        theirs = lite.vectors.nearest(query, 5)
        assert [i for i, _ in ours] == [i for i, _ in theirs]
        assert [round(s, 5) for _, s in ours] == [round(s, 5) for _, s in theirs]
    assert pg.vectors.nearest(_vector(1), 0) == lite.vectors.nearest(_vector(1), 0) == []


def test_deletes_alike(engines: tuple[PostgresConnection, Connection]) -> None:
    pg, lite = engines
    for connection in (pg, lite):
        with connection.transaction():
            connection.vectors.delete([1, 2])
            connection.vectors.delete_body("b")
    assert sorted(pg.vectors.ids()) == sorted(lite.vectors.ids()) == [3, 6, 7, 8]
    assert pg.vectors.recorded_count() == lite.vectors.recorded_count() == 4
    assert [i for i, _ in pg.vectors.nearest(_vector(1), 10)] == [
        i for i, _ in lite.vectors.nearest(_vector(1), 10)
    ]
    pg.vectors.drop()
    assert not pg.vectors.exists() and pg.vectors.dimensions() is None


def test_wrong_sizes_are_refused_alike(engines: tuple[PostgresConnection, Connection]) -> None:
    """The space's identity holds: a vector of another size fails in sqlite-vec's words."""
    pg, lite = engines
    for vector, role in ((_vector(1)[:16], "inserted"), (_vector(1) + b"\0" * 2, "inserted")):
        messages = []
        for connection in (pg, lite):
            with pytest.raises(OperationalError) as refused, connection.transaction():
                connection.vectors.insert([(50, vector)])
            messages.append(str(refused.value))
        assert messages[0] == messages[1], role
        assert "\n" not in messages[0]
    assert messages[0].startswith('Inserted vector for the "embedding" column is invalid')
    messages = []
    for connection in (pg, lite):
        with pytest.raises(OperationalError) as refused:
            connection.vectors.nearest(_vector(1)[:16], 3)
        messages.append(str(refused.value))
    assert (
        messages[0]
        == messages[1]
        == (
            'Dimension mismatch for query vector for the "embedding" column. '
            f"Expected {DIMENSIONS} dimensions but received 4."
        )
    )
    with pytest.raises(OperationalError, match="Expected 8 dimensions but received 4"):
        pg.vectors.insert([(50, _vector(1)[:16])])
    assert pg.vectors.embedding(50) is None


def test_recall_against_the_exact_cosine(server: str, tmp_path: Path) -> None:
    """HNSW is approximate: its 10 nearest hold >= 95% of the exact ones (SQLite's), and a
    stored vector asked for finds itself first."""
    rng = np.random.default_rng(11)
    matrix = rng.standard_normal((RECALL_VECTORS, RECALL_DIMENSIONS)).astype(np.float32)
    rows = [(i + 1, matrix[i].tobytes()) for i in range(RECALL_VECTORS)]
    pg = _vault(_in_schema(server))
    lite = open_connection(tmp_path / "vault.sqlite")
    migrate(lite)
    try:
        for connection in (pg, lite):
            with connection.transaction():
                connection.vectors.create(RECALL_DIMENSIONS)
                connection.vectors.insert(rows)
        query = rng.standard_normal(RECALL_DIMENSIONS).astype(np.float32).tobytes()
        plan = pg.execute(
            "EXPLAIN SELECT id FROM vector_index ORDER BY embedding OPERATOR(public.<=>) "
            "?::public.vector LIMIT 10",
            (str(np.frombuffer(query, np.float32).tolist()),),
        ).fetchall()
        assert "vector_index_hnsw" in " ".join(row[0] for row in plan)  # HNSW, not a sort
        found = 0
        for _ in range(RECALL_QUERIES):
            query = rng.standard_normal(RECALL_DIMENSIONS).astype(np.float32).tobytes()
            ours = pg.vectors.nearest(query, 10)
            exact = lite.vectors.nearest(query, 10)
            assert len(ours) == 10
            found += len({i for i, _ in ours} & {i for i, _ in exact})
        recall = found / (10 * RECALL_QUERIES)
        print(f"pgvector HNSW recall@10 over {RECALL_QUERIES} queries: {recall:.4f}")
        assert recall >= 0.95
        for vector_id, vector in rows:
            (best, cosine), *_ = pg.vectors.nearest(vector, 1)
            assert best == lite.vectors.nearest(vector, 1)[0][0] == vector_id
            assert cosine == pytest.approx(1.0, abs=1e-5)
    finally:
        pg.close()
        lite.close()


def test_a_space_keeps_the_storage_it_was_made_with(server: str) -> None:
    """A role that may not make the extension gets BYTEA (silently, even inside a
    transaction); once the database has pgvector, that BYTEA space is still read as BYTEA,
    and only a space made anew takes pgvector. A space too wide for HNSW stays BYTEA."""
    name = f"late_{uuid.uuid4().hex[:8]}"
    _admin(server, f"CREATE ROLE {name} LOGIN", f"CREATE DATABASE {name} OWNER {name}")
    as_owner = _database(server, name).replace("//postgres:@", f"//{name}:@", 1)
    as_superuser = _database(server, name)
    url = f"{as_owner}&schema=vault"
    rows = [(i, _vector(i)) for i in range(1, 20)]
    try:
        pg = _vault(url)
        with pg.transaction():
            pg.execute("INSERT INTO content (hash, doc, created_at) VALUES ('a', 'a', 't')")
            pg.vectors.create(DIMENSIONS)  # first asked here: the attempt is in a savepoint
            pg.vectors.insert(rows)
        assert pg.vectors.kind == BYTEA_KIND and _column(pg) == "bytea"
        expected = pg.vectors.nearest(_vector(500), 5)
        pg.close()
        _admin(as_superuser, "CREATE EXTENSION vector")
        for reopened_url in (url, f"{as_superuser}&schema=vault"):
            pg = open_postgres(reopened_url)
            assert pg.vectors.kind == BYTEA_KIND and _column(pg) == "bytea"
            assert pg.vectors.embedding(3) == _vector(3)
            assert pg.vectors.read_all()[1].tobytes() == b"".join(v for _, v in rows)
            assert pg.vectors.nearest(_vector(500), 5) == expected
            pg.close()
        pg, other = open_postgres(url), open_postgres(url)
        assert other.vectors.kind == BYTEA_KIND
        with pg.transaction():
            pg.vectors.drop()
            assert pg.vectors.kind == PGVECTOR_KIND
            pg.vectors.create(DIMENSIONS)
            pg.vectors.insert(rows)
        assert _column(pg) == f"public.vector({DIMENSIONS})"
        assert other.vectors.exists() and other.vectors.kind == PGVECTOR_KIND  # follows it
        assert other.vectors.embedding(3) == _vector(3)
        assert [i for i, _ in other.vectors.nearest(_vector(500), 5)] == [i for i, _ in expected]
        with pg.transaction():
            pg.vectors.drop()
            pg.vectors.create(2001)
        assert pg.vectors.kind == BYTEA_KIND and _column(pg) == "bytea"
        pg.close()
        other.close()
    finally:
        _admin(server, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)", f"DROP ROLE {name}")


def test_a_superuser_makes_the_extension_at_open(server: str) -> None:
    name = f"fresh_{uuid.uuid4().hex[:8]}"
    _admin(server, f"CREATE DATABASE {name}")
    try:
        pg = _vault(f"{_database(server, name)}&schema=vault")
        with pg.transaction():
            assert pg.vectors.kind == PGVECTOR_KIND  # made inside the transaction, kept
        assert pg.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
        pg.close()
    finally:
        _admin(server, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_without_pgvector_the_index_is_bytea(url: str) -> None:
    """The suite's server has no pgvector: the index keeps vectors as BYTEA and says so."""
    pg = _vault(url)
    try:
        offered = pg.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        assert offered.fetchone() is None
        assert pg.vectors.kind == BYTEA_KIND and pg.vectors.max_k == 4096
        with pg.transaction():
            pg.vectors.create(DIMENSIONS)
            pg.vectors.insert([(1, _vector(1))])
        assert pg.vectors.kind == BYTEA_KIND and _column(pg) == "bytea"
        with pytest.raises(OperationalError, match="Expected 8 dimensions but received 4"):
            pg.vectors.insert([(2, _vector(2)[:16])])
    finally:
        pg.close()
