"""Questions about time: pure recency versus a named topic (retrieval.recency)."""

from __future__ import annotations

import pytest

from memtrove.retrieval.recency import TOPICAL_RECENCY_WEIGHTS, has_topic, recency_plan
from memtrove.retrieval.scoring import RECENCY_FIRST_TYPES, RECENCY_WEIGHTS


@pytest.mark.parametrize(
    "query",
    [
        "where were we?",
        "what was I doing last session?",
        "continue from last time",
        "pick up where we left off",
        "what did we do yesterday?",
        "what's the latest?",
    ],
)
def test_pure_recency_ranks_by_time(query: str) -> None:
    plan = recency_plan(query)
    assert plan is not None and plan.pure
    assert plan.weights == RECENCY_WEIGHTS
    assert plan.first_types == RECENCY_FIRST_TYPES
    assert plan.recent_candidates


@pytest.mark.parametrize(
    "query",
    [
        "where were we?",
        "continue from last time",
        "pick up where we left off",
        "what was I working on last session",
    ],
)
def test_picking_up_the_last_session_puts_handoffs_first(query: str) -> None:
    plan = recency_plan(query)
    assert plan is not None and plan.lead_types == ("handoff",)


@pytest.mark.parametrize(
    "query",
    [
        "what did we change recently in the deploy pipeline?",
        "latest status of the storage migration",
        "what cache do we use for the feed now?",
        "what is our current thumbnail encoding format?",
        "where did we leave off on the album sharing links?",
        "which job queue did we settle on for thumbnails",
    ],
)
def test_a_named_topic_keeps_relevance_in_the_blend(query: str) -> None:
    plan = recency_plan(query)
    assert plan is not None and not plan.pure
    assert plan.weights == TOPICAL_RECENCY_WEIGHTS and plan.weights.blend
    assert plan.first_types == () and plan.lead_types == ()


@pytest.mark.parametrize(
    "query",
    [
        "how does the upload resume work?",
        "why did we pick Postgres for metadata",
        "refresh token rotation",
        "",
    ],
)
def test_other_questions_have_no_plan(query: str) -> None:
    assert recency_plan(query) is None


def test_has_topic() -> None:
    assert not has_topic("what were we doing recently?")
    assert not has_topic("what changed?")
    assert has_topic("what changed in billing?")
    assert has_topic("latest Kubernetes upgrade")
