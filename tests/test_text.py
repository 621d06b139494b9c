from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memtrove.text import (
    STOPWORDS,
    is_cjk,
    iso_from_timestamp,
    now_iso,
    parse_iso_datetime,
    segment_cjk,
    to_iso,
    words,
)

# -- segment_cjk ------------------------------------------------------------------------------


def test_segment_cjk_leaves_text_without_cjk_untouched() -> None:
    text = "plain ASCII, café and हिन्दी  with  spaces"
    assert segment_cjk(text) is text


def test_segment_cjk_spaces_every_han_character() -> None:
    assert segment_cjk("中文") == " 中 文 "
    assert segment_cjk("abc中文def").split() == ["abc", "中", "文", "def"]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("ひらがな", ["ひ", "ら", "が", "な"]),
        ("カタカナ", ["カ", "タ", "カ", "ナ"]),
        ("한국어", ["한", "국", "어"]),
        ("ﾃｽﾄ", ["ﾃ", "ｽ", "ﾄ"]),  # half-width katakana
        ("𠀀𠀁", ["𠀀", "𠀁"]),  # CJK extension B (astral plane)
    ],
)
def test_segment_cjk_covers_kana_hangul_and_extensions(text: str, tokens: list[str]) -> None:
    assert segment_cjk(text).split() == tokens


def test_segment_cjk_keeps_cjk_punctuation_as_a_separator_not_a_token() -> None:
    # U+3002 (ideographic full stop) is outside the CJK ranges on purpose.
    assert segment_cjk("数据。库").split() == ["数", "据", "。", "库"]
    assert not is_cjk("。")
    assert not is_cjk("，")


def test_segment_cjk_mixed_runs_keep_non_cjk_words_whole() -> None:
    assert segment_cjk("用sqlite存储").split() == ["用", "sqlite", "存", "储"]


def test_is_cjk() -> None:
    assert is_cjk("中")
    assert is_cjk("あ")
    assert is_cjk("ア")
    assert is_cjk("한")
    assert not is_cjk("a")
    assert not is_cjk("é")
    assert not is_cjk("1")
    assert not is_cjk("")


@given(st.text())
def test_segment_cjk_only_adds_spaces(text: str) -> None:
    segmented = segment_cjk(text)
    assert segmented.replace(" ", "") == text.replace(" ", "")
    for character in segmented:
        if is_cjk(character):
            # every CJK character stands alone between spaces
            assert f" {character} " in segmented


# -- words ------------------------------------------------------------------------------------


def test_words_lowercases_and_splits_on_punctuation_and_underscore() -> None:
    assert words("Hello, World! snake_case e-mail v2.0") == [
        "hello",
        "world",
        "snake",
        "case",
        "e",
        "mail",
        "v2",
        "0",
    ]


def test_words_normalizes_nfkc() -> None:
    assert words("ﬁne Ｆｕｌｌ ①") == ["fine", "full", "1"]


def test_words_keeps_combining_marks_inside_the_word() -> None:
    assert words("हिन्दी भाषा") == ["हिन्दी", "भाषा"]
    assert words("ภาษาไทย") == ["ภาษาไทย"]
    # decomposed e + combining acute accent: one word, NFKC-composed
    assert words("cafe\u0301 menu") == ["café", "menu"]


def test_words_does_not_split_cjk() -> None:
    assert words("我们使用数据库") == ["我们使用数据库"]


def test_words_of_empty_or_symbol_only_text() -> None:
    assert words("") == []
    assert words("  ...  !!! 🎉 — ") == []


@given(st.text())
def test_words_never_returns_empty_or_uppercase_words(text: str) -> None:
    for word in words(text):
        assert word
        assert word == word.lower()
        assert not any(character.isspace() for character in word)


def test_stopwords_are_lowercase_words() -> None:
    assert "the" in STOPWORDS
    assert "sqlite" not in STOPWORDS
    assert all(word == word.lower() and word.isalpha() for word in STOPWORDS)


# -- time -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-03-05", "2024-03-05T00:00:00Z"),
        ("2024-03-05T10:20:30Z", "2024-03-05T10:20:30Z"),
        ("2024-03-05T10:20:30z", "2024-03-05T10:20:30Z"),
        ("2024-03-05 10:20", "2024-03-05T10:20:00Z"),
        ("2024-03-05T10:20:30+02:00", "2024-03-05T08:20:30Z"),
        ("2024-03-05T23:30:00-01:00", "2024-03-06T00:30:00Z"),
        ("2024-03-05T10:20:30.987654", "2024-03-05T10:20:30Z"),
        ("  2024-02-29  ", "2024-02-29T00:00:00Z"),
        ("2024-03-05Z", "2024-03-05T00:00:00Z"),
    ],
)
def test_parse_iso_datetime_strings(value: str, expected: str) -> None:
    assert parse_iso_datetime(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "",
        "   ",
        "yesterday",
        "2023-02-29",  # not a leap year
        "2024-13-01",
        "2024-01-01T25:00:00",
        "2024-01-01T10:00:00+25:00",
        "2024-01-01" + " " * 70 + "x",
        "x" * 65,
        "nan",
        "Z",
        "\x00",
    ],
)
def test_parse_iso_datetime_garbage_strings_give_none(value: str) -> None:
    assert parse_iso_datetime(value) is None


@pytest.mark.parametrize("value", [None, 20240101, 3.5, True, ["2024-01-01"], {"d": 1}, b"2024"])
def test_parse_iso_datetime_non_text_values_give_none(value: object) -> None:
    assert parse_iso_datetime(value) is None


def test_parse_iso_datetime_date_and_datetime_objects() -> None:
    assert parse_iso_datetime(date(2024, 3, 5)) == "2024-03-05T00:00:00Z"
    # naive datetimes are taken as UTC
    assert parse_iso_datetime(datetime(2024, 3, 5, 7, 8, 9)) == "2024-03-05T07:08:09Z"
    tokyo = timezone(timedelta(hours=9))
    assert parse_iso_datetime(datetime(2024, 3, 5, 7, 0, tzinfo=tokyo)) == "2024-03-04T22:00:00Z"


@pytest.mark.parametrize(
    "value",
    [
        "0001-01-01T00:00:00+01:00",
        "9999-12-31T23:59:59-01:00",
        datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1))),
        datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=-5))),
    ],
)
def test_parse_iso_datetime_out_of_range_after_utc_conversion_gives_none(value: object) -> None:
    # Converting to UTC leaves datetime's range: "unparseable", not an OverflowError.
    assert parse_iso_datetime(value) is None


def test_iso_strings_are_zero_padded_so_they_sort() -> None:
    early = parse_iso_datetime("0999-05-05")
    assert early == "0999-05-05T00:00:00Z"
    assert parse_iso_datetime(date(1, 1, 1)) == "0001-01-01T00:00:00Z"
    later = parse_iso_datetime("2024-01-01")
    assert later is not None
    assert early < later


def test_to_iso_and_friends() -> None:
    assert to_iso(datetime(2024, 1, 2, 3, 4, 5, 999999, tzinfo=UTC)) == "2024-01-02T03:04:05Z"
    assert iso_from_timestamp(0) == "1970-01-01T00:00:00Z"
    assert iso_from_timestamp(86400.9) == "1970-01-02T00:00:00Z"
    stamp = now_iso()
    assert parse_iso_datetime(stamp) == stamp
    assert stamp.endswith("Z")
    assert len(stamp) == len("2024-01-01T00:00:00Z")


@given(st.datetimes(timezones=st.just(UTC)))
def test_parse_iso_datetime_round_trips_its_own_output(moment: datetime) -> None:
    iso = parse_iso_datetime(moment)
    assert iso is not None
    assert parse_iso_datetime(iso) == iso
    assert datetime.fromisoformat(iso.replace("Z", "+00:00")) == moment.replace(microsecond=0)


_OFFSETS = st.builds(
    lambda minutes: timezone(timedelta(minutes=minutes)), st.integers(-23 * 60, 23 * 60)
)


@given(
    st.one_of(
        st.text(),
        st.integers(),
        st.none(),
        st.dates(),
        st.datetimes(),
        st.datetimes(timezones=_OFFSETS),
        st.datetimes(timezones=_OFFSETS).map(lambda moment: moment.isoformat()),
    )
)
def test_parse_iso_datetime_never_raises(value: object) -> None:
    result = parse_iso_datetime(value)
    assert result is None or result.endswith("Z")


def test_a_ligature_that_normalizes_with_a_space_gives_no_spaced_word() -> None:
    assert all(" " not in word and word for word in words("ﱞ and ﱟ"))


def test_sha256_hex_is_hashlibs() -> None:
    import hashlib

    from memtrove.text import sha256_hex

    for data in (
        b"",
        b"abc",
        "prompt \u00e9\ud83d".encode("utf-8", "surrogatepass"),
        b"x" * 100_000,
    ):
        assert sha256_hex(data) == hashlib.sha256(data).hexdigest()


def test_lazy_patterns_compile_once_and_answer_like_re() -> None:
    import re

    from memtrove.text import LazyPattern

    lazy = LazyPattern(r"(\w+)@(\w+)", re.I)
    assert lazy._compiled is None
    text = "Mail ALICE@example or bob@test"
    compiled = re.compile(r"(\w+)@(\w+)", re.I)
    assert lazy.search(text)[0] == compiled.search(text)[0]  # type: ignore[index]
    assert lazy.findall(text) == compiled.findall(text)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in compiled.finditer(text)]
    assert lazy.sub("<>", text, count=1) == compiled.sub("<>", text, count=1)
    assert lazy.match(text) is None and lazy.fullmatch("a@b") is not None
    assert lazy.compiled is lazy.compiled
