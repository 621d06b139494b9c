"""Ranking metrics against values computed by hand."""

from __future__ import annotations

import math

import pytest

from memtrove.eval.metrics import (
    coverage,
    mean,
    ndcg_at_k,
    percentile,
    recall_at_k,
    reciprocal_rank,
    unique,
)


def test_unique_keeps_first_occurrence() -> None:
    assert unique(["b", "a", "b", "c", "a"]) == ["b", "a", "c"]


def test_recall_at_k() -> None:
    ranking = ["x", "a", "y", "z", "b", "c"]
    assert recall_at_k(ranking, {"a", "b", "c"}, 1) == 0.0
    assert recall_at_k(ranking, {"a", "b", "c"}, 2) == pytest.approx(1 / 3)
    assert recall_at_k(ranking, {"a", "b", "c"}, 5) == pytest.approx(2 / 3)
    assert recall_at_k(ranking, {"a", "b", "c"}, 100) == 1.0
    assert recall_at_k([], {"a"}, 10) == 0.0


def test_recall_counts_a_repeated_item_once() -> None:
    # the repeat of "a" does not push "b" out of the top 2
    assert recall_at_k(["a", "a", "b"], {"a", "b"}, 2) == 1.0


def test_recall_needs_relevant_items_and_a_positive_k() -> None:
    with pytest.raises(ValueError):
        recall_at_k(["a"], set(), 5)
    with pytest.raises(ValueError):
        recall_at_k(["a"], {"a"}, 0)


def test_coverage_of_sessions() -> None:
    assert coverage([1, 1, 3], {1, 2}) == 0.5
    assert coverage([], {4}) == 0.0


def test_reciprocal_rank() -> None:
    assert reciprocal_rank(["a", "b", "c"], {"a"}) == 1.0
    assert reciprocal_rank(["x", "y", "c"], {"c", "y"}) == 0.5
    assert reciprocal_rank(["x", "x", "y", "c"], {"c"}) == pytest.approx(1 / 3)
    assert reciprocal_rank(["x"], {"c"}) == 0.0
    assert reciprocal_rank([], {"c"}) == 0.0


def test_ndcg_binary() -> None:
    # relevant at ranks 2 and 3 of 2 relevant: (1/log2(3) + 1/log2(4)) / (1 + 1/log2(3))
    expected = (1 / math.log2(3) + 0.5) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(["x", "a", "b"], {"a": 1, "b": 1}, 10) == pytest.approx(expected)
    assert ndcg_at_k(["a", "b"], {"a": 1, "b": 1}, 10) == 1.0
    assert ndcg_at_k(["x", "y"], {"a": 1}, 10) == 0.0


def test_ndcg_graded_uses_linear_gains() -> None:
    gains = {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.0}
    # ranking c, a, x, b: 1/1 + 3/log2(3) + 0 + 2/log2(5); ideal 3/1 + 2/log2(3) + 1/2
    dcg = 1 + 3 / math.log2(3) + 2 / math.log2(5)
    ideal = 3 + 2 / math.log2(3) + 1 / 2
    assert ndcg_at_k(["c", "a", "x", "b"], gains, 10) == pytest.approx(dcg / ideal)
    assert ndcg_at_k(["c", "a", "x", "b"], gains, 10) == pytest.approx(0.7883774, abs=1e-6)


def test_ndcg_cuts_both_orders_at_k() -> None:
    gains = {"a": 1.0, "b": 1.0, "c": 1.0}
    # k = 2: the ideal holds 2 of the 3 relevant; "b" at rank 2 earns 1/log2(3)
    assert ndcg_at_k(["x", "b", "a"], gains, 2) == pytest.approx(
        (1 / math.log2(3)) / (1 + 1 / math.log2(3))
    )


def test_ndcg_unreachable_judgement_stays_in_the_ideal() -> None:
    # "gone" is not in the corpus; rank 1 relevant of 2 equal gains: 1 / (1 + 1/log2 3)
    assert ndcg_at_k(["a"], {"a": 1, "gone": 1}, 10) == pytest.approx(0.6131472, abs=1e-6)


def test_ndcg_without_positive_gains_is_zero() -> None:
    assert ndcg_at_k(["a"], {"a": 0}, 10) == 0.0
    assert ndcg_at_k(["a"], {}, 10) == 0.0


def test_ndcg_repeat_counts_once() -> None:
    assert ndcg_at_k(["a", "a"], {"a": 1, "b": 1}, 10) == pytest.approx(0.6131472, abs=1e-6)


def test_mean() -> None:
    assert mean([]) == 0.0
    assert mean([1.0, 0.5, 0.0]) == 0.5


def test_percentile_interpolates_like_numpy() -> None:
    values = [10.0, 1.0, 4.0, 2.0, 3.0]
    assert percentile(values, 0.5) == 3.0
    assert percentile(values, 0.95) == pytest.approx(8.8)  # 4 + (10 - 4) * 0.8
    assert percentile(values, 0.0) == 1.0
    assert percentile(values, 1.0) == 10.0
    assert percentile([7.0], 0.95) == 7.0
    assert percentile([], 0.5) == 0.0
    assert percentile([1.0, 2.0], 0.5) == 1.5
    with pytest.raises(ValueError):
        percentile([1.0], 1.5)
