from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memtrove.retrieval.mmr import DEMOTE_THRESHOLD, bigrams, demote_similar, jaccard


def test_bigrams_are_adjacent_lowercased_word_pairs() -> None:
    assert bigrams("The quick, brown FOX!") == {"the quick", "quick brown", "brown fox"}
    assert bigrams("a b a b") == {"a b", "b a"}


def test_short_texts() -> None:
    assert bigrams("Hello") == {"hello"}
    assert bigrams("") == set()
    assert bigrams("  ... --- ") == set()


def test_jaccard() -> None:
    assert jaccard({"a", "b"}, {"a", "b"}) == 1.0
    assert jaccard({"a"}, {"b"}) == 0.0
    assert jaccard({"a", "b"}, {"b", "c"}) == pytest.approx(1 / 3)
    assert jaccard(set(), {"a"}) == 0.0
    assert jaccard(set(), set()) == 0.0


def test_near_duplicates_move_behind_the_kept_results() -> None:
    text = "deploy the service with blue green rollout and health checks"
    items = [
        (1, text),
        (2, text + " today"),
        (3, "postgres vacuum settings for large tables"),
        (4, text.upper()),
    ]
    assert DEMOTE_THRESHOLD == 0.6
    assert demote_similar(items) == [1, 3, 2, 4]


def test_the_threshold_is_strict() -> None:
    # "a b c d e f" has 5 bigrams; "a b c d" shares 3 of them: Jaccard exactly 0.6.
    items = [("x", "a b c d e f"), ("y", "a b c d")]
    assert jaccard(bigrams(items[0][1]), bigrams(items[1][1])) == pytest.approx(0.6)
    assert demote_similar(items) == ["x", "y"]
    assert demote_similar([*items, ("z", "q r")], threshold=0.59) == ["x", "z", "y"]


def test_items_are_compared_with_kept_items_only() -> None:
    # b is close to a (demoted); c is close to b but not to a, so c is kept.
    a = "one two three four five"
    b = "one two three four five six seven"
    c = "three four five six seven eight nine"
    assert jaccard(bigrams(a), bigrams(b)) > 0.6
    assert jaccard(bigrams(b), bigrams(c)) > 0.3
    assert jaccard(bigrams(a), bigrams(c)) <= 0.3
    assert demote_similar([("a", a), ("b", b), ("c", c)], threshold=0.3) == ["a", "c", "b"]


def test_demoted_items_keep_their_relative_order() -> None:
    base = "alpha beta gamma delta epsilon"
    items = [(1, base), (2, base), (3, "other words entirely here"), (4, base), (5, base)]
    assert demote_similar(items) == [1, 3, 2, 4, 5]


def test_empty_texts_are_never_demoted() -> None:
    assert demote_similar([(1, ""), (2, ""), (3, "")]) == [1, 2, 3]
    assert demote_similar([]) == []


@given(
    st.lists(st.text(alphabet=st.sampled_from("ab c\n."), max_size=30), max_size=15),
    st.floats(0, 1),
)
def test_demotion_is_a_stable_partition(texts: list[str], threshold: float) -> None:
    order = demote_similar(list(enumerate(texts)), threshold)
    assert sorted(order) == list(range(len(texts)))
    if texts:
        assert order[0] == 0
    # kept + demoted, each in input order: the keys descend at most once.
    descents = sum(1 for left, right in itertools.pairwise(order) if left > right)
    assert descents <= 1


@given(st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=6), unique=True, max_size=12))
def test_texts_without_shared_bigrams_keep_their_order(names: list[str]) -> None:
    items = [(index, f"{name} {name}x") for index, name in enumerate(names)]
    assert demote_similar(items) == list(range(len(names)))


def test_counter_of_repeated_keys_is_preserved() -> None:
    items = [("k", "same text here"), ("k", "same text here"), ("j", "other")]
    assert Counter(demote_similar(items)) == Counter({"k": 2, "j": 1})
