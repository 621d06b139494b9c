"""Timeline order and neighbours, multi_get patterns and truncation, index and lifecycle counts."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtrove import Document, DocumentNotFoundError, DocumentSummary, InvalidQueryError, Vault
from memtrove.index.timeline import split_pattern
from tests.conftest import write


def dated(date: str, title: str) -> str:
    return f"---\ndate: {date}\n---\n# {title}\n\nNotes about {title.lower()}.\n"


@pytest.fixture
def two_collections(vault: Vault, tmp_path: Path) -> Vault:
    work, home = tmp_path / "work", tmp_path / "home"
    write(work, "a.md", dated("2026-01-01", "Alpha"))
    write(work, "c.md", dated("2026-01-03", "Gamma"))
    write(work, "e.md", dated("2026-01-05", "Epsilon"))
    write(work, "tie-b.md", dated("2026-01-04", "Tie B"))
    write(home, "b.md", dated("2026-01-02", "Beta"))
    write(home, "d.md", dated("2026-01-04", "Delta"))  # same time as work/tie-b.md
    undated = write(home, "undated.md", "# Undated\n\nNo date in the frontmatter.\n")
    moment = datetime(2026, 1, 6, tzinfo=UTC).timestamp()
    os.utime(undated, (moment, moment))  # effective time falls back to modified_at
    # Checked whole (by default a folder's notes are reference material, never stale).
    vault.add_collection(work, name="work", stale_after_days=90)
    vault.add_collection(home, name="home", stale_after_days=90)
    vault.update()
    return vault


def names(summaries: Sequence[DocumentSummary | Document]) -> list[str]:
    return [f"{s.collection}/{s.path}" for s in summaries]


def test_timeline_orders_by_effective_time_nearest_first(two_collections: Vault) -> None:
    timeline = two_collections.documents.timeline("work/c.md", before=5, after=5)
    assert names([timeline.anchor]) == ["work/c.md"]
    assert names(timeline.before) == ["home/b.md", "work/a.md"]
    # ties (2026-01-04) by collection, then path: home/d.md before work/tie-b.md
    assert names(timeline.after) == ["home/d.md", "work/tie-b.md", "work/e.md", "home/undated.md"]


def test_timeline_limits_and_ties(two_collections: Vault) -> None:
    timeline = two_collections.documents.timeline("home/d.md", before=1, after=1)
    assert names(timeline.before) == ["work/c.md"]
    assert names(timeline.after) == ["work/tie-b.md"]
    timeline = two_collections.documents.timeline("work/tie-b.md", before=1, after=1)
    assert names(timeline.before) == ["home/d.md"]
    empty = two_collections.documents.timeline("work/a.md", before=0, after=0)
    assert empty.before == [] and empty.after == []
    edge = two_collections.documents.timeline("work/a.md", before=3, after=1)
    assert edge.before == [] and names(edge.after) == ["home/b.md"]


def test_timeline_same_collection(two_collections: Vault) -> None:
    timeline = two_collections.documents.timeline("work/c.md", same_collection=True)
    assert names(timeline.before) == ["work/a.md"]
    assert names(timeline.after) == ["work/tie-b.md", "work/e.md"]


def test_timeline_skips_inactive_documents_and_checks_its_arguments(
    two_collections: Vault,
) -> None:
    two_collections.curation.forget("home/b.md")
    assert names(two_collections.documents.timeline("work/c.md").before) == ["work/a.md"]
    with pytest.raises(DocumentNotFoundError):
        two_collections.documents.timeline("home/b.md")
    with pytest.raises(DocumentNotFoundError):
        two_collections.documents.timeline("#000000")
    for bad in (-1, 1.5, True):
        with pytest.raises(InvalidQueryError, match="before"):
            two_collections.documents.timeline("work/c.md", before=bad)  # type: ignore[arg-type]
    data = two_collections.documents.timeline("work/c.md", 1, 1).to_dict()
    assert json.loads(json.dumps(data))["anchor"]["path"] == "c.md"
    assert set(data) == {"anchor", "before", "after"}


# -- multi_get ------------------------------------------------------------------------------


def test_split_pattern_keeps_brace_commas() -> None:
    assert split_pattern("a/x.md, b/{c,d}.md ,, #abc123") == ["a/x.md", "b/{c,d}.md", "#abc123"]
    assert split_pattern(" , ") == []


def test_multi_get_glob(two_collections: Vault) -> None:
    found = two_collections.multi_get("work/*.md")
    assert names(found.documents) == ["work/a.md", "work/c.md", "work/e.md", "work/tie-b.md"]
    assert found.errors == [] and found.truncated == []
    assert "Notes about alpha" in found.documents[0].body
    assert names(two_collections.multi_get("**/{a,b}.md").documents) == ["home/b.md", "work/a.md"]
    assert names(two_collections.multi_get("*/?.md").documents) == [
        "home/b.md", "home/d.md", "work/a.md", "work/c.md", "work/e.md"
    ]  # fmt: skip
    missing = two_collections.multi_get("nothing/**/*.md")
    assert missing.documents == [] and missing.errors == ["no document matches 'nothing/**/*.md'"]


def test_multi_get_double_star_crosses_folders(vault: Vault, notes: Path) -> None:
    write(notes, "top.md", "# Top\n\ntop")
    write(notes, "a/mid.md", "# Mid\n\nmid")
    write(notes, "a/b/low.md", "# Low\n\nlow")
    write(notes, "a/b/skip.txt.md.bak", "not indexed")
    vault.add_collection(notes, name="notes")
    vault.update()
    assert names(vault.multi_get("notes/**/*.md").documents) == [
        "notes/a/b/low.md", "notes/a/mid.md", "notes/top.md"
    ]  # fmt: skip
    assert names(vault.multi_get("notes/*.md").documents) == ["notes/top.md"]
    assert names(vault.multi_get("notes/a/**").documents) == ["notes/a/b/low.md", "notes/a/mid.md"]


def test_multi_get_comma_list(two_collections: Vault) -> None:
    alpha = two_collections.get("work/a.md")
    found = two_collections.multi_get(
        f"home/d.md, #{alpha.docid}, work/missing.md, memtrove://work/e.md, work/a.md, home/*.md"
    )
    assert names(found.documents) == [
        "home/d.md", "work/a.md", "work/e.md", "home/b.md", "home/undated.md"
    ]  # fmt: skip
    assert found.errors == ["no document 'work/missing.md' in the vault"]


def test_multi_get_limits(two_collections: Vault) -> None:
    found = two_collections.multi_get("*/*.md", max_documents=2)
    assert names(found.documents) == ["home/b.md", "home/d.md"]
    assert found.errors and "names 7 documents" in found.errors[0]
    for kwargs in ({"max_bytes": 0}, {"max_documents": 0}, {"max_bytes": -5}):
        with pytest.raises(InvalidQueryError):
            two_collections.multi_get("*/*.md", **kwargs)
    with pytest.raises(InvalidQueryError, match="pattern"):
        two_collections.multi_get(" , ")


def test_multi_get_truncates_utf8_safely(vault: Vault, notes: Path) -> None:
    body = "# Café\n\n" + "é" * 50 + "漢字" * 50
    write(notes, "utf.md", body)
    write(notes, "short.md", "# Short\n\nok")
    vault.add_collection(notes, name="notes")
    vault.update()
    for max_bytes in range(1, 40):
        found = vault.multi_get("notes/utf.md", max_bytes=max_bytes)
        cut = found.documents[0].body
        assert len(cut.encode()) <= max_bytes
        assert body.startswith(cut) and len(cut.encode()) > max_bytes - 4
        assert found.truncated == ["notes/utf.md"]
    whole = vault.multi_get("notes/*.md", max_bytes=len(body.encode()))
    assert whole.truncated == [] and {d.body for d in whole.documents} == {body, "# Short\n\nok"}
    json.dumps(whole.to_dict())


# -- counts ---------------------------------------------------------------------------------


def test_index_stats(two_collections: Vault) -> None:
    two_collections._clock = lambda: datetime(2026, 4, 3, tzinfo=UTC)  # 90 days after Jan 3
    stats = two_collections.documents.index_stats()
    assert (stats.documents, stats.inactive_documents) == (7, 0)
    assert stats.stale_documents == 2  # Jan 1 and Jan 2
    assert stats.oldest == "2026-01-01T00:00:00Z" and stats.newest == "2026-01-06T00:00:00Z"
    assert (stats.embedded_documents, stats.pending_embeds, stats.failed_embeds) == (0, 7, 0)
    assert stats.vectors == 0 and stats.embedding_space is None
    assert sum(stats.content_types.values()) == 7
    two_collections.curation.forget("work/a.md")
    two_collections.embed()
    stats = two_collections.documents.index_stats()
    assert (stats.documents, stats.inactive_documents, stats.stale_documents) == (6, 1, 1)
    assert (stats.embedded_documents, stats.pending_embeds) == (6, 0)
    assert stats.vectors > 0 and stats.embedding_space and "256-d" in stats.embedding_space
    assert json.loads(json.dumps(stats.to_dict()))["documents"] == 6


def test_lifecycle_status(two_collections: Vault) -> None:
    two_collections._clock = lambda: datetime(2026, 1, 10, tzinfo=UTC)
    two_collections.curation.pin("work/a.md")
    two_collections.curation.pin("work/c.md")
    two_collections.curation.snooze("work/c.md", "2026-02-01")
    two_collections.curation.forget("work/c.md")  # pinned and snoozed, but inactive: not counted
    two_collections.curation.snooze("home/b.md", "2026-02-01")
    two_collections._connection.execute(
        "UPDATE documents SET invalidated_at = '2026-01-09T00:00:00Z' WHERE path = 'e.md'"
    )
    status = two_collections.lifecycle.status()
    counts = {key: value for key, value in status.to_dict().items() if isinstance(value, int)}
    assert counts == {
        "active": 6, "inactive": 1, "pinned": 1, "snoozed": 1, "invalidated": 1,
        "archived": 0, "forgotten": 1, "never_accessed": 6,
    }  # fmt: skip


def test_counts_of_an_empty_vault(vault: Vault) -> None:
    stats = vault.documents.index_stats()
    assert stats.documents == 0 and stats.oldest is None and stats.content_types == {}
    data = vault.lifecycle.status().to_dict()
    counts = ("active", "inactive", "pinned", "snoozed", "invalidated", "archived", "forgotten")
    assert {key: data[key] for key in counts} == dict.fromkeys(counts, 0)
    assert data["pin_candidates"] == data["snooze_candidates"] == []
