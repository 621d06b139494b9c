from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memtrove.index.classify import (
    CONFIDENCE_BASELINE,
    CONTENT_TYPES,
    classify_content_type,
    confidence_baseline,
    quality_score,
)
from memtrove.index.markdown import document_title, parse_markdown


def classify(
    path: str = "misc/file.md",
    title: str = "Untitled",
    body: str = "",
    frontmatter: dict[str, Any] | None = None,
) -> str:
    return classify_content_type(path, title, body, frontmatter or {})


# -- frontmatter ------------------------------------------------------------------------------


@pytest.mark.parametrize("content_type", CONTENT_TYPES)
def test_frontmatter_type_naming_a_known_type_wins(content_type: str) -> None:
    # path and title both point elsewhere; the declared type still wins
    assert (
        classify("decisions/adr-1.md", "Weekly status update", frontmatter={"type": content_type})
        == content_type
    )


@pytest.mark.parametrize(
    ("declared", "expected"),
    [
        ("adr", "decision"),
        ("ADR", "decision"),
        ("  Decision_Record ", "decision"),
        ("decisions", "decision"),
        ("preferences", "preference"),
        ("notes", "note"),
        ("session", "handoff"),
        ("chat", "conversation"),
        ("transcript", "conversation"),
        ("status", "progress"),
        ("changelog", "progress"),
        ("moc", "hub"),
        ("index", "hub"),
        ("anti-pattern", "antipattern"),
        ("Anti_Pattern", "antipattern"),
        ("pitfall", "antipattern"),
        ("lesson", "antipattern"),
        ("release", "milestone"),
        ("postmortem", "problem"),
        ("incident", "problem"),
        ("bug", "problem"),
        ("projects", "project"),
    ],
)
def test_frontmatter_aliases(declared: str, expected: str) -> None:
    assert classify(frontmatter={"type": declared}) == expected


def test_content_type_key_is_used_when_type_is_unknown_or_absent() -> None:
    assert classify(frontmatter={"content_type": "research"}) == "research"
    assert classify(frontmatter={"type": "weird", "content_type": "chat"}) == "conversation"
    # `type` is checked first
    assert classify(frontmatter={"type": "hub", "content_type": "research"}) == "hub"


@pytest.mark.parametrize("declared", [5, None, True, ["decision"], {"name": "decision"}, ""])
def test_non_string_or_unknown_declared_types_fall_through(declared: object) -> None:
    assert classify(frontmatter={"type": declared}) == "note"
    assert classify("decisions/x.md", frontmatter={"type": declared}) == "decision"


def test_unknown_declared_type_falls_back_to_path() -> None:
    assert classify("research/x.md", frontmatter={"type": "recipe"}) == "research"


# -- path -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("decisions/use-sqlite.md", "decision"),
        ("Decisions/Use SQLite.md", "decision"),
        ("docs/adr/0001-record.md", "decision"),
        ("adrs/x.md", "decision"),
        ("anti-patterns/globals.md", "antipattern"),
        ("pitfalls/x.md", "antipattern"),
        ("deductions/x.md", "deductive"),
        ("preferences.md", "preference"),
        ("handoffs/2024-05-01.md", "handoff"),
        ("sessions/x.md", "handoff"),
        ("chats/x.md", "conversation"),
        ("progress/week-12.md", "progress"),
        ("standup-notes.md", "progress"),
        ("research/vector-dbs.md", "research"),
        ("spike/x.md", "research"),
        ("releases/v1.md", "milestone"),
        ("incidents/outage.md", "problem"),
        ("bugs/x.md", "problem"),
        ("roadmap.md", "project"),
        ("projects/memtrove.md", "project"),
        ("doc/adr/0005-help-comments.md", "decision"),
        ("docs/decisions/0001-use-postgres.md", "decision"),
        ("docs/architecture-decisions/use-kafka.md", "decision"),
        ("decision-records/2024-01-cache.md", "decision"),
        ("ADR-0012-queues.md", "decision"),
        ("proposals/accepted/faster-maps.md", "decision"),
        ("rfcs/accepted/0001-x.md", "decision"),
    ],
)
def test_path_words(path: str, expected: str) -> None:
    assert classify(path) == expected


def test_path_words_are_whole_tokens() -> None:
    assert classify("decisionsmaking/x.md") == "note"
    assert classify("adrenaline.md") == "note"
    assert classify("notes/antiques.md") == "note"
    assert classify("my_decision_log.md") == "decision"


def test_anti_counts_only_with_pattern() -> None:
    assert classify("anti/x.md") == "note"
    assert classify("anti-virus/scan.md") == "note"
    assert classify("anti-patterns/x.md") == "antipattern"
    assert classify("anti_pattern.md") == "antipattern"


def test_path_rules_are_checked_in_order() -> None:
    # antipattern is listed before decision, decision before project
    assert classify("decisions/pitfalls/x.md") == "antipattern"
    assert classify("projects/decisions/x.md") == "decision"


@pytest.mark.parametrize(
    "path",
    ["index.md", "notes/README.md", "a/b/_index.md", "HUB.md", "topics/moc.md", "hubs/topics.md"],
)
def test_file_and_folder_names_never_make_a_hub(path: str) -> None:
    assert classify(path, body="Some prose about the topic.\n\nMore prose.\n") == "note"
    assert classify(path, body=LINK_LIST) == "hub"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("notes/session-cookies.md", "note"),
        ("docs/release-process.md", "note"),
        ("12302-release-proposal.md", "note"),
        ("sessions/2024-05-01.md", "handoff"),
        ("releases/v2.md", "milestone"),
    ],
)
def test_session_and_release_count_only_as_folder_names(path: str, expected: str) -> None:
    assert classify(path) == expected


def test_accepted_needs_a_proposal_word() -> None:
    assert classify("proposals/draft/x.md") == "note"
    assert classify("accepted/x.md") == "note"
    assert classify("design/accepted/x.md") == "decision"


def test_path_beats_title() -> None:
    assert classify("research/x.md", title="ADR-7: choose a queue") == "research"


# -- title ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("ADR-001: use SQLite", "decision"),
        ("ADR 12", "decision"),
        ("ADR 12: use a queue", "decision"),
        ("Use a queue (ADR-0012)", "decision"),
        ("Decision record: caching", "decision"),
        ("Architectural decision log", "decision"),
        ("Architecture decision: monorepo", "decision"),
        ("Accepted proposal: faster maps", "decision"),
        ("RFC 42: async closures (accepted)", "decision"),
        ("Proposal accepted: generics", "decision"),
        ("Decision: monorepo", "decision"),
        ("Architecture decision record for caching", "decision"),
        ("Handoff for Friday", "handoff"),
        ("hand-off notes", "handoff"),
        ("Anti-patterns in tests", "antipattern"),
        ("Avoid global state", "antipattern"),
        ("Don't mock the database", "antipattern"),
        ("Never force-push main", "antipattern"),
        ("Post-mortem: the March outage", "problem"),
        ("Incident 42", "problem"),
        ("Milestone 3 reached", "milestone"),
        ("Released v2.1", "milestone"),
        ("Benchmark of vector stores", "research"),
        ("Benchmarks of FTS engines", "research"),
        ("Vector store benchmark results", "research"),
        ("Comparison: FTS5 vs Tantivy", "research"),
        ("Progress on indexing", "progress"),
        ("Weekly status for team", "progress"),
        ("Editor preferences", "preference"),
        ("Roadmap 2025", "project"),
        ("Project overview", "project"),
    ],
)
def test_title_wording(title: str, expected: str) -> None:
    assert classify(title=title) == expected


@pytest.mark.parametrize(
    "title",
    [
        "Decisive moves",
        "Readme",
        "Project",
        "I avoid nothing",
        "Handoffs",
        "Shopping list",
        "Go Benchmark Data Format",
        "Programmatic sub-benchmark support",
        "Proposal: make accepted connections faster",
        "Padrone 7",
    ],
)
def test_title_wording_needs_the_right_words(title: str) -> None:
    assert classify(title=title) == "note"


# -- body: conversation and hub ---------------------------------------------------------------


def test_conversation_needs_four_speaker_lines() -> None:
    three = "User: hi\nAssistant: hello\nUser: how?\nSome prose.\n"
    assert classify(body=three) == "note"
    four = three + "**Assistant**: like this\n"
    assert classify(body=four) == "conversation"
    mixed = "Human: a\nAI: b\n  claude: c\nUSER: d\n"
    assert classify(body=mixed) == "conversation"


def test_conversation_looks_only_at_the_opening() -> None:
    speakers = "User: a\nAssistant: b\nUser: c\nAssistant: d\n"
    assert classify(body="x" * 3000 + "\n" + speakers) == "note"
    assert classify(body=speakers + "x" * 3000) == "conversation"


def test_speaker_words_must_start_the_line() -> None:
    body = "the user: said\n" * 6
    assert classify(body=body) == "note"


LINK_LIST = "\n".join(f"- [Topic {i}](topic-{i}.md)" for i in range(6))


def test_hub_from_links() -> None:
    wiki = "\n".join(f"- [[Topic {i}]]" for i in range(5))
    assert classify(body=wiki) == "hub"
    assert classify(body=LINK_LIST) == "hub"
    autolinks = "\n".join(f"* <https://example.com/{i}>" for i in range(5))
    assert classify(body=autolinks) == "hub"
    bare = "\n".join(f"{i}. https://example.com/{i}" for i in range(5))
    assert classify(body=bare) == "hub"
    reference = "\n".join(f"- [Topic {i}][t{i}]" for i in range(5))
    reference += "\n\n" + "\n".join(f"[t{i}]: topic-{i}.md" for i in range(5))
    assert classify(body=reference) == "hub", "reference definitions are not content lines"


def test_hub_needs_five_links_and_sixty_percent_of_the_lines() -> None:
    four = "\n".join(f"- [[Topic {i}]]" for i in range(4))
    assert classify(body=four) == "note"
    six = "\n".join(f"- [[Topic {i}]]" for i in range(6))
    assert classify(body=six + "\n" + "\n".join(f"prose {i}" for i in range(4))) == "hub"
    assert classify(body=six + "\n" + "\n".join(f"prose {i}" for i in range(5))) == "note"
    # blank lines, headings and rules do not count against the share
    spaced = "\n\n\n".join(f"[[Topic {i}]]" for i in range(5))
    assert classify(body=spaced) == "hub"
    grouped = "# Index\n\n## Auth\n\n" + six + "\n\n---\n\n## Storage\n\n" + LINK_LIST
    assert classify(body=grouped) == "hub"


def test_link_entries_with_long_descriptions_are_link_lines() -> None:
    described = "\n".join(
        f"* [ADR-{i}](adr/{i}.md) - Use a custom implementation of OIDC to authenticate CI "
        "jobs with the cloud rather than the registry module"
        for i in range(6)
    )
    assert classify(body=described) == "hub"
    table = "| Record | Status |\n| --- | --- |\n" + "\n".join(
        f"| [Record kudos movements as events {i}](000{i}-x.md) | accepted |" for i in range(6)
    )
    assert classify(body=table) == "hub"


def test_prose_with_links_is_no_hub() -> None:
    prose = "\n".join(
        f"We measured this in [run {i}](runs/{i}.md) and found that the queue kept up with "
        "the load for the whole of the afternoon without any trouble at all."
        for i in range(8)
    )
    assert classify(body=prose) == "note"


def test_anchors_images_code_and_comments_are_not_links() -> None:
    toc = "\n".join(f"- [Section {i}](#section-{i})" for i in range(30))
    assert classify(body=toc + "\n\nSome prose.\n") == "note"
    images = "\n".join(f"![shot {i}](img/{i}.png)" for i in range(8))
    assert classify(body=images) == "note"
    code = "```\n" + LINK_LIST + "\n```\nprose line\n"
    assert classify(body=code) == "note"
    comment = "<!--\n" + LINK_LIST + "\n-->\nprose line\n"
    assert classify(body=comment) == "note"


def test_a_link_page_is_a_hub_whatever_its_path() -> None:
    assert classify("docs/decisions/README.md", "Decision log", LINK_LIST) == "hub"
    assert classify("handoffs/index.md", "Handoffs", LINK_LIST) == "hub"


# -- decision records -------------------------------------------------------------------------

NYGARD_ADR = (
    "# Rotate refresh tokens\n\n## Status\n\nAccepted\n\n## Context\n\nTokens leak.\n\n"
    "## Decision\n\nWe will rotate refresh tokens on every use.\n\n"
    "## Consequences\n\nOne more write per refresh.\n"
)
MADR = (
    "# Use Markdown ADRs\n\n* Status: accepted\n\n## Context and Problem Statement\n\nWhy?\n\n"
    "## Considered Options\n\n* MADR\n* Nygard\n\n## Decision Outcome\n\nChosen: MADR.\n"
)


@pytest.mark.parametrize("body", [NYGARD_ADR, MADR])
def test_an_index_page_holding_a_decision_record_is_a_decision(body: str) -> None:
    assert classify("auth/refresh-tokens/index.md", "refresh tokens", body) == "decision"
    assert classify("topic/README.md", "Rotate refresh tokens", body) == "decision"


def test_decision_record_layout_needs_a_decision_heading_and_a_companion() -> None:
    assert classify(body="## Context\n\nx\n\n## Consequences\n\ny\n") == "note"
    assert classify(body="## Decision\n\nWe pick A.\n") == "note"
    assert classify(body="## 3. Decision:\n\nA.\n\n## 1. Status\n\nDone.\n") == "decision"
    assert classify(body="## Decisions made\n\nA.\n\n## Status\n\nDone.\n") == "note"


def test_an_index_page_titled_as_a_decision_is_a_decision() -> None:
    assert classify("topic/index.md", "ADR 12: use a queue", "We use a queue.") == "decision"


def test_path_beats_the_decision_layout() -> None:
    assert classify("research/queues.md", "Queues", NYGARD_ADR) == "research"


def test_frontmatter_beats_links_and_layout() -> None:
    assert classify("index.md", body=LINK_LIST, frontmatter={"type": "note"}) == "note"
    assert classify("adr/1.md", body=NYGARD_ADR, frontmatter={"type": "research"}) == "research"
    assert classify("index.md", body="prose", frontmatter={"content_type": "hub"}) == "hub"
    assert classify("index.md", body="prose", frontmatter={"type": "moc"}) == "hub"


# -- real documents ---------------------------------------------------------------------------

GO_PROPOSALS = Path(__file__).resolve().parents[3] / "shared" / "bench" / "prose" / "go-proposals"
EXAMPLE_VAULT = Path(__file__).resolve().parents[2] / "examples" / "vault"


def classify_file(root: Path, path: Path) -> str:
    parsed = parse_markdown(path.read_text(encoding="utf-8"))
    relative = path.relative_to(root).as_posix()
    return classify_content_type(
        relative, document_title(parsed, relative), parsed.body, parsed.frontmatter
    )


def test_real_go_design_documents_are_no_hubs() -> None:
    if not GO_PROPOSALS.is_dir():
        pytest.skip("the Go design documents are not on this machine")
    types = {path.name: classify_file(GO_PROPOSALS, path) for path in GO_PROPOSALS.glob("*.md")}
    assert len(types) > 100
    assert set(types.values()) == {"note"}, {k: v for k, v in types.items() if v != "note"}


def test_example_vault_types() -> None:
    if not EXAMPLE_VAULT.is_dir():
        pytest.skip("no example vault")
    types = {
        path.relative_to(EXAMPLE_VAULT).as_posix(): classify_file(EXAMPLE_VAULT, path)
        for path in EXAMPLE_VAULT.rglob("*.md")
    }
    assert types["index.md"] == "hub"
    hubs = [path for path, content_type in types.items() if content_type == "hub"]
    assert hubs == ["index.md"]
    decisions = sorted(path for path, content_type in types.items() if content_type == "decision")
    assert decisions == sorted(p for p in types if p.startswith("decisions/"))


def test_title_beats_body_detection() -> None:
    speakers = "User: a\nAssistant: b\nUser: c\nAssistant: d\n"
    assert classify(title="Handoff", body=speakers) == "handoff"


def test_note_fallback() -> None:
    assert classify("misc/thoughts.md", "Random thoughts", "Just some text.") == "note"
    assert classify("", "", "") == "note"


@given(
    st.text(max_size=60),
    st.text(max_size=60),
    st.text(max_size=400),
    st.dictionaries(st.sampled_from(["type", "content_type", "x"]), st.text(max_size=20)),
)
def test_classification_is_always_a_known_type(
    path: str, title: str, body: str, frontmatter: dict[str, str]
) -> None:
    assert classify_content_type(path, title, body, frontmatter) in CONTENT_TYPES


# -- quality ----------------------------------------------------------------------------------

RICH = (
    "# Title\n\n## Context\n\nWe decided to use SQLite because it is simple.\n\n"
    "## Options\n\n- one\n- two\n- three\n- four\n- five\n- six\n\n"
    "## Correction\n\nActually the first benchmark was wrong.\n\n## Outcome\n\n" + "text " * 300
)


def test_quality_of_empty_bodies() -> None:
    assert quality_score("", False) == 0.0
    assert quality_score("  \n\t ", False) == 0.0
    assert quality_score("", True) == 0.2


def test_frontmatter_adds_exactly_0_2() -> None:
    for body in ("short", "x" * 700, "# A\n\n- b\n" * 3, "We decided because."):
        assert quality_score(body, True) == pytest.approx(quality_score(body, False) + 0.2)


def test_length_part_saturates_at_1500_characters() -> None:
    assert quality_score("x" * 1500, False) == 0.25
    assert quality_score("x" * 150_000, False) == 0.25
    assert quality_score("x" * 100, False) < quality_score("x" * 1000, False) < 0.25


def test_headings_lists_and_wording_each_raise_the_score() -> None:
    base = "plain text " * 150  # 1,650 characters: length part is full
    plain = quality_score(base, False)
    assert plain == 0.25
    headings = quality_score("# A\n## B\n### C\n#### D\n" + base, False)
    assert headings == pytest.approx(plain + 0.2, abs=1e-3)
    lists = quality_score("- a\n* b\n+ c\n1. d\n2) e\n3. f\n" + base, False)
    assert lists == pytest.approx(plain + 0.15, abs=1e-3)
    assert quality_score(base + " we decided", False) == pytest.approx(plain + 0.1)
    assert quality_score(base + " turns out", False) == pytest.approx(plain + 0.1)


def test_structure_parts_saturate() -> None:
    base = "plain text " * 150
    four = quality_score("# A\n" * 4 + base, False)
    assert quality_score("# A\n" * 40 + base, False) == four
    six = quality_score("- a\n" * 6 + base, False)
    assert quality_score("- a\n" * 60 + base, False) == six
    once = quality_score(base + " decided", False)
    assert quality_score(base + " decided" * 50, False) == once


def test_headings_and_list_items_need_a_space_and_a_word_on_their_own_line() -> None:
    base = "plain text " * 150
    assert quality_score("#hashtag\n#\n####### seven\n" + base, False) == 0.25
    # a bare marker does not borrow the next line's first character
    assert quality_score("#\nnext line\n##\n\nmore\n" + base, False) == 0.25
    assert quality_score("-\nnext line\n1.\n\nmore\n*\n" + base, False) == 0.25
    assert quality_score("-not a list\n2.0 is a number\n" + base, False) == 0.25


def test_rich_note_scores_high_and_is_capped_at_one() -> None:
    assert quality_score(RICH, False) == pytest.approx(0.8, abs=1e-3)
    assert quality_score(RICH, True) == 1.0


def test_quality_is_rounded_to_four_places() -> None:
    score = quality_score("x" * 333, False)
    assert score == round(score, 4)


@given(st.text(max_size=3000), st.booleans())
def test_quality_is_between_zero_and_one(body: str, has_frontmatter: bool) -> None:
    score = quality_score(body, has_frontmatter)
    assert 0.0 <= score <= 1.0
    if has_frontmatter:
        assert score >= 0.2


@given(st.text(max_size=1500), st.text(max_size=1500))
def test_appending_text_never_lowers_the_score(body: str, extra: str) -> None:
    # Every part is monotonic in what the body contains (length, counts, words present).
    # `extra` is joined on a new line so that it cannot break a word or a heading apart.
    assert quality_score(body + "\n" + extra, False) >= quality_score(body, False)


# -- confidence -------------------------------------------------------------------------------


def test_every_content_type_has_a_baseline() -> None:
    assert set(CONFIDENCE_BASELINE) == set(CONTENT_TYPES)
    for content_type in CONTENT_TYPES:
        assert 0.0 < confidence_baseline(content_type) <= 1.0


def test_confidence_baselines() -> None:
    assert confidence_baseline("decision") == 0.85
    assert confidence_baseline("deductive") == 0.85
    assert confidence_baseline("hub") == 0.80
    assert confidence_baseline("conversation") == 0.55
    assert confidence_baseline("note") == 0.50
    assert confidence_baseline("progress") == 0.50
    assert confidence_baseline("decision") > confidence_baseline("research")
    assert confidence_baseline("research") > confidence_baseline("note")


def test_unknown_type_gets_the_note_baseline() -> None:
    assert confidence_baseline("recipe") == 0.5
    assert confidence_baseline("") == 0.5
