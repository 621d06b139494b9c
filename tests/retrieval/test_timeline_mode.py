"""``memory_retrieve``'s timeline mode: documents in time order around the question's window,
and the sessions of that window; Python, MCP tool and REST ``/retrieve`` on real vaults."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from memtrove import Vault
from memtrove.api import create_app
from memtrove.mcp import tools
from memtrove.vault.intent import TimelineResults
from tests.conftest import write


def dated(day: str, title: str, body: str) -> str:
    return f"---\ndate: {day}\n---\n# {title}\n\n{body}\n"


@pytest.fixture
def vault(tmp_path: Path, notes: Path) -> Iterator[Vault]:
    write(notes, "jan.md", dated("2026-01-20", "Billing database", "Invoices on postgres."))
    write(notes, "mar-a.md", dated("2026-03-02", "Sessions table", "Sessions moved to SQL."))
    write(notes, "mar-b.md", dated("2026-03-18", "Feature flags", "Flags moved to a table."))
    write(notes, "mar-c.md", dated("2026-03-09", "Deploy freeze", "No deploys during the audit."))
    write(notes, "may.md", dated("2026-05-15", "On-call report", "Queue backlog pages."))
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as opened:
        opened.add_collection(notes, name="notes")
        opened.update()
        yield opened


def paths(results: TimelineResults) -> list[str]:
    return [result.path for result in results]


def test_a_named_window_lists_its_documents_in_time_order(vault: Vault) -> None:
    route, results = vault.intent.retrieve("what happened in March 2026?", "timeline")
    assert route.mode == "timeline" and isinstance(results, TimelineResults)
    assert paths(results) == ["mar-a.md", "mar-c.md", "mar-b.md"]
    assert results.window["start"] == "2026-03-01T00:00:00Z"
    assert results.window["phrase"] == "in March 2026"
    data = results.to_dict()
    assert data["window"]["end"] == "2026-03-31T23:59:59Z" and data["sessions"] == []
    assert data["stages"][0] == "timeline"


def test_a_topic_keeps_the_windows_documents_about_it(vault: Vault) -> None:
    _, results = vault.intent.retrieve("what moved to a table in March 2026?", "timeline")
    assert "mar-c.md" not in paths(results) and paths(results)
    assert set(paths(results)) <= {"mar-a.md", "mar-b.md"}


def test_without_a_named_time_the_last_session_is_the_window(vault: Vault) -> None:
    now = datetime.now(UTC)
    vault._clock = lambda: now - timedelta(hours=2)
    first = vault.get("notes/jan.md").doc_id
    vault.sessions.log_context_usage("older", "context-surfacing", injected=[(first, 0.9)])
    vault._clock = lambda: now
    vault.sessions.log_context_usage("latest", "context-surfacing", injected=[(first, 0.8)])
    _, results = vault.intent.retrieve("what did we do last session?")
    assert results.window["phrase"] == "the last session"
    assert [session.session_id for session in results.sessions] == ["latest"]
    # no document is dated in it: the ones nearest its time are shown, and it says so
    assert "window documents" in results.skipped and paths(results)


def test_without_sessions_the_latest_day_is_the_window(vault: Vault) -> None:
    _, results = vault.intent.retrieve("what did we do last session?", "timeline")
    assert results.window["phrase"] == "the latest day" and paths(results) == ["may.md"]


def test_a_window_no_document_is_in_shows_the_nearest(vault: Vault) -> None:
    _, results = vault.intent.retrieve("what happened on 2026-02-14?", "timeline")
    assert results.skipped["window documents"].startswith("none dated")
    assert set(paths(results)[:2]) == {"jan.md", "mar-a.md"}


def test_an_empty_vault_has_no_timeline(tmp_path: Path) -> None:
    with Vault.open(tmp_path / "empty.sqlite", config_dir=tmp_path / "c") as empty:
        _, results = empty.intent.retrieve("what happened yesterday?", "timeline")
    assert list(results) == [] and "timeline" in results.skipped


def test_auto_routes_time_questions_to_the_timeline(vault: Vault) -> None:
    route, results = vault.intent.retrieve("what did we do yesterday?")
    assert (route.classified, route.mode) == ("timeline", "timeline")
    assert isinstance(results, TimelineResults)


def test_the_mcp_tool_says_it_routed_to_the_timeline(vault: Vault) -> None:
    text, data = tools.memory_retrieve(vault, "what happened in March 2026?", "timeline")
    assert text.startswith("[routed: timeline]") and data["mode"] == "timeline"
    assert [item["path"] for item in data["results"]] == ["mar-a.md", "mar-c.md", "mar-b.md"]


def test_rest_retrieve_auto_routes_like_memory_retrieve(vault: Vault) -> None:
    with TestClient(create_app(vault), base_url="http://127.0.0.1:7438") as client:
        timeline = client.post("/retrieve", json={"query": "what did we do yesterday?"}).json()
        assert timeline["mode"] == "timeline" and timeline["stages"][0] == "timeline"
        plain = client.post("/retrieve", json={"query": "invoices on postgres"}).json()
        assert plain["mode"] == "query"
        dated_window = client.post(
            "/retrieve", json={"query": "what happened in March 2026?", "mode": "timeline"}
        ).json()
        assert [item["path"] for item in dated_window["results"]] == [
            "mar-a.md",
            "mar-c.md",
            "mar-b.md",
        ]
