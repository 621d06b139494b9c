from __future__ import annotations

from pathlib import Path

from memtrove import Vault
from memtrove.retrieval.fts import MAX_SELECTED_TERMS, parse_query, select_terms
from tests.conftest import write


def test_common_and_unknown_terms_are_dropped_rare_ones_kept(vault: Vault, notes: Path) -> None:
    for index in range(20):
        extra = " pangolin" if index == 3 else ""
        write(notes, f"n{index}.md", f"# Note {index}\n\nshared deployment words{extra}")
    vault.add_collection(notes, name="notes")
    vault.update()
    parsed = parse_query("deployment pangolin zzzunknownzzz shared")
    kept = select_terms(vault._connection, parsed)
    assert kept.terms == ("pangolin",)
    # the ranking is the same with and without the dropped words
    assert [r.path for r in vault.search("deployment pangolin zzzunknownzzz shared")] == ["n3.md"]
    # only common words: the search still runs on the least common of them
    assert select_terms(vault._connection, parse_query("shared deployment")).terms
    assert vault.search("shared deployment")


def test_long_prompt_keeps_a_bounded_number_of_terms(vault: Vault, notes: Path) -> None:
    words = [f"rareword{chr(97 + i)}{chr(97 + j)}" for i in range(6) for j in range(6)]
    for index, word in enumerate(words):
        write(notes, f"n{index}.md", f"# Note\n\n{word} filler text")
    vault.add_collection(notes, name="notes")
    vault.update()
    prompt = " ".join(words) + " " + "filler text " * 500
    kept = select_terms(vault._connection, parse_query(prompt))
    assert 0 < len(kept.terms) <= MAX_SELECTED_TERMS
    assert "filler" not in kept.terms
    assert len(vault.search(prompt, limit=50)) == len(kept.terms)


def test_short_prefix_searches_as_a_word() -> None:
    assert parse_query("ro* loop").terms == ("ro", "loop")
    assert parse_query("ro*").prefixes == ()
    assert parse_query("rou*").prefixes == ("rou",)


def test_document_count_is_the_number_of_searchable_documents(vault: Vault, notes: Path) -> None:
    from memtrove.retrieval.fts import _document_count

    for index in range(5):
        write(notes, f"n{index}.md", f"# Note {index}\n\nbody")
    vault.add_collection(notes, name="notes")
    vault.update()
    (notes / "n0.md").unlink()
    vault.update()
    assert _document_count(vault._connection) == 4
