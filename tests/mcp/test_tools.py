"""The MCP tools as plain functions over a real vault of the examples (no SDK involved)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memtrove import Vault
from memtrove.db.connection import write_transaction
from memtrove.errors import DocumentNotFoundError, InvalidQueryError
from memtrove.lifecycle.sessions import end_session
from memtrove.mcp import tools
from memtrove.results import SearchResult, SearchResults, TargetMatch
from tests.conftest import EXAMPLES, RESULT_FIELDS

LINE = re.compile(r"^#[0-9a-f]{6} \d+% demo/\S+ - .+ \[[a-z]+\]$")
JWT = "demo/decisions/0004-jwt-access-and-rotating-refresh-tokens.md"


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Vault]:
    """The examples indexed as collection ``demo`` (no vectors: tests embed when they need)."""
    opened = Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config")
    opened.add_collection(EXAMPLES, name="demo")
    opened.update()
    yield opened
    opened.close()


@pytest.fixture
def embedded(demo: Vault) -> Vault:
    demo.embed()
    return demo


def test_important_names_the_tools() -> None:
    text, data = tools.important()
    assert data == {"instructions": text}
    for name in ("memory_retrieve", "query", "get", "multi_get", "find_similar", "session_log"):
        assert name in text


def test_search_text_lines_and_structured_results(demo: Vault) -> None:
    text, data = tools.search(demo, "refresh token rotation", limit=3, compact=True)
    header, *lines = text.splitlines()
    assert header == 'Found 3 results for "refresh token rotation":'
    assert len(lines) == 3 and all(LINE.match(line) for line in lines)
    assert data["query"] == "refresh token rotation"
    assert len(data["results"]) == 3 and set(data["results"][0]) == RESULT_FIELDS
    assert {"stages", "skipped", "warnings"} <= set(data)
    assert lines[0].startswith("#" + data["results"][0]["docid"])

    full, _ = tools.search(demo, "refresh token rotation", limit=3)
    snippets = [line for line in full.splitlines() if line.startswith("    ")]
    assert len(snippets) == 3 and all(len(s) <= 304 for s in snippets)


def test_search_filters_and_bad_arguments(demo: Vault) -> None:
    text, data = tools.search(demo, "zyzzyva quux")
    assert text == 'No results for "zyzzyva quux"' and data["results"] == []
    assert tools.search(demo, "postgresql", collection="demo")[1]["results"]
    with pytest.raises(InvalidQueryError, match="no collection named 'nope'; known: demo"):
        tools.search(demo, "postgresql", collection="demo,nope")
    with pytest.raises(InvalidQueryError, match="minScore must be between 0 and 1"):
        tools.search(demo, "postgresql", min_score=2.0)
    with pytest.raises(InvalidQueryError, match="limit must be a positive integer"):
        tools.search(demo, "postgresql", limit=0)
    kept = tools.search(demo, "refresh token", min_score=0.7)[1]["results"]
    assert kept and all(result["score"] >= 0.7 for result in kept)


def test_query_reports_stages_and_skipped(demo: Vault) -> None:
    text, data = tools.query(demo, "why do users get logged out?", limit=3, intent="auth")
    assert data["stages"] and "stages: " in text
    assert "expansion" in data["skipped"]  # no LLM configured
    assert any(line.startswith("skipped expansion: ") for line in text.splitlines())
    paths = [r["path"] for r in data["results"]]
    assert "problems/2026-09-10-refresh-token-race-logouts.md" in paths


def test_memory_retrieve_routes_and_says_so(embedded: Vault) -> None:
    text, data = tools.memory_retrieve(embedded, "ADR-0004 JWT")
    assert text.startswith("[routed: keyword]\n") and data["mode"] == "keyword"
    assert data["stages"] == ["bm25"] and data["results"][0]["path"].endswith(
        "0004-jwt-access-and-rotating-refresh-tokens.md"
    )

    text, data = tools.memory_retrieve(embedded, "how does the resumable upload flow work")
    assert data["mode"] == "semantic" and data["stages"] == ["vector"]

    text, data = tools.memory_retrieve(embedded, "why did we pick PostgreSQL over SQLite?")
    assert data["classified"] == "causal" and data["mode"] == "causal"
    assert data["intent"] == "WHY" and data["stages"][0] == "intent"
    assert data["results"][0]["path"] == "decisions/0001-postgresql-for-metadata.md"

    _, data = tools.memory_retrieve(embedded, "postgresql", mode="KEYWORD")
    assert data["requested"] == "keyword" and data["mode"] == "keyword" and data["note"] == ""
    with pytest.raises(InvalidQueryError, match="unknown mode 'psychic'"):
        tools.memory_retrieve(embedded, "postgresql", mode="psychic")


def test_semantic_mode_falls_back_to_bm25_without_vectors(demo: Vault) -> None:
    text, data = tools.memory_retrieve(demo, "refresh token", mode="semantic")
    assert data["mode"] == "semantic" and data["stages"] == ["bm25"]
    assert data["skipped"]["vector"].endswith("ran BM25") and data["results"]
    assert "skipped vector: " in text


def test_get_selects_lines(demo: Vault) -> None:
    text, data = tools.get(demo, JWT, from_line=2, max_lines=3, line_numbers=True)
    header, blank, *body = text.splitlines()
    assert header.startswith("#e1745d demo/decisions/0004-") and header.endswith("[decision]")
    assert blank == "" and [line.split(":")[0] for line in body] == ["2", "3", "4"]
    assert data["from_line"] == 2 and data["body"].count("\n") == 2
    assert data["total_lines"] > 10 and data["docid"] == "e1745d"
    assert tools.get(demo, "#e1745d")[1]["path"] == JWT.removeprefix("demo/")
    assert tools.get(demo, "memtrove://" + JWT)[1]["docid"] == "e1745d"
    with pytest.raises(InvalidQueryError, match="fromLine 9999 is past the end"):
        tools.get(demo, JWT, from_line=9999)
    with pytest.raises(InvalidQueryError, match="maxLines must be a positive integer"):
        tools.get(demo, JWT, max_lines=0)
    with pytest.raises(DocumentNotFoundError):
        tools.get(demo, "demo/nope.md")


@pytest.mark.parametrize(
    "reference",
    [
        "demo/../../etc/passwd",
        "memtrove://demo/../../etc/passwd",
        "/etc/passwd",
        "~/.ssh/id_rsa",
        "demo\\..\\..\\secret",
        "demo/a\0b",
        "  ",
    ],
)
def test_references_outside_the_vault_are_refused(demo: Vault, reference: str) -> None:
    with pytest.raises(InvalidQueryError):
        tools.get(demo, reference)
    with pytest.raises(InvalidQueryError):
        tools.read_document(demo, reference)


def test_read_document_numbers_lines(demo: Vault) -> None:
    text = tools.read_document(demo, JWT)
    assert text.startswith("1: ---\n2: ")


def test_status(demo: Vault) -> None:
    text, data = tools.status(demo)
    assert "documents 30 active" in text and data["documents"] == 30
    assert "collection demo: 30 documents" in text


def test_reindex(demo: Vault) -> None:
    text, data = tools.reindex(demo)
    assert text.startswith("reindexed +0 ~0 =30 -0") and data["unchanged"] == 30


class FakeVault:
    """Just enough of a Vault to drive one tool without a database."""

    def __init__(self, results: list[SearchResult], match: TargetMatch | None = None) -> None:
        self.results = results
        self.match = match
        self.forgotten: list[str] = []

    def collections(self) -> list[Any]:
        return []

    @property
    def mining(self) -> FakeVault:  # vault.mining.mined_collections()
        return self

    def mined_collections(self) -> list[Any]:
        return []

    def search(self, query: str, limit: int, *args: Any, **kwargs: Any) -> SearchResults:
        return SearchResults(self.results, stages=["bm25"])

    @property
    def curation(self) -> FakeVault:  # vault.curation.find_target(), .forget(), .pin()
        return self

    def find_target(self, query: str) -> TargetMatch:
        assert self.match is not None
        return self.match

    def forget(self, reference: str) -> None:
        self.forgotten.append(reference)

    def pin(self, reference: str, unpin: bool = False) -> None:
        raise AssertionError("pinned on a vague match")


def result(collection: str, path: str, score: float = 0.5) -> SearchResult:
    return SearchResult(
        docid=path[:6].ljust(6, "0"),
        collection=collection,
        path=path,
        title=path,
        score=score,
        snippet="",
        content_type="note",
        modified_at="2026-11-30T00:00:00Z",
    )


def test_curation_does_nothing_without_a_confident_target() -> None:
    candidates = [result("demo", "aaaaaa.md", 0.5), result("demo", "bbbbbb.md", 0.45)]
    fake = FakeVault([], TargetMatch(candidates[0], False, candidates, "bm25"))
    text, data = tools.memory_forget(fake, "something vague")
    assert fake.forgotten == [] and data["changed"] is False and data["confident"] is False
    assert "nothing was forgotten" in text and "#aaaaaa" in text and "#bbbbbb" in text
    assert len(data["candidates"]) == 2

    text, data = tools.memory_pin(fake, "something vague")
    assert "nothing was pinned" in text and "Call memory_pin again" in text
    assert data["changed"] is False and data["document"] is None

    nothing = FakeVault([], TargetMatch(None, False, [], "none"))
    with pytest.raises(DocumentNotFoundError, match="no document matches 'zyzzyva'"):
        tools.memory_forget(nothing, "zyzzyva")


# -- tools over the Vault methods of issue 4 (curation, reading, sessions) -------------------------


def test_forget_preview_then_confident_forget(demo: Vault) -> None:
    text, data = tools.memory_forget(demo, "#e1745d", confirm=False)
    assert text.startswith("Would forget #e1745d") and data["changed"] is False
    assert data["confident"] is True and demo.get("#e1745d").active

    text, data = tools.memory_forget(demo, "#e1745d")
    assert text.startswith("Forgotten: #e1745d") and data["changed"] is True
    assert text.endswith("(its text stays in the vault)")
    with pytest.raises(DocumentNotFoundError):
        demo.get("#e1745d")
    found = tools.search(demo, "rotating refresh tokens", limit=10)[1]["results"]
    assert "e1745d" not in {r["docid"] for r in found}


def test_pin_and_snooze(demo: Vault) -> None:
    text, data = tools.memory_pin(demo, JWT)
    assert text.startswith("Pinned: #e1745d") and data["document"]["pinned"] is True
    assert "body" not in data["document"] and data["confident"] is True
    assert tools.memory_pin(demo, JWT, unpin=True)[1]["document"]["pinned"] is False

    text, data = tools.memory_snooze(demo, JWT, until="2099-01-31")
    assert text.startswith("Snoozed until 2099-01-31T23:59:59Z: #e1745d")
    assert data["document"]["snoozed_until"] == "2099-01-31T23:59:59Z"
    text, data = tools.memory_snooze(demo, JWT)
    assert text.startswith("Unsnoozed: ") and data["document"]["snoozed_until"] is None
    with pytest.raises(InvalidQueryError):
        tools.memory_snooze(demo, JWT, until="2001-01-01")
    with pytest.raises(DocumentNotFoundError):
        tools.memory_pin(demo, "zyzzyva quux")


def test_find_similar(embedded: Vault) -> None:
    text, data = tools.find_similar(embedded, JWT, limit=3)
    assert text.startswith(f'Found 3 results for "similar to {JWT}":')
    assert data["file"] == JWT and len(data["results"]) == 3
    assert "e1745d" not in {r["docid"] for r in data["results"]}


def test_timeline(demo: Vault) -> None:
    text, data = tools.timeline(demo, "#e1745d", before=2, after=2)
    lines = text.splitlines()
    anchor = [line for line in lines if line.startswith("> ")]
    assert len(anchor) == 1 and "#e1745d" in anchor[0] and len(lines) <= 5
    assert data["anchor"]["docid"] == "e1745d"
    with pytest.raises(InvalidQueryError, match="before must be between 1 and 20"):
        tools.timeline(demo, "#e1745d", before=0)
    with pytest.raises(InvalidQueryError, match="after must be between 1 and 20"):
        tools.timeline(demo, "#e1745d", after=21)


def test_multi_get(demo: Vault) -> None:
    text, data = tools.multi_get(demo, "demo/decisions/*.md", max_lines=2, line_numbers=True)
    assert data["count"] == 6 and len(text.split("\n\n---\n\n")) == 6
    assert all(d["body"].count("\n") <= 1 for d in data["documents"])
    _, data = tools.multi_get(demo, "#e1745d,demo/nope.md", max_bytes=100)
    assert data["count"] == 1 and data["errors"] and data["truncated"]
    assert len(data["documents"][0]["body"].encode()) <= 100
    with pytest.raises(InvalidQueryError, match="maxBytes must be a positive integer"):
        tools.multi_get(demo, "#e1745d", max_bytes=0)


def test_index_stats_lifecycle_and_sessions(demo: Vault) -> None:
    text, data = tools.index_stats(demo)
    assert data["documents"] == 30 and "documents 30 active" in text
    assert data["embedded_documents"] == 0 and "space none yet" in text
    text, data = tools.lifecycle_status(demo)
    assert data["active"] == 30 and text.startswith("active 30, inactive 0")
    text, data = tools.session_log(demo)
    assert data == {"count": 0, "sessions": []} and text.startswith("No sessions recorded yet")
    with write_transaction(demo._connection):
        end_session(
            demo._connection,
            "s1",
            handoff_path="_memtrove/agent/handoffs/s1.md",
            summary="Chose SQLite.",
            files_changed=["db.py", "app.py"],
            stamp="2026-03-02T10:00:00Z",
        )
    text, data = tools.session_log(demo)
    [session] = data["sessions"]
    assert session["ended_at"] == "2026-03-02T10:00:00Z"
    assert session["files_changed"] == ["db.py", "app.py"]
    assert "handoff: _memtrove/agent/handoffs/s1.md" in text
    assert "summary: Chose SQLite." in text and "files changed: db.py, app.py" in text
