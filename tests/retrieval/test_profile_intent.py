"""Canonical memories lifted x1.14 for questions about the user (composite scoring rule 5)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.retrieval.scoring import (
    CANONICAL_BOOST,
    DEFAULT_WEIGHTS,
    QUERY_WEIGHTS,
    RECENCY_WEIGHTS,
    ScoringInput,
    composite_score,
    has_profile_intent,
)
from tests.conftest import write

NOW = datetime(2026, 6, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "about_user"),
    [
        ("who am I?", True),
        ("what do I usually prefer for tests?", True),
        ("which editor would I use", True),
        ("remind me of my preferences for commit messages", True),
        ("what is my setup for the build", True),
        ("what do you know about me", True),
        ("what does the user prefer", True),
        ("how do I usually name branches", True),
        ("why did the thumbnail worker run out of memory?", False),
        ("What did Caroline research for her career?", False),
        ("which database do we use", False),
        ("preferences of the team for code review", False),
    ],
)
def test_profile_intent(query: str, about_user: bool) -> None:
    assert has_profile_intent(query) is about_user


@pytest.mark.parametrize("weights", [DEFAULT_WEIGHTS, QUERY_WEIGHTS, RECENCY_WEIGHTS])
def test_canonical_memories_are_lifted_only_for_questions_about_the_user(weights: object) -> None:
    for content_type, lifted in (("preference", True), ("memory", True), ("note", False),
                                 ("decision", False), ("hub", False)):  # fmt: skip
        item = ScoringInput(key=1, search_score=0.5, content_type=content_type, effective_at=NOW)
        plain = composite_score(item, weights, NOW, scale=1.0)  # type: ignore[arg-type]
        asked = composite_score(item, weights, NOW, scale=1.0, profile_intent=True)  # type: ignore[arg-type]
        assert asked == pytest.approx(min(1.0, plain * CANONICAL_BOOST) if lifted else plain)


def test_the_lift_never_passes_the_scale() -> None:
    item = ScoringInput(key=1, search_score=1.0, content_type="preference", quality_score=1.0)
    for scale in (0.3, 1.0):
        asked = composite_score(item, DEFAULT_WEIGHTS, NOW, scale=scale, profile_intent=True)
        assert composite_score(item, DEFAULT_WEIGHTS, NOW, scale=scale) <= asked <= scale


def test_the_query_pipeline_lifts_a_preference_for_a_question_about_the_user(
    vault: Vault, notes: Path
) -> None:
    text = "Indentation in the editor: four spaces, never tabs, and a ruler at 100 columns.\n"
    write(
        notes,
        "prefs/indentation.md",
        f"---\ncontent_type: preference\n---\n# Indentation\n\n{text}",
    )
    write(notes, "notes/indentation.md", f"---\ncontent_type: note\n---\n# Indentation\n\n{text}")
    vault.add_collection(notes, name="n")
    vault.update()

    def ratio(query: str) -> float:
        scores = {r.path: r.score for r in vault.query(query, limit=5)}
        return scores["prefs/indentation.md"] / scores["notes/indentation.md"]

    neutral = ratio("indentation in the editor spaces tabs ruler")
    about_user = ratio("would I use indentation in the editor spaces tabs ruler")
    assert about_user > neutral * 1.05
