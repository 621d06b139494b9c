"""Texts built to make regular expressions backtrack are read in time proportional to their
length: a line of ``[a](`` repeated, ``](`` without a ``)``, a megabyte word before an
``@``, a heading of a million ``[``. Before, each of these took from minutes to hours (the
patterns re-scanned an unbounded run from every place a match could start, or let two runs
take the same characters); the timeout is a hang guard, generous on any machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.graph.entities import heuristic_entities
from memtrove.index.classify import is_link_page
from memtrove.index.markdown import parse_markdown
from memtrove.lifecycle.feedback import phrases, prepare_reply

pytestmark = pytest.mark.timeout(120)


def test_a_file_of_repeated_link_openings_is_indexed(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "links.md").write_text("# Links\n\n" + "[a](" * 5_000 + "\n", encoding="utf-8")
    (notes / "plain.md").write_text("# Plain\n\nA note about caching.\n", encoding="utf-8")
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "c") as vault:
        vault.add_collection(notes, name="notes")
        report = vault.update()
        assert report.added == 2
        assert [r.path for r in vault.search("caching")] == ["plain.md"]


@pytest.mark.parametrize("unit", ["[a](", "[[", "[a][", "]("])
def test_link_counting_on_a_long_line(unit: str) -> None:
    assert not is_link_page(unit * (20_000 // len(unit)))


def test_real_links_still_count() -> None:
    lines = [f"- [Page {n}](../pages/{n}.md)" for n in range(8)]
    assert is_link_page("\n".join(lines))
    assert not is_link_page("Print[int]([]int{1, 2, 3})\n" * 8)  # Go, not links


@pytest.mark.parametrize(
    "body",
    [
        "](" * 500_000,
        "a" * 1_000_000 + " someone@example.org",
        "Author: " + "(" * 1_000_000,
        "Author: " + "<" * 1_000_000,
        "\n" * 200_000 + "Author: Ada Lovelace",
    ],
)
def test_entity_extraction_on_a_hostile_body(body: str) -> None:
    found = heuristic_entities("title", body)
    if body.endswith("Ada Lovelace"):
        assert ("Ada Lovelace", "person") in [(e.name, e.entity_type) for e in found]


def test_a_heading_of_a_million_brackets() -> None:
    parsed = parse_markdown("# " + "[" * 1_000_000 + "\n\nbody\n")
    assert parsed.title == "[" * 300  # TITLE_LIMIT


def test_feedback_phrases_of_a_long_word() -> None:
    assert phrases("a." * 10_000) == frozenset()
    assert prepare_reply("b" * 100_000 + "/" + " then the cache was rebuilt").phrases is not None


def test_entities_of_a_body_of_many_distinct_names_keep_their_order() -> None:
    """150,000 distinct snake_case names: sorting them by their first place in the token
    list scanned that list once per name (about an hour)."""
    body = "".join(f"## h{n}\n\ntext_{n} value\n\n" for n in range(150_000))
    names = [entity.name for entity in heuristic_entities("title", body)]
    assert names[:3] == ["text_0", "text_1", "text_2"] and len(names) == 150_000
