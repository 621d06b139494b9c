"""find_target's cascade: exact reference or path, BM25, title words, vectors; confidence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtrove import InvalidQueryError, SearchResult, Vault
from memtrove.results import SearchResults
from memtrove.retrieval.target import _judge
from tests.conftest import write


@pytest.fixture
def notes_vault(vault: Vault, tmp_path: Path) -> Vault:
    work, home = tmp_path / "work", tmp_path / "home"
    write(work, "decisions/jwt.md", "# JWT refresh tokens\n\nRotate refresh tokens on use.\n")
    write(work, "wal.md", "# SQLite WAL\n\nWrite-ahead logging keeps readers going.\n")
    write(work, "README.md", "# Work readme\n\nHow this folder is organised.\n")
    write(home, "README.md", "# Home readme\n\nRecipes and garden notes.\n")
    write(home, "bread.md", "# Banana bread\n\nMash bananas, add flour, bake.\n")
    vault.add_collection(work, name="work")
    vault.add_collection(home, name="home")
    vault.update()
    return vault


def result(score: float) -> SearchResult:
    return SearchResult("abcdef", "c", "p.md", "T", score, "", "note", "2026-01-01T00:00:00Z")


@pytest.mark.parametrize(
    ("scores", "confident"),
    [
        ([0.7], True),
        ([0.69, 0.68], False),
        ([0.71, 0.7], False),  # a high top score alone is not enough: two near-equal notes
        ([0.9, 0.85], True),  # a high top score with a small lead is
        ([0.5, 0.3], True),  # a clear gap is enough
        ([0.5, 0.31], False),
        ([0.2], True),  # a lone candidate leads by its whole score
        ([0.19], False),
    ],
)
def test_confidence_rule(scores: list[float], confident: bool) -> None:
    match = _judge(SearchResults(result(score) for score in scores), "bm25")
    assert match.confident is confident
    assert match.target is not None and match.target.score == scores[0]


def test_exact_references_are_confident(notes_vault: Vault) -> None:
    document = notes_vault.get("work/decisions/jwt.md")
    for reference in (
        "work/decisions/jwt.md",
        "memtrove://work/decisions/jwt.md",
        "#" + document.docid,
        document.docid,
        "decisions/jwt.md",  # a path without its collection
        "jwt.md",  # the tail of a path
        "  jwt.md  ",
    ):
        match = notes_vault.curation.find_target(reference)
        assert (match.method, match.confident) == ("exact", True), reference
        assert match.target is not None and match.target.path == "decisions/jwt.md"
        assert match.target.score == 1.0 and len(match.candidates) == 1


def test_a_path_several_documents_share_is_not_confident(notes_vault: Vault) -> None:
    match = notes_vault.curation.find_target("README.md")
    assert not match.confident
    assert match.method == "exact"
    assert [(c.collection, c.path) for c in match.candidates] == [
        ("home", "README.md"), ("work", "README.md")
    ]  # fmt: skip


def test_words_find_the_document_by_bm25(notes_vault: Vault) -> None:
    match = notes_vault.curation.find_target("rotate refresh tokens")
    assert match.method == "bm25" and match.confident
    assert match.target is not None and match.target.path == "decisions/jwt.md"
    assert match.candidates[0] == match.target
    data = json.loads(json.dumps(match.to_dict()))
    assert set(data) == {"target", "confident", "candidates", "method"}
    assert data["target"]["path"] == "decisions/jwt.md"


def test_title_words_when_keywords_are_not_confident(notes_vault: Vault) -> None:
    # "readme" is in both readmes (BM25 cannot choose); the titles tell them apart
    match = notes_vault.curation.find_target("home readme")
    assert match.method == "title" and match.confident
    assert match.target is not None and match.target.collection == "home"
    assert [c.collection for c in match.candidates] == ["home", "work"]


def test_vectors_are_the_last_step(notes_vault: Vault) -> None:
    # no word of these queries is in any document: only vectors can place them
    assert notes_vault.curation.find_target("database journal").method == "none"  # no vectors yet
    notes_vault.embed()
    for query, path in (("database journal", "wal.md"), ("dessert oven loaf", "bread.md")):
        match = notes_vault.curation.find_target(query)
        assert match.method == "vector"
        assert match.target is not None and match.target.path == path
        assert all(0 <= c.score <= 1 for c in match.candidates)


def test_nothing_found(notes_vault: Vault) -> None:
    match = notes_vault.curation.find_target("qwertyuiop zxcvbnm")
    assert match.to_dict() == {
        "target": None,
        "confident": False,
        "candidates": [],
        "method": "none",
    }


def test_inactive_documents_are_never_targets(notes_vault: Vault) -> None:
    notes_vault.curation.forget("work/decisions/jwt.md")
    match = notes_vault.curation.find_target("work/decisions/jwt.md")
    assert match.method != "exact"
    assert all(c.path != "decisions/jwt.md" for c in match.candidates)
    assert all(
        c.path != "decisions/jwt.md" for c in notes_vault.curation.find_target("refresh").candidates
    )


@pytest.mark.parametrize("query", ["", "   ", None])
def test_empty_queries_are_refused(notes_vault: Vault, query: str | None) -> None:
    with pytest.raises(InvalidQueryError):
        notes_vault.curation.find_target(query)  # type: ignore[arg-type]
