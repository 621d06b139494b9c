from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memtrove.retrieval.fts import parse_query
from memtrove.retrieval.snippets import make_snippet


def test_empty_body() -> None:
    assert make_snippet("", ["anything"]) == ("", 1)
    assert make_snippet("", []) == ("", 1)


def test_blank_body() -> None:
    assert make_snippet("\n\n   \n\t\n", ["x"]) == ("", 1)


def test_best_line_has_the_most_distinct_terms() -> None:
    body = "intro about nothing\n\nsqlite only here\n\nsqlite and the database layer\nend"
    snippet, line = make_snippet(body, ["sqlite", "database"], max_chars=30)
    assert line == 5
    assert snippet.startswith("sqlite and the database layer")


def test_first_of_equally_good_lines_wins() -> None:
    body = "alpha\nsqlite one\nsqlite two\n"
    assert make_snippet(body, ["sqlite"])[1] == 2


def test_repeats_of_one_term_do_not_beat_two_terms() -> None:
    body = "sqlite sqlite sqlite sqlite\nsqlite database\n"
    assert make_snippet(body, ["sqlite", "database"])[1] == 2


def test_matching_is_case_insensitive_and_stemmed() -> None:
    body = "unrelated opening line\nThe CONFIGURATIONS are stored here\n"
    assert make_snippet(body, ["configuration"])[1] == 2
    body = "unrelated opening line\nwe were indexing files\n"
    assert make_snippet(body, ["indexes"])[1] == 2


def test_short_words_are_not_over_stemmed() -> None:
    # "is" must not be stemmed into "i" and match unrelated text; "bus" stays "bus"
    body = "first line\nbus stop\n"
    assert make_snippet(body, ["bus"])[1] == 2
    assert make_snippet("first line\nbu\n", ["bus"])[1] == 1


def test_no_match_falls_back_to_the_first_non_blank_line() -> None:
    body = "\n\n  \nFirst real line\nsecond line\n"
    snippet, line = make_snippet(body, ["absent"])
    assert line == 4
    assert snippet == "First real line second line"


def test_window_continues_over_following_lines_and_normalizes_whitespace() -> None:
    body = "title\n\nthe   target\tline\n  continued  here\nand here\n"
    snippet, line = make_snippet(body, ["target"])
    assert line == 3
    assert snippet == "the target line continued here and here"


def test_window_stops_at_a_blank_line_once_it_has_a_third_of_the_room() -> None:
    body = "target line that is reasonably long to fill up space\n\nnext paragraph\n"
    snippet, _ = make_snippet(body, ["target"], max_chars=90)
    assert snippet == "target line that is reasonably long to fill up space"
    # With little text yet, a blank line is skipped and the next paragraph joins in.
    snippet, _ = make_snippet("target\n\nnext paragraph\n", ["target"], max_chars=90)
    assert snippet == "target next paragraph"


@pytest.mark.parametrize("max_chars", [1, 2, 5, 10, 40, 100, 240, 1000])
def test_max_length_is_respected(max_chars: int) -> None:
    body = "start target " + "word " * 400 + "\n" + "more " * 400
    snippet, _ = make_snippet(body, ["target"], max_chars=max_chars)
    assert len(snippet) <= max_chars


def test_cut_at_a_word_boundary_with_an_ellipsis() -> None:
    body = "target " + " ".join(["abcdefgh"] * 60)
    snippet, _ = make_snippet(body, ["target"], max_chars=50)
    assert snippet.endswith("…")
    assert len(snippet) <= 50
    assert snippet[:-1].split()[-1] in ("abcdefgh", "target")
    assert snippet.startswith("target abcdefgh")


def test_a_single_long_word_is_cut_hard() -> None:
    snippet, _ = make_snippet("x" * 500, [], max_chars=50)
    assert snippet == "x" * 49 + "…"


def test_short_body_is_returned_whole_without_ellipsis() -> None:
    assert make_snippet("just this", ["this"]) == ("just this", 1)


def test_cjk_terms_match_as_literal_substrings() -> None:
    body = "第一行没有\n我们使用数据库来存储笔记。\n最后一行"
    snippet, line = make_snippet(body, ["数 据", "据 库"])
    assert line == 2
    assert snippet.startswith("我们使用数据库")


def test_cjk_terms_from_a_parsed_query() -> None:
    body = "English opening line\n東京で会議をしました。\n"
    parsed = parse_query("東京 会議")
    assert make_snippet(body, parsed.highlight)[1] == 2


def test_cjk_literal_does_not_match_across_characters_in_other_order() -> None:
    body = "据数 reversed\n数据 forward\n"
    assert make_snippet(body, ["数 据"])[1] == 2


def test_mixed_cjk_and_latin_terms_add_up() -> None:
    body = "sqlite only\n数据 only\nsqlite 数据 both\n"
    assert make_snippet(body, ["sqlite", "数 据"])[1] == 3


def test_line_numbers_are_one_based_and_count_blank_lines() -> None:
    body = "\n\n\nline four target\n"
    assert make_snippet(body, ["target"]) == ("line four target", 4)


def test_crlf_body() -> None:
    body = "first\r\nsecond target\r\nthird\r\n"
    snippet, line = make_snippet(body, ["target"])
    assert line == 2
    assert "\r" not in snippet


@given(st.text(max_size=2000), st.lists(st.text(max_size=12), max_size=6), st.integers(1, 400))
def test_snippet_properties(body: str, terms: list[str], max_chars: int) -> None:
    snippet, line = make_snippet(body, terms, max_chars=max_chars)
    assert len(snippet) <= max_chars
    assert snippet == snippet.strip()
    assert "\n" not in snippet
    assert 1 <= line <= max(1, len(body.splitlines()))


def test_a_compiled_highlighter_gives_the_same_snippet() -> None:
    from memtrove.retrieval.snippets import Highlighter

    body = "intro line\n\nthe sqlite database is here\n\nsqlite only\n写真のバックアップ"
    for terms in (["sqlite", "database"], ["写 真"], []):
        assert make_snippet(body, Highlighter(terms)) == make_snippet(body, terms)
