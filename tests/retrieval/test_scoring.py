from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memtrove.index.classify import CONTENT_TYPES
from memtrove.retrieval.scoring import (
    DEFAULT_WEIGHTS,
    HALF_LIFE_DAYS,
    MODIFIER_BOUND,
    QUERY_WEIGHTS,
    RECENCY_FIRST_TYPES,
    RECENCY_WEIGHTS,
    SNOOZED_FACTOR,
    SUPERSEDED_FACTOR,
    ScoringInput,
    Weights,
    age_score,
    apply_composite,
    choose_weights,
    co_activation_boost,
    composite_score,
    confidence_score,
    frequency_boost,
    half_life_stretch,
    has_recency_intent,
    length_penalty,
    quality_multiplier,
    recency_score,
)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
MAX_MULTIPLIER = 1.0 + MODIFIER_BOUND  # a topical score is divided by it


def days_ago(days: float) -> datetime:
    return NOW - timedelta(days=days)


# ---------------------------------------------------------------- weights and intent


def test_weight_tables() -> None:
    assert Weights(0.5, 0.25, 0.25) == DEFAULT_WEIGHTS
    assert Weights(0.70, 0.15, 0.15) == QUERY_WEIGHTS
    assert Weights(0.10, 0.70, 0.20, blend=True) == RECENCY_WEIGHTS
    assert RECENCY_FIRST_TYPES == ("handoff", "decision", "progress")


@pytest.mark.parametrize("bad", [-0.1, math.nan, math.inf])
def test_weights_must_be_finite_and_non_negative(bad: float) -> None:
    with pytest.raises(ValueError):
        Weights(bad, 0.5, 0.5)


@pytest.mark.parametrize(
    "query",
    [
        "what did I do recently",
        "Recent changes to auth",
        "the LATEST deploy notes",
        "summary of the last session",
        "what happened last   time",
        "yesterday's standup",
        "plan for today",
        "continue the migration",
        "where were we?",
        "where was I with the parser",
        "pick up where we left off",
        "what was I working on",
    ],
)
def test_recency_intent_is_detected(query: str) -> None:
    assert has_recency_intent(query)
    assert choose_weights(query, QUERY_WEIGHTS) is RECENCY_WEIGHTS


@pytest.mark.parametrize(
    "query",
    ["", "auth token refresh", "recentness bias", "continued fractions", "the last word", "lates"],
)
def test_recency_intent_needs_whole_words(query: str) -> None:
    assert not has_recency_intent(query)
    assert choose_weights(query, QUERY_WEIGHTS) is QUERY_WEIGHTS
    assert choose_weights(query) is DEFAULT_WEIGHTS


# ---------------------------------------------------------------- recency


def test_half_life_table() -> None:
    assert HALF_LIFE_DAYS["handoff"] == 30
    assert HALF_LIFE_DAYS["progress"] == HALF_LIFE_DAYS["conversation"] == 45
    assert HALF_LIFE_DAYS["note"] == HALF_LIFE_DAYS["problem"] == HALF_LIFE_DAYS["milestone"] == 60
    assert HALF_LIFE_DAYS["research"] == 90
    assert HALF_LIFE_DAYS["project"] == 120
    for durable in ("decision", "preference", "hub", "deductive", "antipattern"):
        assert HALF_LIFE_DAYS[durable] is None
    assert set(HALF_LIFE_DAYS) == set(CONTENT_TYPES)


@pytest.mark.parametrize(
    ("content_type", "age", "expected"),
    [
        ("handoff", 30, 0.5),
        ("handoff", 60, 0.25),
        ("progress", 45, 0.5),
        ("note", 60, 0.5),
        ("research", 180, 0.25),
        ("project", 120, 0.5),
        ("decision", 3650, 1.0),
        ("preference", 3650, 1.0),
        ("antipattern", 3650, 1.0),
        ("unknown-type", 60, 0.5),
        ("note", 0, 1.0),
        ("note", -5, 1.0),
    ],
)
def test_recency_halves_per_half_life(content_type: str, age: float, expected: float) -> None:
    assert recency_score(days_ago(age), NOW, content_type) == pytest.approx(expected)


def test_handoff_exactly_thirty_days_old_scores_one_half() -> None:
    assert recency_score(days_ago(30), NOW, "handoff") == 0.5


def test_missing_date_counts_as_fresh() -> None:
    assert recency_score(None, NOW, "handoff") == 1.0


def test_naive_datetimes_are_utc() -> None:
    naive_now = NOW.replace(tzinfo=None)
    naive_then = days_ago(30).replace(tzinfo=None)
    assert recency_score(naive_then, naive_now, "handoff") == pytest.approx(0.5)
    assert recency_score(naive_then, NOW, "handoff") == pytest.approx(0.5)
    # Aware times in another zone are compared as instants.
    plus_two = timezone(timedelta(hours=2))
    assert recency_score(days_ago(30).astimezone(plus_two), NOW, "handoff") == pytest.approx(0.5)


def test_half_life_stretch() -> None:
    assert half_life_stretch(0, NOW, NOW) == 1.0
    assert half_life_stretch(10, None, NOW) == 1.0
    assert half_life_stretch(10, NOW, NOW) == pytest.approx(3.0)
    assert half_life_stretch(500, NOW, NOW) == pytest.approx(3.0)
    assert half_life_stretch(10, days_ago(45), NOW) == pytest.approx(2.0)
    assert half_life_stretch(10, days_ago(90), NOW) == 1.0
    assert half_life_stretch(10, days_ago(400), NOW) == 1.0
    assert half_life_stretch(1, NOW, NOW) == pytest.approx(1 + 2 * math.log(2) / math.log(11))
    assert half_life_stretch(10, NOW + timedelta(days=3), NOW) == pytest.approx(3.0)


def test_access_stretches_the_half_life_up_to_three_times() -> None:
    assert recency_score(days_ago(90), NOW, "handoff", 10, NOW) == pytest.approx(0.5)
    assert recency_score(days_ago(60), NOW, "handoff", 10, days_ago(45)) == pytest.approx(0.5)
    # Access does not matter for types that never decay.
    assert recency_score(days_ago(900), NOW, "hub", 10, NOW) == 1.0


# ---------------------------------------------------------------- confidence


def test_missing_confidence_uses_the_type_baseline() -> None:
    assert confidence_score(None, "decision", None, None, NOW) == 0.85
    assert confidence_score(None, "note", None, None, NOW) == 0.5
    assert confidence_score(math.nan, "hub", None, None, NOW) == 0.8


def test_attention_decay_is_five_percent_per_week() -> None:
    assert confidence_score(0.5, "note", days_ago(7), None, NOW) == pytest.approx(0.475)
    assert confidence_score(0.8, "handoff", days_ago(14), None, NOW) == pytest.approx(0.8 * 0.9025)
    # Never accessed: counted from the effective time instead.
    assert confidence_score(0.5, "progress", None, days_ago(7), NOW) == pytest.approx(0.475)
    # The last access wins over the effective time.
    assert confidence_score(0.5, "note", NOW, days_ago(700), NOW) == 0.5


def test_attention_decay_takes_at_most_half() -> None:
    assert confidence_score(0.6, "conversation", days_ago(7 * 70), None, NOW) == pytest.approx(0.3)
    assert confidence_score(0.6, "project", days_ago(5000), None, NOW) == pytest.approx(0.3)


@pytest.mark.parametrize(
    "content_type",
    ["decision", "deductive", "preference", "hub", "research", "antipattern", "problem"],
)
def test_durable_types_are_exempt_from_attention_decay(content_type: str) -> None:
    assert confidence_score(0.7, content_type, days_ago(365), days_ago(365), NOW) == 0.7


def test_confidence_edge_cases() -> None:
    assert confidence_score(1.7, "decision", None, None, NOW) == 1.0
    assert confidence_score(-0.2, "decision", None, None, NOW) == 0.0
    assert confidence_score(0.5, "note", None, None, NOW) == 0.5
    assert confidence_score(0.5, "note", NOW + timedelta(days=9), None, NOW) == 0.5
    assert confidence_score(0.5, "mystery", days_ago(7), None, NOW) == pytest.approx(0.475)


# ---------------------------------------------------------------- multipliers


def test_quality_multiplier() -> None:
    assert quality_multiplier(0.0) == pytest.approx(0.7)
    assert quality_multiplier(0.5) == pytest.approx(1.0)
    assert quality_multiplier(1.0) == pytest.approx(1.3)
    assert quality_multiplier(None) == pytest.approx(1.0)
    assert quality_multiplier(3.0) == pytest.approx(1.3)
    assert quality_multiplier(-1.0) == pytest.approx(0.7)


@pytest.mark.parametrize(
    ("length", "expected"),
    [(0, 1.0), (-5, 1.0), (200, 1.0), (500, 1.0), (1000, 1 / 1.5), (2000, 0.5), (8000, 1 / 3)],
)
def test_length_penalty(length: int, expected: float) -> None:
    assert length_penalty(length) == pytest.approx(expected)


def test_length_penalty_floor() -> None:
    assert length_penalty(10_000_000) == 0.3
    assert length_penalty(12_000) > 0.3


def test_frequency_boost() -> None:
    assert frequency_boost(1, 1) == 0.0
    assert frequency_boost(0, 0) == 0.0
    assert frequency_boost(2, 1) == pytest.approx(math.log(3) * 0.03)
    assert frequency_boost(1, 3) == pytest.approx(math.log(3) * 0.03)
    assert frequency_boost(3, 2) == pytest.approx(math.log(6) * 0.03)
    assert frequency_boost(100, 1) == 0.10
    assert frequency_boost(0, 3) == frequency_boost(1, 3)


def test_co_activation_boost() -> None:
    assert co_activation_boost(0) == 1.0
    assert co_activation_boost(1) == pytest.approx(1.1)
    assert co_activation_boost(2) == pytest.approx(1.15)
    assert co_activation_boost(1000) == pytest.approx(1.15)
    assert co_activation_boost(-4) == 1.0


# ---------------------------------------------------------------- composite


def item(**fields: object) -> ScoringInput[int]:
    defaults: dict[str, object] = {
        "key": 1,
        "search_score": 0.8,
        "content_type": "note",
        "effective_at": NOW,
        "quality_score": 0.5,
        "confidence": 0.5,
        "body_length": 500,
    }
    defaults.update(fields)
    return ScoringInput(**defaults)  # type: ignore[arg-type]


def test_a_neutral_topical_match_keeps_its_relevance() -> None:
    # Fresh note, baseline quality and confidence, 500 characters: the modifier is ~1.
    neutral = item(confidence=0.5, effective_at=NOW)
    trust = (0.25 * 1.0 + 0.25 * 0.5) / 0.5  # 0.75
    expected = 0.8 * (1 + 0.5 * 0.4 * (trust - 0.5)) / MAX_MULTIPLIER
    assert composite_score(neutral, DEFAULT_WEIGHTS, NOW) == pytest.approx(expected)
    # QUERY_WEIGHTS give trust less room: (1 - 0.7) instead of (1 - 0.5).
    assert composite_score(neutral, QUERY_WEIGHTS, NOW) == pytest.approx(
        0.8 * (1 + 0.3 * 0.4 * (trust - 0.5)) / MAX_MULTIPLIER
    )


def test_the_modifier_is_bounded() -> None:
    best = item(
        search_score=1.0, confidence=1.0, quality_score=1.0, revision_count=1000, body_length=10
    )
    assert composite_score(best, DEFAULT_WEIGHTS, NOW, co_activation=10) == pytest.approx(1.0)
    worst = item(
        search_score=1.0,
        confidence=0.0,
        quality_score=0.0,
        content_type="handoff",
        effective_at=days_ago(3000),
        body_length=10_000_000,
    )
    low = (1.0 - MODIFIER_BOUND) / MAX_MULTIPLIER
    assert composite_score(worst, DEFAULT_WEIGHTS, NOW) == pytest.approx(low)


def test_other_signals_never_bury_a_clearly_better_match() -> None:
    # Everything favours the weaker match, which has two thirds of the better one's
    # relevance: the better one still wins.
    better = item(
        key=1,
        search_score=1.0,
        content_type="handoff",
        effective_at=days_ago(400),
        confidence=0.0,
        quality_score=0.0,
        body_length=200_000,
    )
    weaker = item(
        key=2,
        search_score=0.66,
        content_type="preference",
        confidence=1.0,
        quality_score=1.0,
        body_length=300,
        revision_count=50,
        pinned=False,
    )
    ranked = apply_composite([weaker, better], DEFAULT_WEIGHTS, NOW, co_activation=lambda k: 9)
    assert [key for key, _ in ranked] == [1, 2]


def test_near_ties_are_ordered_by_the_other_signals() -> None:
    stale = item(key=1, search_score=1.0, content_type="note", effective_at=days_ago(365))
    fresh = item(key=2, search_score=0.95, content_type="note", effective_at=NOW)
    assert [key for key, _ in apply_composite([stale, fresh], DEFAULT_WEIGHTS, NOW)] == [2, 1]
    long = item(key=3, search_score=1.0, body_length=64_000)
    short = item(key=4, search_score=0.95, body_length=400)
    assert [key for key, _ in apply_composite([long, short], DEFAULT_WEIGHTS, NOW)] == [4, 3]


def test_relevance_is_normalised_against_the_best_candidate() -> None:
    items = [item(key=1, search_score=0.4), item(key=2, search_score=0.2)]
    ranked = dict(apply_composite(items, DEFAULT_WEIGHTS, NOW))
    # The best keeps its own score as the scale; the other gets its share of it.
    assert ranked[1] == pytest.approx(composite_score(items[0], DEFAULT_WEIGHTS, NOW))
    assert ranked[2] == pytest.approx(ranked[1] / 2)
    scaled = dict(apply_composite(items, DEFAULT_WEIGHTS, NOW, scale=1.0))
    assert scaled[1] == pytest.approx(ranked[1] / 0.4)


def test_questions_about_time_keep_the_weighted_sum() -> None:
    old = item(content_type="handoff", effective_at=days_ago(28), confidence=0.6, body_length=500)
    # age on one 14-day half-life for every type: 0.25; confidence decays from its date.
    confidence = 0.6 * 0.95 ** (28 / 7)
    expected = 0.1 * 0.8 + 0.7 * 0.25 + 0.2 * confidence
    assert composite_score(old, RECENCY_WEIGHTS, NOW) == pytest.approx(expected)
    # A slowly decaying type does not look fresh when the question is about time.
    decision = old._replace(content_type="decision", confidence=0.6)
    assert age_score(days_ago(28), NOW) == pytest.approx(0.25)
    assert composite_score(decision, RECENCY_WEIGHTS, NOW) == pytest.approx(
        0.1 * 0.8 + 0.7 * 0.25 + 0.2 * 0.6
    )


def test_age_score() -> None:
    assert age_score(None, NOW) == 0.5
    assert age_score(NOW + timedelta(days=3), NOW) == 1.0
    assert age_score(days_ago(14), NOW) == pytest.approx(0.5)


def test_pin_adds_point_three_of_the_scale() -> None:
    assert composite_score(item(pinned=True), DEFAULT_WEIGHTS, NOW) == pytest.approx(
        composite_score(item(), DEFAULT_WEIGHTS, NOW) + 0.3
    )
    assert composite_score(item(search_score=1.0, pinned=True), DEFAULT_WEIGHTS, NOW) == 1.0
    weak = item(search_score=0.1, pinned=True)
    unpinned = composite_score(weak._replace(pinned=False), DEFAULT_WEIGHTS, NOW)
    assert composite_score(weak, DEFAULT_WEIGHTS, NOW) == pytest.approx(unpinned + 0.3)
    half = composite_score(weak, DEFAULT_WEIGHTS, NOW, scale=0.5)
    assert half == pytest.approx(unpinned * 0.5 + 0.15)
    # A score at the scale is not raised past it.
    strong = item(search_score=1.0, confidence=1.0, quality_score=1.0, revision_count=9)
    top = composite_score(strong, DEFAULT_WEIGHTS, NOW, co_activation=10)
    assert top == pytest.approx(1.0)
    assert composite_score(strong._replace(pinned=True), DEFAULT_WEIGHTS, NOW, 10) == top


def test_superseded_and_snoozed_documents_are_demoted() -> None:
    base = composite_score(item(), DEFAULT_WEIGHTS, NOW)
    superseded = composite_score(item(superseded=True), DEFAULT_WEIGHTS, NOW)
    snoozed = composite_score(item(snoozed=True), DEFAULT_WEIGHTS, NOW)
    assert superseded == pytest.approx(base * SUPERSEDED_FACTOR)
    assert snoozed == pytest.approx(base * SNOOZED_FACTOR)


def test_bad_search_scores_are_clamped() -> None:
    assert composite_score(item(search_score=math.nan), DEFAULT_WEIGHTS, NOW) == 0.0
    assert composite_score(item(search_score=9.0), DEFAULT_WEIGHTS, NOW) == pytest.approx(
        composite_score(item(search_score=1.0), DEFAULT_WEIGHTS, NOW)
    )


moments = st.one_of(
    st.none(),
    st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2040, 1, 1)),
    st.datetimes(
        min_value=datetime(1990, 1, 1), max_value=datetime(2040, 1, 1), timezones=st.just(UTC)
    ),
)
unit_or_odd = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True))


@given(
    search=st.floats(allow_nan=True, allow_infinity=True),
    content_type=st.sampled_from([*CONTENT_TYPES, "other"]),
    effective_at=moments,
    last_accessed_at=moments,
    quality=unit_or_odd,
    confidence=unit_or_odd,
    pinned=st.booleans(),
    access_count=st.integers(-5, 10_000),
    body_length=st.integers(-10, 10_000_000),
    revisions=st.integers(-5, 10_000),
    duplicates=st.integers(-5, 10_000),
    co_count=st.integers(-5, 100),
    weights=st.sampled_from([DEFAULT_WEIGHTS, QUERY_WEIGHTS, RECENCY_WEIGHTS]),
)
def test_composite_score_stays_in_range(
    search: float,
    content_type: str,
    effective_at: datetime | None,
    last_accessed_at: datetime | None,
    quality: float | None,
    confidence: float | None,
    pinned: bool,
    access_count: int,
    body_length: int,
    revisions: int,
    duplicates: int,
    co_count: int,
    weights: Weights,
) -> None:
    candidate = ScoringInput(
        key=0,
        search_score=search,
        content_type=content_type,
        effective_at=effective_at,
        quality_score=quality,
        confidence=confidence,
        pinned=pinned,
        access_count=access_count,
        last_accessed_at=last_accessed_at,
        body_length=body_length,
        revision_count=revisions,
        duplicate_count=duplicates,
    )
    recency = recency_score(effective_at, NOW, content_type, access_count, last_accessed_at)
    assert 0.0 <= recency <= 1.0
    trust = confidence_score(confidence, content_type, last_accessed_at, effective_at, NOW)
    assert 0.0 <= trust <= 1.0
    score = composite_score(candidate, weights, NOW, co_count)
    assert math.isfinite(score)
    assert 0.0 <= score <= 1.0 + 1e-9


# ---------------------------------------------------------------- apply_composite


def test_apply_composite_sorts_best_first() -> None:
    items = [
        item(key=1, search_score=0.2),
        item(key=2, search_score=0.9),
        item(key=3, search_score=0.5),
    ]
    ranked = apply_composite(items, DEFAULT_WEIGHTS, NOW)
    assert [key for key, _ in ranked] == [2, 3, 1]
    assert ranked[0][1] == pytest.approx(composite_score(items[1], DEFAULT_WEIGHTS, NOW))


def test_apply_composite_ties_keep_input_order() -> None:
    ranked = apply_composite([item(key=k) for k in (5, 3, 9)], DEFAULT_WEIGHTS, NOW)
    assert [key for key, _ in ranked] == [5, 3, 9]


def test_apply_composite_uses_co_activation_counts() -> None:
    items = [item(key=1, search_score=0.8), item(key=2, search_score=0.78)]
    assert [key for key, _ in apply_composite(items, DEFAULT_WEIGHTS, NOW)] == [1, 2]
    boosted = apply_composite(items, DEFAULT_WEIGHTS, NOW, co_activation=lambda k: 2 * (k == 2))
    assert [key for key, _ in boosted] == [2, 1]
    assert dict(boosted)[2] == pytest.approx(
        composite_score(items[1]._replace(search_score=0.78 / 0.8), DEFAULT_WEIGHTS, NOW, 2, 0.8)
    )


def test_recency_first_types_lead_under_recency_intent() -> None:
    items = [
        item(key=1, content_type="note", search_score=1.0),
        item(key=2, content_type="progress", search_score=0.1),
        item(key=3, content_type="research", search_score=0.9),
        item(key=4, content_type="handoff", search_score=0.6),
    ]
    plain = apply_composite(items, RECENCY_WEIGHTS, NOW)
    assert [key for key, _ in plain] == [1, 3, 4, 2]
    first = apply_composite(items, RECENCY_WEIGHTS, NOW, recency_first_types=RECENCY_FIRST_TYPES)
    assert [key for key, _ in first] == [4, 2, 1, 3]
    assert dict(first) == dict(plain)
    lead = apply_composite(
        items,
        RECENCY_WEIGHTS,
        NOW,
        recency_first_types=RECENCY_FIRST_TYPES,
        lead_types=("progress",),
    )
    assert [key for key, _ in lead] == [2, 4, 1, 3]


def test_apply_composite_empty() -> None:
    assert apply_composite([], DEFAULT_WEIGHTS, NOW) == []
