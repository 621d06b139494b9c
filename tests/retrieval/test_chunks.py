from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memtrove.retrieval.chunks import (
    CHUNK_OVERLAP,
    CHUNK_SIZE,
    select_chunk,
    split_windows,
    term_set,
    window_spans,
)


def filler(count: int, word: str = "lorem") -> str:
    """``count`` lines of neutral words, each 60 characters with its newline."""
    line = (f"{word} ipsum dolor sit amet consectetur adipiscing elit sed do " * 2)[:59]
    return (line + "\n") * count


# ---------------------------------------------------------------- term_set


def test_term_set_stems_lowercases_and_drops_stopwords() -> None:
    assert term_set("The Tokens are Refreshing") == {"token", "refresh"}
    assert term_set("token") <= term_set("tokens TOKEN token's")
    assert term_set(None) == frozenset()
    assert term_set("") == frozenset()
    assert term_set("the and of") == frozenset()


def test_term_set_splits_cjk_into_characters() -> None:
    assert term_set("認証 token") == {"認", "証", "token"}


# ---------------------------------------------------------------- windows


def test_defaults() -> None:
    assert (CHUNK_SIZE, CHUNK_OVERLAP) == (4000, 600)


def test_text_that_fits_is_one_window() -> None:
    assert split_windows("") == [""]
    assert split_windows("x" * 4000) == ["x" * 4000]
    assert window_spans("abc", 3, 1) == [(0, 3)]


def test_windows_cut_at_paragraph_breaks() -> None:
    paragraph = filler(20)  # 1200 characters
    text = "\n\n".join([paragraph] * 6)
    windows = split_windows(text, size=4000, overlap=600)
    assert len(windows) > 1
    for window in windows[:-1]:
        assert window.endswith("\n\n")
        assert len(window) <= 4000
    for window in windows[1:]:
        assert window.startswith(paragraph[:30])  # starts at a line start
    spans = window_spans(text, 4000, 600)
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert 300 <= end - start <= 600


def test_unbroken_text_is_cut_hard() -> None:
    assert split_windows("abcdefghij", size=4, overlap=1) == ["abcd", "defg", "ghij"]
    assert split_windows("abcdefgh", size=4, overlap=0) == ["abcd", "efgh"]


def test_window_parameters_are_validated() -> None:
    with pytest.raises(ValueError):
        split_windows("text", size=0)
    with pytest.raises(ValueError):
        split_windows("text", size=10, overlap=10)
    with pytest.raises(ValueError):
        split_windows("text", size=10, overlap=-1)


@given(
    st.text(alphabet=st.sampled_from("ab \n\t."), max_size=400),
    st.integers(1, 60),
    st.data(),
)
def test_windows_cover_the_text_in_order(text: str, size: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(0, size - 1))
    spans = window_spans(text, size, overlap)
    assert spans[0][0] == 0
    assert spans[-1][1] == len(text)
    for start, end in spans:
        assert 0 <= start < end or (start, end) == (0, 0)
        assert end - start <= size
    for (previous_start, previous_end), (start, _) in itertools.pairwise(spans):
        assert previous_start < start <= previous_end  # progress, no gap
    assert split_windows(text, size, overlap) == [text[s:e] for s, e in spans]


# ---------------------------------------------------------------- select_chunk


def test_short_text_is_returned_whole() -> None:
    text = "anything at all " * 10
    assert select_chunk(text, "unrelated") == text


def test_the_window_with_the_query_terms_wins() -> None:
    text = filler(80) + "The OAuth tokens are refreshed by the gateway.\n" + filler(80)
    chunk = select_chunk(text, "how is the oauth token refresh done")
    assert "OAuth tokens are refreshed" in chunk
    assert len(chunk) <= 4000
    assert chunk != split_windows(text)[0]


def test_more_distinct_terms_beat_repetition() -> None:
    repeated = "cache " * 100 + "\n"
    varied = "cache eviction policy\n"
    text = filler(70) + repeated + filler(70) + varied + filler(70)
    assert "eviction policy" in select_chunk(text, "cache eviction policy", size=2000, overlap=200)


def test_intent_terms_count_half() -> None:
    def text_with(intent_line: str) -> str:
        return filler(60) + "\nkubernetes\n" + filler(60) + f"\n{intent_line}\n" + filler(60)

    # One query term (1.0) beats one intent term (0.5).
    chunk = select_chunk(text_with("billing"), "kubernetes", intent="billing", size=2000)
    assert "kubernetes" in chunk and "billing" not in chunk
    # Two intent terms (1.0) tie with it, and the earlier window wins; "invoice" and
    # "invoices" share a stem, so they are one term.
    text = text_with("billing invoices")
    chunk = select_chunk(text, "kubernetes", intent="billing invoice invoices", size=2000)
    assert "kubernetes" in chunk
    # Three intent terms (1.5) beat one query term.
    text = text_with("billing invoices payments")
    chunk = select_chunk(text, "kubernetes", intent="billing invoices payments", size=2000)
    assert "payments" in chunk and "kubernetes" not in chunk


def test_a_term_in_query_and_intent_counts_once() -> None:
    text = filler(60) + "\nalpha\n" + filler(60) + "\nbeta\n" + filler(60)
    # alpha is in both (1.0 once); beta only in the query (1.0): tie, earliest wins.
    chunk = select_chunk(text, "alpha beta", intent="alpha", size=2000, overlap=200)
    assert "alpha" in chunk


def test_ties_and_no_terms_give_the_opening() -> None:
    text = filler(200)
    windows = split_windows(text)
    assert select_chunk(text, "zebra") == windows[0]
    assert select_chunk(text, "the of and") == windows[0]
    assert select_chunk(text, "lorem ipsum") == windows[0]


def test_query_terms_are_stemmed() -> None:
    text = filler(80) + "\nmigrations migrated migrating\n" + filler(80)
    assert "migrating" in select_chunk(text, "migration")
