from __future__ import annotations

import itertools
from pathlib import Path

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
    document_title,
    is_generic_heading,
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
    assert parsed.title == "Hello", "frontmatter title wins over the heading"


def test_frontmatter_with_crlf_line_endings() -> None:
    text = "---\r\ntitle: Windows\r\n---\r\n# Title\r\nbody line\r\n"
    parsed = parse_markdown(text)
    assert parsed.frontmatter == {"title": "Windows"}
    assert parsed.body == "# Title\r\nbody line\r\n"
    assert parsed.title == "Windows"


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
    assert parsed.title == "Title"


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
    assert parsed.title is None, "the block's closing --- is no setext underline"


def test_unclosed_frontmatter_is_plain_body_without_error() -> None:
    text = "---\ntitle: never closed\n# Heading\nbody"
    parsed = parse_markdown(text)
    assert parsed.frontmatter == {}
    assert parsed.frontmatter_error is None
    assert parsed.frontmatter_span is None
    assert parsed.body == text
    assert parsed.title == "Heading"


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


# -- title: headings -------------------------------------------------------------------------


def title(text: str) -> str | None:
    return parse_markdown(text).title


def test_title_is_the_first_heading_of_any_level() -> None:
    assert title("intro\n## Second level\n# First H1\n# Second H1\n") == "Second level"
    assert title("## Only h2\n### h3\n") == "Only h2"
    assert title("###### Deep\n") == "Deep"
    assert title("#hashtag\n####### seven\n") is None
    assert title("") is None


def test_first_heading_is_an_alias_of_title() -> None:
    parsed = parse_markdown("---\ntitle: Declared\n---\n## Heading\n")
    assert parsed.first_heading == parsed.title == "Declared"


def test_first_heading_trims_closing_hashes_and_indentation() -> None:
    assert title("   #   Spaced title   ##  \n") == "Spaced title"
    assert title("#\tTabbed\n") == "Tabbed"
    assert title("    # four spaces is code\n") is None


@pytest.mark.parametrize(
    ("line", "expected"),
    [("# Learning C#", "Learning C#"), ("# F# notes", "F# notes"), ("# Issue #12", "Issue #12")],
)
def test_hash_at_the_end_of_a_title_word_is_kept(line: str, expected: str) -> None:
    # A closing sequence of #s must follow a space (CommonMark); "C#" keeps its #.
    assert title(line + "\n") == expected


def test_first_heading_ignores_headings_in_code_fences() -> None:
    text = "```\n# not a title\n```\n~~~python\n# comment\n~~~\n## Real Title\n"
    assert title(text) == "Real Title"


def test_first_heading_fence_must_be_closed_by_the_same_kind() -> None:
    assert title("~~~\n```\n# still code\n```\n~~~\n# Real Title\n") == "Real Title"
    assert title("````\n```\n# still code\n````\n# Real Title\n") == "Real Title"


def test_first_heading_inside_an_unclosed_fence_is_ignored() -> None:
    assert title("```\n# hidden\nmore code\n") is None


def test_headings_inside_html_comments_are_ignored() -> None:
    # the layout of a Kubernetes KEP: a template comment, then the title
    text = (
        "<!--\n**Note:** remove me.\n# not this\n```\n# nor this\n```\n-->\n# KEP-1287: In-place\n"
    )
    assert title(text) == "KEP-1287: In-place"
    assert title("<!-- a one-line comment -->\n## After\n") == "After"


def test_first_heading_comes_from_the_body_not_the_frontmatter() -> None:
    assert title("---\nnote: |\n  # not this\n---\n# This\n") == "This"


def test_first_heading_is_capped_at_300_characters() -> None:
    assert title("# " + "t" * 400 + "\n") == "t" * 300
    assert title("---\ntitle: " + "d" * 400 + "\n---\n") == "d" * 300


def test_crlf_heading() -> None:
    assert title("# Windows title\r\nbody\r\n") == "Windows title"
    assert title("Setext\r\n===\r\nbody\r\n") == "Setext"


def test_links_in_a_title_keep_their_text() -> None:
    assert title("# Make [lockedfile](https://godoc.org/x) public\n") == "Make lockedfile public"
    assert title("# See [the spec][spec]\n") == "See the spec"


# -- title: setext headings -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["Setext title\n============\nbody", "Setext title\n---\nbody", "\nSetext title\n--\n"],
)
def test_setext_headings(text: str) -> None:
    assert title(text) == "Setext title"


def test_setext_heading_or_atx_heading_whichever_comes_first() -> None:
    assert title("First\n=====\n# Second\n") == "First"
    assert title("# First\nSecond\n=====\n") == "First"


@pytest.mark.parametrize(
    "text",
    [
        "one line\ntwo lines\n---\n",  # a paragraph of two lines: left alone
        "- a list item\n---\n",
        "> a quote\n---\n",
        "| a | b |\n---\n",
        "\n---\nafter a rule\n",  # a rule after a blank line
        "Status: draft\n---\nbody\n",  # key: value over --- ends a metadata block
        "```\ncode\n```\n---\n",
        "    indented code\n---\n",
    ],
)
def test_what_is_not_a_setext_heading(text: str) -> None:
    assert title(text) is None


def test_equals_underline_makes_a_heading_of_a_key_value_line() -> None:
    assert title("Proposal: faster maps\n=====\n") == "Proposal: faster maps"


# -- title: generic headings and metadata -----------------------------------------------------


@pytest.mark.parametrize(
    "heading",
    [
        "Summary",
        "ABSTRACT",
        "Motivation:",
        "1. Introduction",
        "**Overview**",
        "Table of Contents",
        "README",
        "Index",
        "Context",
        "Background",
        "2.1 Contents",
    ],
)
def test_generic_section_headings_never_title_a_document(heading: str) -> None:
    assert is_generic_heading(heading)
    assert title(f"# {heading}\n\nbody text\n") is None


@pytest.mark.parametrize("heading", ["Summary of Q3", "Context switching costs", "Overview: auth"])
def test_headings_that_only_start_with_a_generic_word_are_titles(heading: str) -> None:
    assert not is_generic_heading(heading)
    assert title(f"# {heading}\n") == heading


RUST_RFC = (
    "- Feature Name: `let_else`\n"
    "- Start Date: 2021-05-31\n"
    "- RFC PR: [rust-lang/rfcs#3137](https://github.com/rust-lang/rfcs/pull/3137)\n"
    "- Rust Issue: [rust-lang/rust#87335](https://github.com/rust-lang/rust/issues/87335)\n"
    "\n"
    "# Summary\n"
    "[summary]: #summary\n"
    "\n"
    "Introduce a new `let PATTERN: TYPE = EXPRESSION else DIVERGING_BLOCK;` statement.\n"
    "\n"
    "# Motivation\n"
    "[motivation]: #motivation\n"
)


def test_rust_rfc_metadata_list_gives_the_feature_name() -> None:
    assert title(RUST_RFC) == "let_else"


@pytest.mark.parametrize(
    "value", ["N/A", "none", "TBD", "", "(fill me in with a unique ident, `my_awesome_feature`)"]
)
def test_metadata_placeholders_are_no_titles(value: str) -> None:
    text = RUST_RFC.replace("`let_else`", value)
    assert title(text) is None
    assert document_title(parse_markdown(text), "text/0000-let-else.md") == "0000-let-else"


@pytest.mark.parametrize(
    "opening",
    [
        "title: Pod-level resources\nstatus: implementable\n\n## Summary\n",
        "Title: Pod-level resources\n\nbody\n",
        "- Title: Pod-level resources\n- Authors: someone\n",
        "* **Title:** Pod-level resources\n",
        "**Title**: Pod-level resources\n",
        "% Pod-level resources\n% An Author\n\nbody\n",
        "- Feature Name: ignored\n- Title: Pod-level resources\n# Overview\n",
        "---\ntitle: Pod-level resources: v2\nstatus: [draft\n---\nbody\n",  # broken YAML
    ],
)
def test_title_metadata_lines_before_the_first_heading(opening: str) -> None:
    assert (title(opening) or "").startswith("Pod-level resources")


def test_a_real_heading_beats_metadata() -> None:
    assert title("Title: metadata\n\n# The heading\n") == "The heading"
    assert title(RUST_RFC.replace("# Summary", "# Let-else statements")) == "Let-else statements"


def test_metadata_after_the_first_heading_or_far_down_is_ignored() -> None:
    assert title("# Summary\n\n- Feature Name: late\n") is None
    assert title("\n".join(f"line {i}" for i in range(40)) + "\nTitle: late\n") is None
    assert title("```\nTitle: in code\n```\n") is None


def test_frontmatter_feature_names_a_nixos_rfc() -> None:
    text = "---\nfeature: flake_registry\nstart-date: 2021-01-01\n---\n\n# Summary\nbody\n"
    assert title(text) == "flake_registry"
    template = (
        "---\nfeature: (fill me in with a unique ident, my_awesome_feature)\n---\n# Summary\n"
    )
    assert title(template) is None


def test_frontmatter_title_beats_everything() -> None:
    text = "---\ntitle: Declared\n---\n" + RUST_RFC
    assert title(text) == "Declared"
    assert title("---\ntitle: 42\n---\n# Heading\n") == "42"
    for empty in ("''", "[a, b]", "true", "null"):
        assert title(f"---\ntitle: {empty}\n---\n# Heading\n") == "Heading"


# -- document_title ---------------------------------------------------------------------------


def doc_title(text: str, path: str) -> str:
    return document_title(parse_markdown(text), path)


@pytest.mark.parametrize(
    "name", ["index.md", "README.md", "_index.md", "ReadMe.MD", "INDEX.markdown"]
)
@pytest.mark.parametrize("text", ["", "# Overview\n", "## README\n", "# Index\n\nSee below.\n"])
def test_index_pages_without_a_real_title_take_the_folder_name(name: str, text: str) -> None:
    assert doc_title(text, f"auth/refresh-tokens/{name}") == "refresh tokens"
    assert doc_title(text, f"docs/my_topic/{name}") == "my topic"


def test_index_pages_keep_a_real_title() -> None:
    assert doc_title("# Lanternfish vault - index\n", "index.md") == "Lanternfish vault - index"
    assert doc_title("# Token rotation\n", "auth/README.md") == "Token rotation"
    assert doc_title("---\ntitle: Declared\n---\n", "auth/index.md") == "Declared"
    assert doc_title("- Title: From metadata\n# Summary\n", "auth/index.md") == "From metadata"


def test_index_page_at_the_collection_root_keeps_its_file_name() -> None:
    assert doc_title("# Overview\n", "README.md") == "README"
    assert doc_title("", "index.md") == "index"


def test_other_files_fall_back_to_their_file_name() -> None:
    assert doc_title("# Summary\nbody\n", "text/0000-alloca.md") == "0000-alloca"
    assert doc_title("no heading here\n", "notes/nested/deep/b.md") == "b"
    assert doc_title("## Only h2\n", "notes/a.md") == "Only h2"
    assert doc_title("", "notes/index-of-things.md") == "index-of-things"


GO_PROPOSALS = Path(__file__).resolve().parents[3] / "shared" / "bench" / "prose" / "go-proposals"


def test_real_go_design_documents() -> None:
    if not GO_PROPOSALS.is_dir():
        pytest.skip("the Go design documents are not on this machine")
    expected = {
        "40276-go-install.md": "Proposal: `go install` should install executables in module mode "
        "outside a module",  # a `##` title
        "43810-go-pmem.md": "Proposal: Add support for Persistent Memory in Go",  # a `###` title
        # a link in the heading keeps its text
        "33974-add-public-lockedfile-pkg.md": "Proposal: make the internal lockedfile package "
        "public",
        "12416-cgo-pointers.md": "Proposal: Rules for passing pointers between Go and C",
    }
    for name, wanted in expected.items():
        assert doc_title((GO_PROPOSALS / name).read_text(encoding="utf-8"), name) == wanted
    by_file_name = []
    for path in sorted(GO_PROPOSALS.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        if document_title(parse_markdown(text), path.name) == path.stem:
            by_file_name.append(path.name)
    # only the two one-line "Moved to ..." stubs have no title of their own
    assert by_file_name == ["25530-notary.md", "40307-fuzzing.md"]


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


def test_a_conversation_documents_yaml_gets_no_fragment() -> None:
    """A mined exchange's frontmatter is ids and provenance: not worth a vector."""
    yaml = '---\ntitle: "How do I rotate the keys?"\ncontent_type: conversation\n'
    yaml += 'conversation_id: "c-123456789"\nsource: "export.json"\nformat: chatgpt\n---\n'
    body = "**User:** How do I rotate the keys?\n\n**ChatGPT:** " + "Run the rotation job. " * 20
    parsed, fragments = fragments_of(yaml + body)
    assert by_type(fragments, "frontmatter") == []
    assert fragments[0].fragment_type == "full"
    check_invariants(parsed, fragments)
    _, noted = fragments_of(yaml.replace("conversation", "note", 1) + body)
    assert len(by_type(noted, "frontmatter")) == 1


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
