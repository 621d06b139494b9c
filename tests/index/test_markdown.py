from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtrove.index.markdown import (
    FRAGMENT_MAX,
    FRAGMENT_MIN,
    FULL_LIMIT,
    MAX_FRAGMENTS,
    SPLIT_THRESHOLD,
    Fragment,
    ParsedMarkdown,
    parse_markdown,
    split_fragments,
)


def fragments_of(text: str, title: str = "Doc") -> tuple[ParsedMarkdown, list[Fragment]]:
    parsed = parse_markdown(text)
    return parsed, split_fragments(parsed, title)


def check_invariants(parsed: ParsedMarkdown, fragments: list[Fragment]) -> None:
    """What every fragment list must satisfy, whatever the input."""
    text = parsed.text
    assert fragments, "there is always a `full` fragment"
    assert len(fragments) <= MAX_FRAGMENTS
    full = fragments[0]
    assert full.fragment_type == "full"
    assert full.start == parsed.body_start
    assert full.end == min(len(text), parsed.body_start + FULL_LIMIT)
    assert [fragment.seq for fragment in fragments] == list(range(len(fragments)))
    assert [f.fragment_type for f in fragments[1:]].count("full") == 0
    starts = [fragment.start for fragment in fragments[1:]]
    assert starts == sorted(starts), "fragments after `full` are in document order"
    for fragment in fragments:
        assert 0 <= fragment.start <= fragment.end <= len(text)
        assert len(fragment.label) <= 200
        if fragment.fragment_type == "full":
            continue
        length = fragment.end - fragment.start
        assert FRAGMENT_MIN <= length <= FRAGMENT_MAX, fragment
        if fragment.fragment_type == "frontmatter":
            assert parsed.frontmatter_span is not None
            assert parsed.frontmatter_span[0] <= fragment.start
            assert fragment.end <= parsed.frontmatter_span[1]
        else:
            assert fragment.start >= parsed.body_start
    if len(text) - parsed.body_start < SPLIT_THRESHOLD:
        assert len(fragments) == 1


def by_type(fragments: list[Fragment], kind: str) -> list[Fragment]:
    return [fragment for fragment in fragments if fragment.fragment_type == kind]


def slice_of(text: str, fragment: Fragment) -> str:
    return text[fragment.start : fragment.end]


# -- frontmatter ------------------------------------------------------------------------------


def test_frontmatter_is_parsed_and_split_off() -> None:
    text = "---\ntitle: Hello\ntags: [a, b]\ncount: 3\n---\n# Heading\nBody text.\n"
    parsed = parse_markdown(text)
    assert parsed.frontmatter == {"title": "Hello", "tags": ["a", "b"], "count": 3}
    assert parsed.frontmatter_error is None
    assert parsed.body == "# Heading\nBody text.\n"
    assert parsed.frontmatter_span is not None
    start, end = parsed.frontmatter_span
    assert text[start:end] == "title: Hello\ntags: [a, b]\ncount: 3\n"
    assert parsed.first_heading == "Heading"


def test_frontmatter_with_crlf_line_endings() -> None:
    text = "---\r\ntitle: Windows\r\n---\r\n# Title\r\nbody line\r\n"
    parsed = parse_markdown(text)
    assert parsed.frontmatter == {"title": "Windows"}
    assert parsed.body == "# Title\r\nbody line\r\n"
    assert parsed.first_heading == "Title"


def test_frontmatter_closed_by_dots_and_trailing_spaces() -> None:
    assert parse_markdown("---\na: 1\n...\nbody").body == "body"
    parsed = parse_markdown("--- \nk: v\n---  \nrest")
    assert parsed.frontmatter == {"k": "v"}
    assert parsed.body == "rest"


def test_frontmatter_at_end_of_file_without_newline() -> None:
    parsed = parse_markdown("---\nk: v\n---")
    assert parsed.frontmatter == {"k": "v"}
    assert parsed.body == ""


def test_empty_frontmatter_is_valid_and_empty() -> None:
    for text in ("---\n---\nbody", "---\n\n---\nbody", "---\n# only a yaml comment\n---\nbody"):
        parsed = parse_markdown(text)
        assert parsed.frontmatter == {}
        assert parsed.frontmatter_error is None
        assert parsed.frontmatter_span is not None
        assert parsed.body == "body"


def test_non_string_keys_become_strings() -> None:
    parsed = parse_markdown("---\n1: one\n2.5: half\nnull: nothing\n---\n")
    assert parsed.frontmatter == {"1": "one", "2.5": "half", "None": "nothing"}


@pytest.mark.parametrize(
    "yaml_block",
    [
        "- a\n- b\n",  # a list
        "just a sentence\n",  # a scalar
        "42\n",
        "&a [*a]\n",  # a recursive alias
    ],
)
def test_non_mapping_frontmatter_is_an_error_and_the_whole_text_is_body(yaml_block: str) -> None:
    text = f"---\n{yaml_block}---\n# Title\nbody"
    parsed = parse_markdown(text)
    assert parsed.frontmatter == {}
    assert parsed.frontmatter_span is None
    assert parsed.frontmatter_error == "malformed frontmatter: expected key: value pairs"
    assert parsed.body_start == 0
    assert parsed.body == text
    assert parsed.first_heading == "Title"


@pytest.mark.parametrize(
    "yaml_block",
    ["foo: [\n", "a: b: c\n", "key: 'unclosed\n", "\tindented: tab\n", "? [a, b]\n: c\n"],
)
def test_malformed_yaml_is_an_error_and_the_whole_text_is_body(yaml_block: str) -> None:
    text = f"---\n{yaml_block}---\nbody"
    parsed = parse_markdown(text)
    assert parsed.frontmatter == {}
    assert parsed.frontmatter_span is None
    assert parsed.frontmatter_error is not None
    assert parsed.frontmatter_error.startswith("malformed frontmatter: ")
    assert "\n" not in parsed.frontmatter_error
    assert len(parsed.frontmatter_error) <= len("malformed frontmatter: ") + 160
    assert parsed.body == text


def test_unclosed_frontmatter_is_plain_body_without_error() -> None:
    text = "---\ntitle: never closed\n# Heading\nbody"
    parsed = parse_markdown(text)
    assert parsed.frontmatter == {}
    assert parsed.frontmatter_error is None
    assert parsed.frontmatter_span is None
    assert parsed.body == text
    assert parsed.first_heading == "Heading"


@pytest.mark.parametrize(
    "text",
    [
        "body\n---\nk: v\n---\n",  # not at the very start
        " ---\nk: v\n---\n",  # indented opener
        "----\nk: v\n----\n",  # four dashes
        "---k: v\n---\n",  # opener with text on it
        "\ufeff---\nk: v\n---\n",  # a BOM (the indexer strips it before parsing)
    ],
)
def test_only_a_dashes_line_at_offset_zero_opens_frontmatter(text: str) -> None:
    parsed = parse_markdown(text)
    assert parsed.frontmatter == {}
    assert parsed.frontmatter_span is None
    assert parsed.body_start == 0


def test_closing_fence_must_be_a_whole_line_at_the_left_margin() -> None:
    # `----` and `--- trailing` do not close, so the YAML runs on to the real fence (and fails)
    for text in ("---\na: 1\n----\nb: 2\n---\nbody", "---\na: 1\n--- trailing\nb: 2\n---\nbody"):
        parsed = parse_markdown(text)
        assert parsed.frontmatter_error is not None
        assert parsed.body == text
    # an indented `---` inside a block scalar does not close either
    parsed = parse_markdown("---\na: |\n  ---\n  x\n---\nbody")
    assert parsed.frontmatter == {"a": "---\nx\n"}
    assert parsed.body == "body"


# -- title ------------------------------------------------------------------------------------


def test_first_heading_is_the_first_h1() -> None:
    text = "intro\n## Second level\n# First H1\n# Second H1\n"
    assert parse_markdown(text).first_heading == "First H1"


def test_no_h1_gives_none() -> None:
    assert parse_markdown("## Only h2\n### h3\n#hashtag\n").first_heading is None
    assert parse_markdown("").first_heading is None


def test_first_heading_trims_closing_hashes_and_indentation() -> None:
    assert parse_markdown("   #   Spaced title   ##  \n").first_heading == "Spaced title"
    assert parse_markdown("#\tTabbed\n").first_heading == "Tabbed"
    assert parse_markdown("    # four spaces is code\n").first_heading is None


@pytest.mark.parametrize(
    ("line", "title"),
    [("# Learning C#", "Learning C#"), ("# F# notes", "F# notes"), ("# Issue #12", "Issue #12")],
)
def test_hash_at_the_end_of_a_title_word_is_kept(line: str, title: str) -> None:
    # A closing sequence of #s must follow a space (CommonMark); "C#" keeps its #.
    assert parse_markdown(line + "\n").first_heading == title


def test_first_heading_ignores_headings_in_code_fences() -> None:
    text = "```\n# not a title\n```\n~~~python\n# comment\n~~~\n# Real Title\n"
    assert parse_markdown(text).first_heading == "Real Title"


def test_first_heading_fence_must_be_closed_by_the_same_kind() -> None:
    text = "~~~\n```\n# still code\n```\n~~~\n# Real Title\n"
    assert parse_markdown(text).first_heading == "Real Title"
    text = "````\n```\n# still code\n````\n# Real Title\n"
    assert parse_markdown(text).first_heading == "Real Title"


def test_first_heading_inside_an_unclosed_fence_is_ignored() -> None:
    assert parse_markdown("```\n# hidden\nmore code\n").first_heading is None


def test_first_heading_comes_from_the_body_not_the_frontmatter() -> None:
    text = "---\nnote: |\n  # not this\n---\n# This\n"
    assert parse_markdown(text).first_heading == "This"


def test_first_heading_is_capped_at_300_characters() -> None:
    heading = parse_markdown("# " + "t" * 400 + "\n").first_heading
    assert heading == "t" * 300


def test_crlf_heading() -> None:
    assert parse_markdown("# Windows title\r\nbody\r\n").first_heading == "Windows title"


# -- fragments: small documents ---------------------------------------------------------------


def test_short_body_keeps_only_full() -> None:
    text = "# Title\n\n## A\n- one\n- two\n```\ncode\n```\n"
    parsed, fragments = fragments_of(text, "Title")
    assert len(text) < SPLIT_THRESHOLD
    assert fragments == [Fragment(0, "full", "Title", 0, len(text))]
    check_invariants(parsed, fragments)


def test_threshold_counts_the_body_not_the_frontmatter() -> None:
    frontmatter = "---\n" + "".join(f"key{i}: value number {i}\n" for i in range(20)) + "---\n"
    body = "## A\n" + "x" * 100 + "\n## B\n" + "y" * 60 + "\n"
    parsed, fragments = fragments_of(frontmatter + body)
    assert len(parsed.body) < SPLIT_THRESHOLD
    assert [f.fragment_type for f in fragments] == ["full"]
    assert slice_of(parsed.text, fragments[0]) == body


def test_empty_text() -> None:
    parsed, fragments = fragments_of("")
    assert fragments == [Fragment(0, "full", "Doc", 0, 0)]
    check_invariants(parsed, fragments)


def test_full_covers_the_body_after_frontmatter() -> None:
    text = "---\nk: v\n---\n" + "word " * 100
    parsed, fragments = fragments_of(text)
    assert slice_of(text, fragments[0]) == parsed.body == "word " * 100


def test_full_is_capped_at_the_full_limit() -> None:
    text = "a" * (FULL_LIMIT + 10)
    parsed, fragments = fragments_of(text)
    assert fragments[0].end - fragments[0].start == FULL_LIMIT
    check_invariants(parsed, fragments)


def test_labels_are_capped_at_200_characters() -> None:
    _parsed, fragments = fragments_of("x" * 300, title="T" * 500)
    assert fragments[0].label == "T" * 200


# -- fragments: structure ---------------------------------------------------------------------


def section_doc() -> str:
    return (
        "---\n"
        "title: Sections\n"
        "summary: a frontmatter block long enough to be its own fragment\n"
        "---\n"
        "Preamble paragraph before any heading, long enough to count as a section.\n"
        "\n"
        "# Alpha\n"
        "Alpha body text that is comfortably longer than fifty characters in all.\n"
        "\n"
        "## Beta\n"
        "Beta body text that is also comfortably longer than fifty characters.\n"
        "\n"
        "## Gamma\n"
        "tiny\n"
    )


def test_frontmatter_fragment() -> None:
    parsed, fragments = fragments_of(section_doc())
    frontmatter = by_type(fragments, "frontmatter")
    assert len(frontmatter) == 1
    assert parsed.frontmatter_span == (frontmatter[0].start, frontmatter[0].end)
    assert slice_of(parsed.text, frontmatter[0]).startswith("title: Sections\n")
    assert fragments[1] == frontmatter[0], "frontmatter comes right after full"
    check_invariants(parsed, fragments)


def test_short_frontmatter_gets_no_fragment() -> None:
    text = "---\nk: v\n---\n" + "Body words here. " * 20
    parsed, fragments = fragments_of(text)
    assert by_type(fragments, "frontmatter") == []
    check_invariants(parsed, fragments)


def test_sections_per_heading_with_preamble_under_the_title() -> None:
    parsed, fragments = fragments_of(section_doc(), "Doc title")
    sections = by_type(fragments, "section")
    assert [s.label for s in sections] == ["Doc title", "Alpha", "Beta"]  # Gamma is too short
    assert slice_of(parsed.text, sections[0]).startswith("Preamble paragraph")
    assert slice_of(parsed.text, sections[1]).startswith("# Alpha\nAlpha body")
    assert slice_of(parsed.text, sections[2]).startswith("## Beta\nBeta body")
    for section in sections:
        piece = slice_of(parsed.text, section)
        assert piece == piece.strip(), "sections are trimmed of surrounding whitespace"
    check_invariants(parsed, fragments)


def test_section_runs_to_the_next_heading_of_any_level() -> None:
    text = "# A\n" + "a" * 100 + "\n### C\n" + "c" * 100 + "\n"
    _parsed, fragments = fragments_of(text)
    sections = by_type(fragments, "section")
    assert [slice_of(text, s) for s in sections] == ["# A\n" + "a" * 100, "### C\n" + "c" * 100]


def test_one_short_section_does_not_repeat_full() -> None:
    text = "# Only\n" + "word " * 100
    _parsed, fragments = fragments_of(text)
    assert [f.fragment_type for f in fragments] == ["full"]


def test_one_long_section_is_cut_at_paragraph_breaks() -> None:
    paragraphs = [f"Paragraph {i}. " + "filler words " * 40 for i in range(12)]
    text = "# Long\n\n" + "\n\n".join(paragraphs) + "\n"
    parsed, fragments = fragments_of(text)
    sections = by_type(fragments, "section")
    assert len(sections) >= 3
    for section in sections:
        piece = slice_of(text, section)
        assert piece.startswith(("# Long", "Paragraph")), "cuts land on paragraph breaks"
        assert piece.rstrip().endswith("filler words") or piece.endswith("filler")
    # consecutive pieces leave only whitespace between them, so nothing is lost
    for before, after in itertools.pairwise(sections):
        assert text[before.end : after.start].strip() == ""
    assert sections[0].start == 0
    assert text[sections[-1].end :].strip() == ""
    check_invariants(parsed, fragments)


def test_long_text_without_breaks_is_cut_at_spaces_then_hard() -> None:
    words_text = "# T\n" + " ".join(["word"] * 1200)
    parsed, fragments = fragments_of(words_text)
    sections = by_type(fragments, "section")
    assert len(sections) >= 3
    for section in sections[1:]:
        assert words_text[section.start - 1] == " "  # cut at a space
    check_invariants(parsed, fragments)

    solid = "# T\n" + "x" * 5000
    parsed, fragments = fragments_of(solid)
    sections = by_type(fragments, "section")
    assert [s.end - s.start for s in sections] == [2000, 2000, 1004]
    check_invariants(parsed, fragments)


def test_short_tail_is_merged_without_passing_the_maximum() -> None:
    # A 1,990-character paragraph, a break, then a 40-character tail: the tail is too short
    # to stand alone and merging it would make a 2,038-character piece.
    section = "## B\n\n" + "x" * 1990 + "\n\n" + "y" * 40
    text = "# A\n\n" + "intro " * 40 + "\n\n" + section + "\n\n## C\n\n" + "z " * 60
    parsed, fragments = fragments_of(text)
    check_invariants(parsed, fragments)
    b_pieces = [f for f in by_type(fragments, "section") if f.label == "B"]
    covered = "".join(slice_of(text, f) for f in b_pieces)
    assert "y" * 40 in covered
    assert covered.count("x") == 1990


@pytest.mark.parametrize("tail", [1, 10, 49, 50, 51])
def test_tails_of_any_length_respect_the_bounds(tail: int) -> None:
    for body_length in (1995, 1998, 2000, 2001, 2040, 3990, 4000):
        text = "# T\n" + "x" * body_length + "\n\n" + "y" * tail
        check_invariants(*fragments_of(text))


def test_list_runs_are_fragments() -> None:
    items = "".join(f"- item number {i} with some words\n" for i in range(6))
    text = "# Lists\n\nSome intro paragraph text here.\n\n" + items + "\nAfter the list.\n"
    text += "\n## Numbered\n\n" + "".join(f"{i}. step {i} of the procedure\n" for i in range(1, 5))
    text += "\nClosing words that end the document.\n"
    parsed, fragments = fragments_of(text)
    lists = by_type(fragments, "list")
    assert [f.label for f in lists] == ["Lists", "Numbered"]
    assert slice_of(text, lists[0]) == items.rstrip("\n")
    assert slice_of(text, lists[1]).startswith("1. step 1")
    assert slice_of(text, lists[1]).endswith("4. step 4 of the procedure")
    check_invariants(parsed, fragments)


def test_list_run_continues_across_blank_lines_and_indented_continuations() -> None:
    items = (
        "* first item of the list\n"
        "  continued on an indented line\n"
        "\n"
        "+ second item after a blank line\n"
        "1) third item with a paren number\n"
    )
    text = "# L\n\n" + items + "\nparagraph that closes the list and is long enough " * 4
    _parsed, fragments = fragments_of(text)
    lists = by_type(fragments, "list")
    assert len(lists) == 1
    assert slice_of(text, lists[0]) == items.rstrip("\n")


def test_list_is_closed_by_a_heading_and_a_code_fence() -> None:
    run = "- alpha item text\n- beta item text\n- gamma item text\n"
    text = (
        "# One\n" + run + "## Two\n" + run + "```\ncode block body\n```\n" + run + "closing " * 30
    )
    _parsed, fragments = fragments_of(text)
    lists = by_type(fragments, "list")
    assert [f.label for f in lists] == ["One", "Two", "Two"]
    assert all(slice_of(text, f) == run.rstrip("\n") for f in lists)


def test_short_list_gets_no_fragment() -> None:
    text = "# T\n\n- a\n- b\n\n" + "paragraph words " * 20
    _parsed, fragments = fragments_of(text)
    assert by_type(fragments, "list") == []


def test_code_fences_are_fragments_with_language_in_the_label() -> None:
    code = "```python\n" + "".join(f"print({i})  # a line of code\n" for i in range(5)) + "```"
    tilde = "~~~\n" + "plain tilde fenced block, long enough to be kept\n" + "~~~"
    text = "# Code\n\nIntro text before the code.\n\n" + code + "\n\n" + tilde + "\n\nafter\n"
    parsed, fragments = fragments_of(text)
    codes = by_type(fragments, "code")
    assert [f.label for f in codes] == ["Code (python)", "Code"]
    assert slice_of(text, codes[0]) == code
    assert slice_of(text, codes[1]) == tilde
    check_invariants(parsed, fragments)


def test_headings_and_lists_inside_code_are_not_structure() -> None:
    code = "```\n# comment, not a heading\n- not a list item\n- nor this one\n" + "x" * 60 + "\n```"
    text = "# Real\n\n" + "text " * 20 + "\n\n" + code + "\n\n## Next\n\n" + "more " * 20
    _parsed, fragments = fragments_of(text)
    assert [f.label for f in by_type(fragments, "section")] == ["Real", "Next"]
    assert by_type(fragments, "list") == []
    assert len(by_type(fragments, "code")) == 1


def test_code_fence_closes_only_on_same_character_and_at_least_same_length() -> None:
    code = "````\n```\ninner fence line that must not close the block\n~~~~\n````"
    text = "# T\n\n" + "words " * 20 + "\n\n" + code + "\n\n" + "after " * 20
    _parsed, fragments = fragments_of(text)
    codes = by_type(fragments, "code")
    assert len(codes) == 1
    assert slice_of(text, codes[0]) == code


def test_unclosed_code_fence_runs_to_the_end() -> None:
    text = "# T\n\n" + "intro " * 20 + "\n\n```sh\n" + "echo unclosed block\n" * 5
    parsed, fragments = fragments_of(text)
    codes = by_type(fragments, "code")
    assert len(codes) == 1
    assert slice_of(text, codes[0]).startswith("```sh\necho")
    assert codes[0].end == len(text.rstrip())
    check_invariants(parsed, fragments)


def test_long_code_block_is_cut_into_pieces() -> None:
    code = "```\n" + "".join(f"line {i} of a long generated listing\n" for i in range(200)) + "```"
    text = "# T\n\n" + code + "\n"
    parsed, fragments = fragments_of(text)
    codes = by_type(fragments, "code")
    assert len(codes) >= 3
    check_invariants(parsed, fragments)


def test_crlf_document_fragments() -> None:
    text = ("# A\r\n" + "alpha text line\r\n" * 8 + "## B\r\n" + "- item line\r\n" * 6) * 2
    parsed, fragments = fragments_of(text)
    check_invariants(parsed, fragments)
    for fragment in fragments[1:]:
        assert not slice_of(text, fragment).endswith(("\r", "\n"))
    assert {f.fragment_type for f in fragments} == {"full", "section", "list"}


def test_fragment_order_is_document_order_after_full() -> None:
    text = section_doc() + "\n- list item one here\n- list item two here\n- three too\n" * 3
    _parsed, fragments = fragments_of(text)
    assert fragments[0].fragment_type == "full"
    keys = [(f.start, f.fragment_type) for f in fragments[1:]]
    assert keys == sorted(keys)


def test_at_most_500_fragments() -> None:
    text = "".join(f"## Heading {i}\n{'body text ' * 8}\n" for i in range(700))
    parsed, fragments = fragments_of(text)
    assert len(fragments) == MAX_FRAGMENTS
    assert fragments[0].fragment_type == "full"
    check_invariants(parsed, fragments)


def test_parse_split_on_odd_line_separators() -> None:
    # splitlines() also breaks on \x0b, \x0c, \x1c, \x85, \u2028 and \u2029.
    text = "# T\x0c" + "para\u2028graph " * 30 + "\x85## U\u2029" + "more\x0btext " * 30
    check_invariants(*fragments_of(text))


# -- fragments: properties --------------------------------------------------------------------

_LINES = st.sampled_from(
    [
        "",
        "# Title",
        "## Section",
        "### Deep #",
        "- item",
        "  continued",
        "1. numbered",
        "```",
        "```python",
        "~~~",
        "````",
        "---",
        "...",
        "title: x",
        "a: [",
        "plain words " * 5,
        "x" * 700,
        "y " * 400,
        "\r",
        "中文段落内容",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_LINES, max_size=60), st.sampled_from(["\n", "\r\n"]), st.text(max_size=30))
def test_fragment_invariants_hold_for_generated_markdown(
    lines: list[str], newline: str, title: str
) -> None:
    text = newline.join(lines)
    check_invariants(*fragments_of(text, title))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=3000))
def test_fragment_invariants_hold_for_any_text(text: str) -> None:
    parsed = parse_markdown(text)
    assert parsed.text is text
    assert parsed.body == text[parsed.body_start :]
    check_invariants(parsed, split_fragments(parsed, "t"))
