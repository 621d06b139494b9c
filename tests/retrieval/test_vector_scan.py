"""A process's first vector search scans sqlite-vec's chunks instead of loading the matrix:
the same neighbours as the matrix and as sqlite-vec's own KNN, and the matrix is loaded
from the second search on."""

from __future__ import annotations

from pathlib import Path

from memtrove import Vault
from memtrove.retrieval.vector_matrix import VectorMatrix, scan_nearest
from memtrove.retrieval.vectors import vector_count

QUERIES = ("how do we rotate refresh tokens", "sqlite write-ahead logging", "deploy on friday")


def test_the_scan_finds_what_the_matrix_and_sqlite_vec_find(
    example_copy: Path, tmp_path: Path
) -> None:
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "config") as vault:
        vault.add_collection(example_copy, name="example")
        vault.update()
        vault.embed()
        connection = vault._connection
        total = vector_count(connection)
        matrix = VectorMatrix()
        assert total > 100 and matrix.ready(connection)
        for query in QUERIES:
            vector = vault._retriever.embed_query(query)
            scanned = scan_nearest(connection, vector, 20, total)
            assert scanned is not None and len(scanned) == 20
            assert [r for r, _ in scanned] == [r for r, _ in matrix.nearest(vector, 20)]
            knn = connection.execute(
                "SELECT rowid, 1.0 - distance FROM vectors_vec WHERE embedding MATCH ? AND k = 20",
                (vector.tobytes(),),
            ).fetchall()
            assert {r for r, _ in scanned[:10]} == {int(r) for r, _ in knn[:10]}
            for (_, mine), (_, theirs) in zip(scanned, knn, strict=True):
                assert abs(mine - float(theirs)) < 1e-4
        assert scan_nearest(connection, vector, 5, total + 1) is None  # rows do not add up


def test_the_first_search_scans_and_the_second_loads(example_copy: Path, tmp_path: Path) -> None:
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "config") as vault:
        vault.add_collection(example_copy, name="example")
        vault.update()
        vault.embed()
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "config") as vault:
        first = vault.vsearch(QUERIES[0], limit=5)
        assert vault._retriever.matrix.size == 0  # answered by a scan
        second = vault.vsearch(QUERIES[0], limit=5)
        assert vault._retriever.matrix.size > 100  # loaded for the searches to come
        assert [(r.path, round(r.score, 5)) for r in first] == [
            (r.path, round(r.score, 5)) for r in second
        ]
