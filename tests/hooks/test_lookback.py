"""Multi-turn lookback: prior selection and current-first truncation."""

from __future__ import annotations

from memtrove.hooks.lookback import MAX_COMBINED_CHARS, combine_query, select_priors


def test_combined_layout_newest_first() -> None:
    assert combine_query("now", ["newer", "older"]) == "now\n\nnewer\n\nolder"
    assert combine_query("now", []) == "now"


def test_older_priors_are_dropped_first() -> None:
    current = "c" * 1000
    newer, older = "n" * 900, "o" * 200
    combined = combine_query(current, [newer, older])
    assert combined == current + "\n\n" + newer
    assert len(combined) <= MAX_COMBINED_CHARS


def test_current_prompt_is_always_kept_verbatim() -> None:
    current = "c" * 1990
    assert combine_query(current, ["n" * 100]) == current
    assert combine_query(current, ["n" * 9]) == current  # 1990 + 2 + 9 > 2000
    assert combine_query(current, ["n" * 8]) == current + "\n\n" + "n" * 8  # exactly 2000


def test_an_overlong_current_prompt_is_cut_and_has_no_priors() -> None:
    current = "c" * 5000
    assert combine_query(current, ["prior"]) == "c" * MAX_COMBINED_CHARS
    assert combine_query(current, []) == current  # no priors: the prompt as the gates left it


def test_select_priors_skips_the_current_prompt_and_blanks() -> None:
    recent = ["same prompt ", "", "first", "same prompt", "second", "third"]
    assert select_priors("same prompt", recent) == ["first", "second"]
    assert select_priors("x", ["a"]) == ["a"]
    assert select_priors("x", []) == []
