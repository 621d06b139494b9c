"""``/lifecycle/sweep``, ``/lifecycle/restore`` and ``/lifecycle/status`` in-process, over the
example notes (a vault whose clock is ten years on, so every note is long unused)."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi.testclient import TestClient

from memtrove import Vault
from memtrove.api import create_app
from tests.api.conftest import JSON, client, demo, local_client  # noqa: F401 - fixtures

LATER = datetime(2036, 1, 1, tzinfo=UTC)


def test_sweep_is_a_dry_run_unless_told(client: TestClient, demo: Vault) -> None:  # noqa: F811
    demo._clock = lambda: LATER
    answer = client.post("/lifecycle/sweep", headers=JSON)
    assert answer.status_code == 200, answer.text
    data = answer.json()
    assert data["dry_run"] is True and data["candidates"] == len(data["documents"]) > 0
    assert "archived" not in data and data["policy"]["archive_after_days"] == 90
    assert client.get("/lifecycle/status").json()["archived"] == 0
    applied = client.post("/lifecycle/sweep", json={"dry_run": False}).json()
    assert applied["dry_run"] is False and applied["archived"] == data["candidates"]
    status = client.get("/lifecycle/status").json()
    assert status["archived"] == applied["archived"] and "pin_candidates" in status
    hits = client.post("/search", json={"query": "thumbnail worker", "limit": 50}).json()
    archived = {item["path"] for item in data["documents"]}
    assert not archived & {result["path"] for result in hits["results"]}


def test_restore_needs_a_selection(client: TestClient, demo: Vault) -> None:  # noqa: F811
    demo._clock = lambda: LATER
    archived = client.post("/lifecycle/sweep", json={"dry_run": False}).json()["archived"]
    refused = client.post("/lifecycle/restore", headers=JSON)
    assert refused.status_code == 400 and "say what to restore" in refused.json()["error"]
    assert client.post("/lifecycle/restore", json={"all": "yes"}).status_code == 422
    assert (
        client.post("/lifecycle/restore", json={"collection": "demo"}).json()["restored"]
        == archived
    )
    assert client.get("/lifecycle/status").json()["archived"] == 0


def test_a_bad_policy_is_a_400(demo: Vault) -> None:  # noqa: F811
    demo.config_file.write_text(
        demo.config_file.read_text() + "lifecycle:\n  archive_after_days: soon\n"
    )
    with local_client(create_app(demo)) as test_client:
        answer = test_client.post("/lifecycle/sweep", json={})
    assert answer.status_code == 400 and "archive_after_days" in answer.json()["error"]
