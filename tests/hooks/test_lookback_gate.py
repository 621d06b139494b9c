"""Lookback joins a prior only on the same thread (hooks.lookback)."""

from __future__ import annotations

import pytest

from memtrove.hooks.lookback import is_follow_up, lookback_queries, salient_terms, select_priors

FIRST = "How does the thumbnail worker decode HEIC uploads?"


@pytest.mark.parametrize(
    "prompt",
    [
        "and what about AVIF?",
        "why not do that at upload time instead?",
        "do the same for the billing service",
        "what about the tests?",
        "It still fails",
        "ok, and then?",
    ],
)
def test_follow_ups(prompt: str) -> None:
    assert is_follow_up(prompt)


@pytest.mark.parametrize(
    "prompt",
    [
        "How are refresh tokens rotated on the mobile client?",
        "When did Caroline go to the LGBTQ support group?",
        "Which image decoders does the thumbnail worker use?",
    ],
)
def test_questions_that_stand_alone(prompt: str) -> None:
    assert not is_follow_up(prompt)


def test_salient_terms_are_stemmed_content_words() -> None:
    assert salient_terms("Why did the workers decode it?") == {"worker", "decod"}
    assert salient_terms("the 2024 of it") == frozenset()


def test_a_follow_up_borrows_the_thread() -> None:
    assert select_priors("and what about AVIF?", [FIRST]) == [FIRST]
    query, thread = lookback_queries("and what about AVIF?", [FIRST])
    assert query == f"and what about AVIF?\n\n{FIRST}" and thread is None


def test_a_related_question_searches_itself_first() -> None:
    current = "Which thumbnail sizes does the worker produce?"
    query, thread = lookback_queries(current, [FIRST])
    assert query == current
    assert thread == f"{current}\n\n{FIRST}"


def test_an_unrelated_question_borrows_nothing() -> None:
    current = "How are refresh tokens rotated on the mobile client?"
    assert select_priors(current, [FIRST]) == []
    assert lookback_queries(current, [FIRST]) == (current, None)


def test_the_walk_back_stops_at_the_first_break() -> None:
    older = "Which payment provider handles refunds?"
    newer = "What about the worker memory limit?"  # a follow-up of FIRST, not of older
    # The current prompt follows newer; newer follows only what came right before it.
    priors = select_priors("and the thumbnail worker cache?", [newer, FIRST, older])
    assert priors == [newer, FIRST]
    unrelated_chain = select_priors("and the thumbnail worker cache?", [older, FIRST])
    assert unrelated_chain == [older]  # a follow-up takes its prior; older leads nowhere
