"""Document centroids for A-MEM links: the mean of each body's fragment vectors, and the
nearest neighbours among them, checked against a plain computation of the same."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memtrove import Vault
from memtrove.graph.amem_vectors import Centroids
from tests.conftest import write

NOTES = {
    "wal.md": "# SQLite WAL\n\nWrite-ahead logging lets readers continue while a writer "
    "appends.\n\n## Checkpoints\n\nCheckpoints move pages back into the database file.\n",
    "locks.md": "# SQLite locking\n\nReaders take shared locks; a writer takes a reserved lock.\n",
    "copy.md": "# SQLite locking\n\nReaders take shared locks; a writer takes a reserved lock.\n",
    "bread.md": "# Banana bread\n\nMash ripe bananas, fold in flour and bake for an hour.\n\n"
    "- bananas\n- flour\n- butter\n",
    "garden.md": "# Tomatoes\n\nWater the tomato plants at dawn and add compost.\n",
}


def brute_force(
    ids: np.ndarray, matrix: np.ndarray, doc_id: int, k: int, floor: float
) -> list[tuple[int, float]]:
    row = int(np.flatnonzero(ids == doc_id)[0])
    # each cosine alone, in float64: equal vectors give equal cosines
    scores = [
        float(np.dot(other.astype(np.float64), matrix[row].astype(np.float64))) for other in matrix
    ]
    pairs = [
        (int(other), float(score))
        for other, score in zip(ids, scores, strict=True)
        if int(other) != doc_id and score >= floor
    ]
    return sorted(pairs, key=lambda pair: (-pair[1], pair[0]))[:k]


def test_centroids_are_the_normalised_mean_of_each_active_bodys_vectors(
    vault: Vault, notes: Path
) -> None:
    for path, text in NOTES.items():
        write(notes, path, text)
    vault.add_collection(notes, name="notes")
    vault.update()
    vault.embed()
    garden = vault.get("notes/garden.md").doc_id
    vault.curation.forget("notes/garden.md")
    connection = vault._connection
    centroids = Centroids(connection)

    expected: dict[int, np.ndarray] = {}
    for doc_id, body_hash in connection.execute(
        "SELECT id, hash FROM documents WHERE active = 1"
    ).fetchall():
        blobs = connection.vectors.body_embeddings(body_hash)
        total = np.sum([np.frombuffer(blob, dtype=np.float32) for blob in blobs], axis=0)
        expected[int(doc_id)] = total / np.linalg.norm(total)
    assert garden not in centroids.row and len(expected) == 4
    assert sorted(centroids.row) == sorted(expected)
    for doc_id, vector in expected.items():
        assert np.allclose(centroids.matrix[centroids.row[doc_id]], vector, atol=1e-6)
    # two documents with one body share its centroid: each other's nearest, at cosine 1
    locks, copy = vault.get("notes/locks.md").doc_id, vault.get("notes/copy.md").doc_id
    near = centroids.neighbours([locks, copy], 5, 0.0)
    assert near[locks][0][0] == copy and near[copy][0][0] == locks
    assert near[locks][0][1] == pytest.approx(1.0, abs=1e-5)


def test_a_vault_without_vectors_has_no_centroids(vault: Vault, notes: Path) -> None:
    write(notes, "a.md", "# A\n\nSome words about nothing in particular.\n")
    vault.add_collection(notes, name="notes")
    vault.update()
    centroids = Centroids(vault._connection)
    assert len(centroids.ids) == 0 and centroids.neighbours([1], 5, 0.0) == {}


@pytest.mark.parametrize(
    ("documents", "width", "k", "floor", "copies"),
    [
        (900, 32, 5, 0.0, 0),  # wide enough for the column-group bound
        (900, 32, 5, 0.2, 300),  # many equal cosines (shared bodies): ties go by id
        (300, 16, 10, 0.1, 0),
        (40, 8, 5, 0.0, 10),  # too few columns for groups: the floor alone
        (900, 32, 70, 0.0, 0),  # k past the number of groups
        (900, 32, 5, 0.99, 0),  # almost nothing passes the floor
    ],
)
def test_neighbours_match_a_full_sort(
    documents: int, width: int, k: int, floor: float, copies: int
) -> None:
    generator = np.random.default_rng(documents + width + k + copies)
    # Anisotropic like averaged word vectors: a shared direction plus noise.
    matrix = generator.normal(size=(documents, width)).astype(np.float32) + 2.5
    matrix[documents - copies :] = matrix[:copies]
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    ids = generator.permutation(np.arange(10, 10 + documents * 3, 3)).astype(np.int64)
    centroids = Centroids.__new__(Centroids)
    centroids.ids, centroids.matrix = ids, np.ascontiguousarray(matrix)
    centroids.row = {int(doc_id): n for n, doc_id in enumerate(ids)}
    asked = [int(doc_id) for doc_id in ids[::7]] + [999_999]  # and an unknown document
    found = centroids.neighbours(asked, k, floor)
    assert 999_999 not in found
    for doc_id in asked[:-1]:
        expected = brute_force(ids, matrix, doc_id, k, floor)
        assert [other for other, _ in found[doc_id]] == [other for other, _ in expected]
        assert np.allclose([c for _, c in found[doc_id]], [c for _, c in expected], atol=1e-6)
