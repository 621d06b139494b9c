"""Entity focus in intent_search: the documents titled with the question's entity rise."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrove.retrieval.entity_focus import (
    FOCUS_MIN,
    FOCUS_SHARE,
    PROTECTED,
    apply_focus,
    focus_names,
)
from memtrove.vault import Vault
from tests.conftest import write


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("What books has Priya read?", ["Priya"]),
        ("What do Melanie's kids like?", ["Melanie"]),
        ("Where did Jon and Gina meet?", ["Jon", "Gina"]),
        ("What did I say about Postgres?", ["Postgres"]),
        ("When is the launch?", []),
        ("how does the upload flow work", []),
        ("Who? What? Why?", []),
    ],
)
def test_names_are_the_capitalised_words_that_are_not_question_words(
    query: str, names: list[str]
) -> None:
    assert focus_names(query) == names


def test_the_top_results_keep_their_places_and_weak_ones_get_nothing() -> None:
    fused = [(doc, 1.0 - doc / 20) for doc in range(1, 16)]  # 0.95 .. 0.25
    focus = [(14, 1.0), (9, 1.0), (2, 1.0)]
    boosted = apply_focus(fused, focus)
    assert boosted[:PROTECTED] == fused[:PROTECTED]  # 2 is protected, not moved
    ranks = [doc for doc, _ in boosted]
    assert ranks.index(9) == PROTECTED  # 0.55 + 0.3 > the rest, capped under the head
    assert dict(boosted)[9] == fused[PROTECTED - 1][1]
    assert dict(fused)[14] < FOCUS_MIN and dict(boosted)[14] == dict(fused)[14]
    assert sorted(boosted) == sorted(boosted, key=lambda pair: pair[0])  # nothing lost
    assert len(boosted) == len(fused) and FOCUS_SHARE > 0
    assert apply_focus([], focus) == []


TURNS = [
    ("Tomas", "What books do you like to read? I keep a shelf of books for the kids."),
    ("Tomas", "Any good books lately? I am hunting for books about sailing and books on boats."),
    ("Tomas", "I read two books on the train, both about boats."),
    ("Tomas", "My book club picked three books this month, all mysteries."),
    ("Tomas", "Books, books, books: the library sale had so many books."),
    ("Tomas", "Do you think audio books count as reading books?"),
    ("Priya", "I loved reading Dune as a kid, and I reread it every winter."),
    ("Priya", "The garden is finally blooming after the rain."),
    ("Priya", "We went camping at the lake last weekend."),
    ("Tomas", "The lake sounds lovely, was the water cold?"),
    ("Priya", "Work has been busy with the new release."),
    ("Tomas", "My kids started piano lessons."),
    *(
        ("Priya", text)
        for text in (
            "The weather turned warm today.",
            "I fixed the bike chain this morning.",
            "Lunch was a big salad with beans.",
            "We painted the fence blue.",
            "My sister visits next month.",
            "The cat knocked over a plant.",
            "I started running again on Sundays.",
            "Our team shipped the mobile app.",
        )
    ),
]
# Priya speaks in more than half the turns, so her name alone tells the keyword search
# nothing (as in a long two-person conversation)


@pytest.fixture
def turns_vault(tmp_path: Path) -> Iterator[Vault]:
    folder = tmp_path / "chat"
    for number, (speaker, text) in enumerate(TURNS):
        write(
            folder,
            f"t{number:02d}.md",
            f"---\ntitle: {speaker}, 3 May 2025\ncontent_type: conversation\n"
            f"authored_at: 2025-05-03T10:{number:02d}:00Z\n---\n{speaker}: {text}\n",
        )
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "c") as vault:
        vault.add_collection(folder, name="chat")
        vault.update()
        vault.embed()
        yield vault


def _rank(results: object, path: str) -> int:
    paths = [result.path for result in results]  # type: ignore[attr-defined]
    return paths.index(path) if path in paths else len(paths)


def test_the_named_speakers_own_turn_rises_above_others_asking_about_it(
    turns_vault: Vault,
) -> None:
    question = "What books has Priya read?"
    focused = turns_vault.intent.intent_search(question, limit=12, force_intent="ENTITY")
    assert "entity focus" in focused.stages
    plain = turns_vault.hybrid(question, limit=12)
    assert _rank(focused, "t06.md") < _rank(plain, "t06.md")
    assert _rank(focused, "t06.md") <= PROTECTED


def test_no_title_names_the_entity_changes_nothing(turns_vault: Vault) -> None:
    found = turns_vault.intent.intent_search("What books has Oskar read?", force_intent="ENTITY")
    assert "entity focus" not in found.stages
    assert "entity focus" in found.skipped
    other = turns_vault.intent.intent_search("What books has Oskar read?", force_intent="WHAT")
    assert [r.path for r in found] == [r.path for r in other]
