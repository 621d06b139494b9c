"""The memory store and rule engines over REST (in-process TestClient)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from memtrove.api import create_app
from memtrove.memory.queue import ExtractionQueue
from memtrove.vault import Vault
from tests.api.conftest import JSON, local_client


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    vault = Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "c")
    vault.memory.project_store = "api-project"
    app = create_app(vault, queue_folder=tmp_path / "queue")
    with local_client(app) as test_client:
        yield test_client
    vault.close()


def test_remember_recall_versions_and_forget(client: TestClient, tmp_path: Path) -> None:
    body = {"label": "Deploy target", "content": "Fly.io ams", "confidence": 7}
    made = client.post("/memory/remember", json=body)
    assert made.status_code == 200 and made.json()["created"] is True
    clash = client.post("/memory/remember", json=body)
    assert clash.status_code == 409 and "overwrite" in clash.json()["error"]
    queue = ExtractionQueue(tmp_path / "queue")
    queue.append("s1", [{"tool_name": "Bash", "tool_response": "deployed"}])
    again = client.post("/memory/remember", json=body | {"content": "Hetzner", "overwrite": True,
                                                         "session_id": "s1"})  # fmt: skip
    assert again.json()["drained"] == 1 and queue.peek("s1") == []
    versions = client.get("/memory/versions", params={"label": "deploy target"}).json()
    assert [v["content"] for v in versions["versions"]] == ["Fly.io ams"]
    quiet = client.post("/memory/recall", json={"query": "hetzner", "count": False}).json()
    assert quiet["entries"][0]["recall_count"] == 0
    counted = client.post("/memory/recall", json={"query": "hetzner"}).json()
    assert counted["entries"][0]["recall_count"] == 1
    assert client.post("/memory/recall", json={"query": "x", "limit": 51}).status_code == 422
    assert client.post("/memory/forget", json={"label": "Deploy target"}).status_code == 200
    assert client.post("/memory/forget", json={"label": "Deploy target"}).status_code == 404
    assert (
        client.post("/memory/remember", json={"label": "x", "content": "y", "bogus": 1}).status_code
        == 422
    )


def test_duplicates_verdicts_and_hygiene(client: TestClient) -> None:
    text = "We deploy the web app to Fly.io in the ams region with blue-green releases."
    for label in ("A", "B"):
        client.post("/memory/remember", json={"label": label, "content": text})
    found = client.get("/memory/duplicates").json()
    assert found["pairs"] == 1
    hygiene = client.get("/memory/hygiene").json()
    assert hygiene["duplicate_pairs"] == 1 and not hygiene["healthy"] and hygiene["lines"]
    marked = client.post(
        "/memory/dedup", json={"label_a": "B", "label_b": "A", "status": "duplicate"}
    )
    assert marked.json() == {
        "store": "api-project",
        "slug_a": "a",
        "slug_b": "b",
        "status": "duplicate",
    }
    assert client.get("/memory/duplicates").json()["pairs"] == 0
    bad = client.post("/memory/dedup", json={"label_a": "A", "label_b": "B", "status": "maybe"})
    assert bad.status_code == 400


def test_extraction_routes(client: TestClient, tmp_path: Path) -> None:
    assert client.get("/memory/extraction/s9").json() == {"payload": None}
    ExtractionQueue(tmp_path / "queue").append("s9", [{"tool_name": "Read", "tool_response": "x"}])
    payload = client.get("/memory/extraction/s9").json()["payload"]
    assert payload["projectStore"] == "api-project" and len(payload["interactions"]) == 1
    assert client.post("/memory/extraction/s9/done", headers=JSON).json() == {"drained": 1}


def test_rules(client: TestClient) -> None:
    added = client.post("/rules/behavior", json={"statement": "Run tests before pushing",
                                                 "when": ["about to push"]}).json()  # fmt: skip
    assert added["confidence"] == 0.5 and len(added["matchers"]) == 1
    signalled = client.post(f"/rules/behavior/{added['id']}/signal", json={"signal": "soft"}).json()
    assert signalled["confidence"] == pytest.approx(2.75 / 5.25)
    assert [p[0] for p in signalled["provenance"]] == ["create", "soft"]
    assert client.post(f"/rules/behavior/{added['id']}/codify", json={}).status_code == 200
    listed = client.get("/rules/behavior").json()["rules"]
    assert listed[0]["codified_at"] and listed[0]["confirm_count"] == 0.25
    assert client.post("/rules/habit", json={"statement": "x"}).status_code == 400
    link = client.post(
        f"/rules/behavior/{added['id']}/link", json={"when": "opening a PR", "weight": 0.5}
    )
    assert link.status_code == 200 and link.json()["matcher_id"].startswith("m-")


def test_a_link_without_a_situation_or_to_no_rule_is_a_client_error(client: TestClient) -> None:
    added = client.post("/rules/behavior", json={"statement": "Rebase before merging"}).json()
    neither = client.post(f"/rules/behavior/{added['id']}/link", json={})
    assert neither.status_code == 400 and "either a matcher id" in neither.json()["error"]
    both = client.post(
        f"/rules/behavior/{added['id']}/link", json={"when": "merging", "matcher_id": "m-1"}
    )
    assert both.status_code == 400
    missing = client.post("/rules/behavior/no-such-rule/signal", json={"signal": "soft"})
    assert missing.status_code == 404 and "no behavior 'no-such-rule'" in missing.json()["error"]


@pytest.mark.parametrize("worktree", ["\x00", "/nonexistent/place", "a\x00b"])
def test_hygiene_in_a_worktree_that_is_no_repository_reports_no_branches(
    client: TestClient, worktree: str
) -> None:
    answer = client.get("/memory/hygiene", params={"worktree": worktree})
    assert answer.status_code == 200 and "lines" in answer.json()


def test_archive_route_and_archived_listing(client: TestClient) -> None:
    text = "We deploy the web app to Fly.io in the ams region with blue-green releases."
    for label in ("A", "B"):
        client.post("/memory/remember", json={"label": label, "content": text})
    done = client.post("/memory/archive", json={"label": "a"})
    assert done.status_code == 200 and done.json()["entry"]["archived"] is True
    assert client.get("/memory/duplicates").json()["pairs"] == 0
    assert [e["label"] for e in client.get("/memory/entries").json()["entries"]] == ["B"]
    everything = client.get("/memory/entries", params={"include_archived": "true"}).json()
    assert sorted((e["label"], e["archived"]) for e in everything["entries"]) == [
        ("A", True),
        ("B", False),
    ]
    recalled = client.post("/memory/recall", json={"query": "fly.io ams", "count": False})
    assert [e["label"] for e in recalled.json()["entries"]] == ["B"]
    back = client.post("/memory/archive", json={"label": "A", "archived": False})
    assert back.json()["entry"]["archived"] is False
    assert client.get("/memory/duplicates").json()["pairs"] == 1
    assert client.post("/memory/archive", json={"label": "zzz"}).status_code == 404
    assert client.post("/memory/archive", json={"label": "A", "restore": True}).status_code == 422
