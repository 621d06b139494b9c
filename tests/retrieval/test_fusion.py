from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memtrove.retrieval.fusion import (
    RANK_BONUS,
    RERANK_DEGENERATE_FLOOR,
    RRF_K,
    BlendResult,
    blend_rerank,
    normalize_max,
    rrf,
)

# ---------------------------------------------------------------- rrf


def test_defaults_match_the_spec() -> None:
    assert RRF_K == 60
    assert RANK_BONUS == (0.05, 0.02, 0.02)
    assert RERANK_DEGENERATE_FLOOR == 1e-4


def test_single_list_scores_are_reciprocal_ranks_plus_bonus() -> None:
    fused = rrf([(["a", "b", "c", "d"], 1.0)])
    assert [key for key, _ in fused] == ["a", "b", "c", "d"]
    scores = dict(fused)
    assert scores["a"] == pytest.approx(1 / 61 + 0.05)
    assert scores["b"] == pytest.approx(1 / 62 + 0.02)
    assert scores["c"] == pytest.approx(1 / 63 + 0.02)
    assert scores["d"] == pytest.approx(1 / 64)


def test_weights_scale_contributions_but_not_the_bonus() -> None:
    scores = dict(rrf([(["a", "b"], 2.0), (["b", "x", "a"], 1.0)]))
    assert scores["a"] == pytest.approx(2 / 61 + 1 / 63 + 0.05)
    assert scores["b"] == pytest.approx(2 / 62 + 1 / 61 + 0.05)
    assert scores["x"] == pytest.approx(1 / 62 + 0.02)


def test_bonus_is_added_once_for_the_best_rank() -> None:
    scores = dict(rrf([(["a"], 1.0), (["a"], 1.0), (["a"], 1.0)]))
    assert scores["a"] == pytest.approx(3 / 61 + 0.05)


def test_custom_k_and_no_bonus() -> None:
    assert rrf([(["a", "b"], 1.0)], k=0, rank_bonus=()) == [("a", 1.0), ("b", 0.5)]


def test_key_repeated_in_one_list_counts_once_at_its_first_rank() -> None:
    scores = dict(rrf([(["a", "b", "a"], 1.0)], rank_bonus=()))
    assert scores == {"a": pytest.approx(1 / 61), "b": pytest.approx(1 / 62)}


def test_zero_weight_lists_are_ignored() -> None:
    fused = rrf([(["a"], 1.0), (["z", "a"], 0.0)])
    assert [key for key, _ in fused] == ["a"]
    assert fused[0][1] == pytest.approx(1 / 61 + 0.05)


@pytest.mark.parametrize("weight", [-1.0, math.nan, math.inf])
def test_bad_weights_are_rejected(weight: float) -> None:
    with pytest.raises(ValueError):
        rrf([(["a"], weight)])


def test_negative_k_is_rejected() -> None:
    with pytest.raises(ValueError):
        rrf([(["a"], 1.0)], k=-1)


def test_empty_inputs() -> None:
    assert rrf([]) == []
    assert rrf([([], 1.0), ([], 2.0)]) == []


def test_ties_go_to_better_best_rank_then_first_seen() -> None:
    # k=0, no bonus: b (rank 2 at weight 2) and a (rank 1 at weight 1) both score 1.0.
    fused = rrf([(["x", "b"], 2.0), (["a"], 1.0)], k=0, rank_bonus=())
    assert fused == [("x", 2.0), ("a", 1.0), ("b", 1.0)]
    # Same best rank and score: the key seen first wins.
    assert [key for key, _ in rrf([(["p"], 1.0), (["q"], 1.0)])] == ["p", "q"]
    assert [key for key, _ in rrf([(["q"], 1.0), (["p"], 1.0)])] == ["q", "p"]


def test_works_with_integer_keys() -> None:
    assert [key for key, _ in rrf([([3, 1, 2], 1.0), ([1], 2.0)])] == [1, 3, 2]


ranked_lists = st.lists(
    st.tuples(
        st.lists(st.integers(0, 12), max_size=10),
        st.sampled_from([0.0, 0.5, 1.0, 2.0]),
    ),
    max_size=5,
)


@given(ranked_lists)
def test_rrf_invariants(lists: list[tuple[list[int], float]]) -> None:
    fused = rrf(lists)
    scores = [score for _, score in fused]
    assert scores == sorted(scores, reverse=True)
    assert all(math.isfinite(score) and score > 0 for score in scores)
    keys = [key for key, _ in fused]
    assert len(keys) == len(set(keys))
    assert set(keys) == {key for ranked, weight in lists if weight > 0 for key in ranked}


@given(st.lists(st.integers(0, 50), max_size=30, unique=True), st.sampled_from([0.5, 1.0, 3.0]))
def test_a_single_list_keeps_its_order(ranked: list[int], weight: float) -> None:
    assert [key for key, _ in rrf([(ranked, weight)])] == ranked


@given(ranked_lists)
def test_a_key_that_dominates_another_ranks_above_it(lists: list[tuple[list[int], float]]) -> None:
    fused = rrf(lists)
    position = {key: index for index, (key, _) in enumerate(fused)}
    first_rank = [{k: r for r, k in reversed(list(enumerate(ranked)))} for ranked, _ in lists]
    active = [ranks for ranks, (_, weight) in zip(first_rank, lists, strict=True) if weight > 0]
    for a in position:
        for b in position:
            # a dominates b: present, and strictly better placed, in every list that has b.
            if a != b and all(a in ranks and ranks[a] < ranks[b] for ranks in active if b in ranks):
                assert position[a] < position[b]


# ---------------------------------------------------------------- normalize_max


def test_normalize_max() -> None:
    assert normalize_max([("a", 0.5), ("b", 0.25), ("c", 0.0)]) == [
        ("a", 1.0),
        ("b", 0.5),
        ("c", 0.0),
    ]
    assert normalize_max([]) == []
    assert normalize_max([("a", 0.0), ("b", 0.0)]) == [("a", 0.0), ("b", 0.0)]
    assert normalize_max([("b", 0.1), ("a", 0.4)]) == [("b", pytest.approx(0.25)), ("a", 1.0)]


# ---------------------------------------------------------------- blend_rerank


def test_reranker_dominates_and_rrf_breaks_ties() -> None:
    result = blend_rerank([("a", 0.1), ("b", 0.05)], {"a": 0.2, "b": 0.9})
    assert isinstance(result, BlendResult)
    assert result.degenerate is False
    assert [key for key, _ in result.ranked] == ["b", "a"]
    scores = dict(result.ranked)
    assert scores["b"] == pytest.approx(0.9 * 0.9 + 0.1 * 0.5)
    assert scores["a"] == pytest.approx(0.9 * 0.2 + 0.1 * 1.0)


def test_equal_rerank_scores_fall_back_to_rrf_order() -> None:
    result = blend_rerank([("a", 0.3), ("b", 0.2), ("c", 0.1)], {"a": 0.5, "b": 0.5, "c": 0.5})
    assert [key for key, _ in result.ranked] == ["a", "b", "c"]


def test_keys_missing_from_rerank_score_zero() -> None:
    result = blend_rerank([("a", 0.2), ("b", 0.1)], {"b": 0.5})
    scores = dict(result.ranked)
    assert scores["a"] == pytest.approx(0.1)
    assert scores["b"] == pytest.approx(0.45 + 0.05)
    assert [key for key, _ in result.ranked] == ["b", "a"]


def test_rerank_scores_are_clamped_and_nan_is_zero() -> None:
    result = blend_rerank([("a", 0.2), ("b", 0.1), ("c", 0.1)], {"a": math.nan, "b": 7.0, "c": -1})
    scores = dict(result.ranked)
    assert scores == {
        "b": pytest.approx(0.9 + 0.05),
        "a": pytest.approx(0.1),
        "c": pytest.approx(0.05),
    }


@pytest.mark.parametrize("rerank", [{}, {"a": 0.0, "b": 0.0}, {"a": 1e-4, "b": 5e-5}])
def test_degenerate_reranker_keeps_the_fused_order(rerank: dict[str, float]) -> None:
    result = blend_rerank([("a", 0.2), ("b", 0.1)], rerank)
    assert result.degenerate is True
    assert result.ranked == [("a", 1.0), ("b", 0.5)]


def test_a_score_just_above_the_floor_is_not_degenerate() -> None:
    result = blend_rerank([("a", 0.2), ("b", 0.1)], {"b": 2e-4})
    assert result.degenerate is False


def test_scores_of_keys_outside_the_candidates_do_not_count() -> None:
    assert blend_rerank([("a", 0.2)], {"zzz": 0.9}).degenerate is True


def test_empty_candidates() -> None:
    assert blend_rerank([], {"a": 0.9}) == BlendResult(ranked=[], degenerate=False)


def test_weight_is_validated_and_respected() -> None:
    with pytest.raises(ValueError):
        blend_rerank([("a", 1.0)], {"a": 1.0}, weight=1.5)
    pure_rrf = blend_rerank([("a", 0.2), ("b", 0.1)], {"b": 1.0}, weight=0.0)
    assert pure_rrf.ranked == [("a", 1.0), ("b", 0.5)]


@given(
    st.lists(st.floats(0, 1), min_size=1, max_size=20),
    st.lists(st.floats(0, 1), min_size=1, max_size=20),
)
def test_blend_is_a_permutation_in_unit_range(fused_scores: list[float], rer: list[float]) -> None:
    fused = sorted(enumerate(fused_scores), key=lambda pair: -pair[1])
    result = blend_rerank(fused, dict(enumerate(rer)))
    assert sorted(key for key, _ in result.ranked) == list(range(len(fused_scores)))
    assert all(0.0 <= score <= 1.0 + 1e-12 for _, score in result.ranked)
    scores = [score for _, score in result.ranked]
    assert scores == sorted(scores, reverse=True)
