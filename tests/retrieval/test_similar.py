"""find_similar: neighbours by the reference document's own vectors, itself excluded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memtrove import DocumentNotFoundError, EmbeddingSpaceError, InvalidQueryError, Vault
from memtrove.retrieval.similar import similar_documents
from memtrove.retrieval.vector_matrix import VectorMatrix
from tests.conftest import RESULT_FIELDS, write

CORPUS = {
    "wal.md": "# SQLite WAL\n\nWrite-ahead logging lets SQLite readers continue while a writer "
    "appends to the log; checkpoints move pages back into the database file.\n",
    "locks.md": "# SQLite locking\n\nSQLite readers take shared locks; a writer takes a reserved "
    "lock, then an exclusive lock to write pages into the database file.\n",
    "bread.md": "# Banana bread\n\nMash ripe bananas, fold in flour, sugar and butter, then bake "
    "the loaf for an hour.\n",
    "cake.md": "# Carrot cake\n\nGrate carrots, mix flour, sugar and eggs, bake the cake and "
    "top it with cream cheese frosting.\n",
    "garden.md": "# Tomatoes\n\nWater the tomato plants at dawn and add compost to the beds.\n",
}


@pytest.fixture
def embedded(vault: Vault, notes: Path) -> Vault:
    for path, text in CORPUS.items():
        write(notes, path, text)
    vault.add_collection(notes, name="notes")
    vault.update()
    vault.embed()
    return vault


def test_similar_documents_rank_by_topic_and_exclude_the_reference(embedded: Vault) -> None:
    results = embedded.retrieval.find_similar("notes/wal.md")
    assert results.stages == ["vector"]
    paths = [r.path for r in results]
    assert "wal.md" not in paths
    assert paths[0] == "locks.md"
    assert set(paths) == set(CORPUS) - {"wal.md"}
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    assert all(0 <= r.score <= 1 for r in results)
    assert set(results[0].to_dict()) == RESULT_FIELDS and results[0].snippet
    baking = [r.path for r in embedded.retrieval.find_similar("notes/bread.md", limit=1)]
    assert baking == ["cake.md"]


def test_limit_references_and_inactive_documents(embedded: Vault) -> None:
    docid = embedded.get("notes/wal.md").docid
    assert len(embedded.retrieval.find_similar("#" + docid, limit=2)) == 2
    assert len(embedded.retrieval.find_similar(docid, limit=100)) == 4
    embedded.curation.forget("notes/locks.md")
    assert "locks.md" not in [r.path for r in embedded.retrieval.find_similar("notes/wal.md")]
    with pytest.raises(DocumentNotFoundError):
        embedded.retrieval.find_similar("notes/locks.md")  # forgotten documents are not references
    with pytest.raises(DocumentNotFoundError):
        embedded.retrieval.find_similar("notes/nope.md")
    with pytest.raises(InvalidQueryError):
        embedded.retrieval.find_similar("notes/wal.md", limit=0)


def test_identical_copies_are_similar(embedded: Vault, notes: Path) -> None:
    write(notes, "copy/wal.md", CORPUS["wal.md"])
    embedded.update()
    embedded.embed()
    results = embedded.retrieval.find_similar("notes/wal.md", limit=2)
    assert results[0].path == "copy/wal.md" and results[0].score == pytest.approx(1.0, abs=1e-4)


def test_matrix_and_sqlite_vec_agree(embedded: Vault) -> None:
    connection = embedded._connection
    document = embedded.get("notes/bread.md")
    in_memory = similar_documents(connection, document, 4, VectorMatrix())
    direct = similar_documents(connection, document, 4, None)
    assert [hit.doc_id for hit in in_memory] == [hit.doc_id for hit in direct]
    assert np.allclose([h.score for h in in_memory], [h.score for h in direct], atol=1e-5)


def test_no_vectors_is_a_clear_error(vault: Vault, notes: Path) -> None:
    write(notes, "a.md", CORPUS["wal.md"])
    vault.add_collection(notes, name="notes")
    vault.update()
    with pytest.raises(EmbeddingSpaceError, match="memtrove embed"):
        vault.retrieval.find_similar("notes/a.md")


def test_a_document_not_embedded_yet_is_a_clear_error(embedded: Vault, notes: Path) -> None:
    write(notes, "new.md", "# New\n\nA note written after the last embed run.\n")
    embedded.update()
    with pytest.raises(EmbeddingSpaceError, match=r"notes/new\.md has no vectors yet"):
        embedded.retrieval.find_similar("notes/new.md")
    embedded.embed()
    assert embedded.retrieval.find_similar("notes/new.md")


@pytest.mark.parametrize("query", ["", "   ", "\n\t", "\n", " \r\n "])
def test_a_query_that_points_nowhere_finds_nothing(embedded: Vault, query: str) -> None:
    """A blank query asks for nothing. Its vector is zero (every cosine would tie at 0: the
    hybrid pipelines returned the whole vault in path order) or, for a lone newline or tab,
    the vector of a whitespace token (the hybrid scale made its nearest note score 1.0)."""
    assert list(embedded.vsearch(query)) == []
    assert list(embedded.hybrid(query)) == []
    assert list(embedded.query(query)) == []
    assert list(embedded.intent.intent_search(query)) == []
    assert next(r.path for r in embedded.query("tomato compost")) == "garden.md"


def test_a_zero_query_vector_finds_nothing(embedded: Vault) -> None:
    from memtrove.retrieval.vectors import search_vectors

    dimension = len(embedded._retriever.embed_query("bread"))
    zero = np.zeros(dimension, dtype=np.float32)
    assert search_vectors(embedded._connection, zero, 5) == []
    assert search_vectors(embedded._connection, zero + np.nan, 5) == []
