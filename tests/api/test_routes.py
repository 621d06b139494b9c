"""Every REST route against a vault of the example notes, in-process."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from fastapi.testclient import TestClient

from memtrove import Vault
from memtrove.db.connection import write_transaction
from memtrove.lifecycle.sessions import end_session
from tests.api.conftest import JSON, JWT_NOTE
from tests.conftest import RESULT_FIELDS, write

RESPONSE_FIELDS = {
    "query", "mode", "count", "results", "stages", "skipped", "warnings", "scoreBasis",
    "degraded", "degradedReason", "degradedLegs", "untrusted",
}  # fmt: skip

# -- search and retrieve -----------------------------------------------------------------------


def test_keyword_search(client: TestClient, docid: str) -> None:
    answer = client.post("/search", json={"query": "refresh token", "mode": "keyword", "limit": 3})
    assert answer.status_code == 200
    found = answer.json()
    assert set(found) == RESPONSE_FIELDS
    assert found["mode"] == "keyword" and found["stages"] == ["bm25"]
    assert found["scoreBasis"] == "fts-bm25" and found["degraded"] is False
    assert found["count"] == len(found["results"]) == 3
    # REST adds the names the OpenClaw and Hermes plugins read (memtrove.api.plugin_fields)
    assert set(found["results"][0]) == RESULT_FIELDS | {"contentType", "modifiedAt"}
    assert found["results"][0]["docid"] == docid


def test_auto_is_keyword_for_short_queries_and_hybrid_for_long_ones(client: TestClient) -> None:
    short = client.post("/search", json={"query": "refresh token rotation"}).json()
    assert short["mode"] == "keyword"
    long = client.post("/search", json={"query": "why were mobile users logged out"}).json()
    assert long["mode"] == "hybrid" and "bm25" in long["stages"]
    assert "vector" in long["skipped"]  # not embedded: said, not hidden
    assert long["count"] > 0


def test_filters_reach_the_vault(client: TestClient) -> None:
    for collection in ("demo", ["demo"], "nope,demo", ["nope", "demo"]):
        found = client.post("/search", json={"query": "token", "collection": collection}).json()
        assert found["count"] > 0 and {r["collection"] for r in found["results"]} == {"demo"}
    assert (
        client.post("/search", json={"query": "token", "collection": "nope"}).json()["count"] == 0
    )
    decisions = client.post(
        "/search", json={"query": "token", "content_type": ["decision"], "limit": 50}
    ).json()
    assert decisions["count"] > 0
    assert {r["content_type"] for r in decisions["results"]} == {"decision"}
    floor = client.post("/search", json={"query": "token", "min_score": 0.99}).json()
    assert all(r["score"] >= 0.99 for r in floor["results"])
    future = client.post("/search", json={"query": "token", "since": "2999-01-01"}).json()
    assert future["count"] == 0


def test_compact_false_adds_the_stored_text(client: TestClient, demo: Vault) -> None:
    found = client.post("/search", json={"query": "refresh token", "compact": False, "limit": 2})
    for result in found.json()["results"]:
        stored = demo.get(f"{result['collection']}/{result['path']}").body
        assert result["content"] == stored
    compact = client.post("/search", json={"query": "refresh token"}).json()
    assert "content" not in compact["results"][0]


def test_query_mode_and_intent(client: TestClient) -> None:
    found = client.post(
        "/search", json={"query": "logged out", "mode": "query", "intent": "auth incidents"}
    ).json()
    assert found["mode"] == "query" and "rerank" in found["skipped"]
    implied = client.post("/search", json={"query": "logged out", "intent": "auth"}).json()
    assert implied["mode"] == "query"
    refused = client.post("/search", json={"query": "x", "mode": "keyword", "intent": "y"})
    assert refused.status_code == 400 and "intent needs mode 'query'" in refused.json()["error"]


def test_retrieve_runs_the_pipeline_by_default(client: TestClient) -> None:
    found = client.post("/retrieve", json={"query": "refresh token"}).json()
    assert set(found) == RESPONSE_FIELDS and found["mode"] == "query"
    assert found["count"] > 0 and "expansion" in found["skipped"]
    keyword = client.post("/retrieve", json={"query": "refresh token", "mode": "keyword"}).json()
    assert keyword["mode"] == "keyword" and keyword["stages"] == ["bm25"]
    for mode in ("causal", "timeline", "discovery", "complex"):  # memory_retrieve's modes
        routed = client.post("/retrieve", json={"query": "refresh token", "mode": mode}).json()
        assert routed["mode"] == mode and routed["stages"][0] in ("intent", "plan", "timeline")
        filtered = client.post(  # they set their own filters: one asked for is not ignored
            "/retrieve", json={"query": "refresh token", "mode": mode, "since": "9999-12-31"}
        )
        assert filtered.status_code == 400
        assert filtered.json()["error"] == (
            f"mode {mode} takes query, limit and collection only, not since"
        )
    assert client.post("/retrieve", json={"query": "x", "mode": "psychic"}).status_code == 422


def test_semantic_and_hybrid_use_the_vectors(embedded: TestClient) -> None:
    semantic = embedded.post(
        "/search", json={"query": "uploads failing for large photos", "mode": "semantic"}
    ).json()
    assert semantic["stages"] == ["vector"] and semantic["count"] == 10
    hybrid = embedded.post(
        "/search", json={"query": "thumbnail worker memory", "mode": "hybrid", "limit": 3}
    ).json()
    assert "vector" in hybrid["stages"] and "vector" not in hybrid["skipped"]
    assert any("thumbnail" in r["path"] for r in hybrid["results"])


# -- documents ---------------------------------------------------------------------------------


def test_get_a_document(client: TestClient, docid: str) -> None:
    answer = client.get(f"/documents/{docid}")
    assert answer.status_code == 200
    document = answer.json()
    assert document["docid"] == docid and f"demo/{document['path']}" == JWT_NOTE
    assert document["body_length"] == len(document["body"]) > 100
    assert {"title", "content_type", "pinned", "snoozed_until", "modified_at"} <= set(document)
    assert client.get(f"/documents/{docid.upper()}").json()["docid"] == docid
    longer = client.get(f"/documents/{document['hash'][:16]}")  # disambiguates a shared docid
    assert longer.status_code == 200 and longer.json()["path"] == document["path"]


def test_an_unknown_docid_is_404(client: TestClient) -> None:
    for path in ("/documents/abcdef", "/timeline/abcdef", "/graph/similar/abcdef"):
        answer = client.get(path)
        assert answer.status_code == 404, path
        assert set(answer.json()) == {"error"} and "abcdef" in answer.json()["error"]
    for action in ("pin", "snooze", "forget"):
        assert client.post(f"/documents/abcdef/{action}", headers=JSON).status_code == 404


def test_get_several_documents(client: TestClient, docid: str) -> None:
    found = client.get("/documents", params={"pattern": "demo/decisions/*.md"}).json()
    assert found["pattern"] == "demo/decisions/*.md"
    assert found["count"] == 6 == len(found["documents"]) and found["errors"] == []
    cut = client.get("/documents", params={"pattern": f"#{docid}", "max_bytes": 40}).json()
    assert cut["count"] == 1 and len(cut["documents"][0]["body"].encode()) <= 40
    assert cut["truncated"]
    listed = client.get("/documents", params={"pattern": f"#{docid},demo/nope.md"}).json()
    assert listed["count"] == 1 and len(listed["errors"]) == 1
    capped = client.get("/documents", params={"pattern": "demo/**", "max_documents": 3}).json()
    assert capped["count"] == 3
    assert (
        client.get("/documents", params={"pattern": "demo/**", "max_bytes": 0}).status_code == 422
    )
    assert client.get("/documents").status_code == 422


def test_timeline(client: TestClient, docid: str) -> None:
    found = client.get(f"/timeline/{docid}", params={"before": 2, "after": 3}).json()
    assert found["anchor"]["docid"] == docid
    assert len(found["before"]) <= 2 and len(found["after"]) <= 3
    assert len(found["before"]) + len(found["after"]) > 0
    alone = client.get(f"/timeline/{docid}?before=0&after=0&same_collection=true").json()
    assert alone["before"] == [] and alone["after"] == []
    assert client.get(f"/timeline/{docid}?before=51").status_code == 422


def test_similar_documents(embedded: TestClient) -> None:
    docid = embedded.post("/search", json={"query": "thumbnail worker memory leak"}).json()[
        "results"
    ][0]["docid"]
    found = embedded.get(f"/graph/similar/{docid}", params={"limit": 3}).json()
    assert found["docid"] == docid and found["count"] == len(found["similar"]) == 3
    assert docid not in {r["docid"] for r in found["similar"]}
    assert embedded.get(f"/graph/similar/{docid}?limit=51").status_code == 422


# -- curation ----------------------------------------------------------------------------------


def test_pin_and_unpin(client: TestClient, demo: Vault, docid: str) -> None:
    assert client.post(f"/documents/{docid}/pin", headers=JSON).json() == {
        "docid": docid,
        "pinned": True,
    }
    assert demo.get(f"#{docid}").pinned
    unpinned = client.post(f"/documents/{docid}/pin", json={"unpin": True}).json()
    assert unpinned == {"docid": docid, "pinned": False}
    assert client.post(f"/documents/{docid}/pin", json={}).json()["pinned"] is True
    assert client.post(f"/documents/{docid}/pin", json={"unpin": "yes"}).status_code == 422
    assert client.post(f"/documents/{docid}/pin", json={"pinned": False}).status_code == 422


def test_snooze_defaults_to_thirty_days(client: TestClient, docid: str) -> None:
    snoozed = client.post(f"/documents/{docid}/snooze", headers=JSON).json()
    assert snoozed["docid"] == docid and snoozed["snoozed"] is True
    until = datetime.fromisoformat(snoozed["until"].replace("Z", "+00:00"))
    expected = datetime.now(UTC) + timedelta(days=30)
    assert abs((until - expected).total_seconds()) < 24 * 3600
    woken = client.post(f"/documents/{docid}/snooze", json={"unsnooze": True}).json()
    assert woken == {"docid": docid, "snoozed": False, "until": None}


def test_snooze_until_a_date(client: TestClient, docid: str) -> None:
    later = client.post(f"/documents/{docid}/snooze", json={"until": "2999-01-31"}).json()
    assert later["snoozed"] and later["until"].startswith("2999-01-31")
    past = client.post(f"/documents/{docid}/snooze", json={"until": "2001-01-01"})
    assert past.status_code == 400
    both = client.post(f"/documents/{docid}/snooze", json={"until": "2999-01-31", "unsnooze": True})
    assert both.status_code == 400 and "either" in both.json()["error"]
    assert client.post(f"/documents/{docid}/snooze", json={"until": 5}).status_code == 422


def test_forget_takes_a_document_out_of_search(client: TestClient, docid: str) -> None:
    assert client.post(f"/documents/{docid}/forget", json={"why": "x"}).status_code == 422
    assert client.post(f"/documents/{docid}/forget", headers=JSON).json() == {
        "docid": docid,
        "forgotten": True,
    }
    found = client.post("/search", json={"query": "refresh token", "limit": 50}).json()
    assert docid not in {r["docid"] for r in found["results"]}
    assert client.get(f"/documents/{docid}").status_code == 404


# -- vault state -------------------------------------------------------------------------------


def test_health_and_stats(client: TestClient) -> None:
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["service"] == "memtrove"
    assert health["documents"] == 30 and health["has_vectors"] is False
    assert health["needs_embedding"] == 30
    stats = client.get("/stats").json()
    assert stats["documents"] == 30 and stats["collections"][0]["name"] == "demo"
    assert stats["health"]["documents"] == 30 and stats["health"]["pending_embeds"] == 30


def test_collections(client: TestClient, example_copy: Path) -> None:
    found = client.get("/collections").json()
    assert found["count"] == 1
    assert found["collections"] == [
        {
            "name": "demo",
            "path": str(example_copy.resolve()),
            "pattern": "**/*.md",
            "documents": 30,
            "path_exists": True,
        }
    ]


def test_sessions(client: TestClient, demo: Vault, docid: str) -> None:
    assert client.get("/sessions").json() == {"count": 0, "sessions": []}
    document = demo.get(f"#{docid}")
    demo.sessions.log_context_usage(
        "session-1", "context-surfacing", injected=[(document.doc_id, 0.9)]
    )
    found = client.get("/sessions", params={"limit": 5}).json()
    assert found["count"] == 1 and found["sessions"][0]["session_id"] == "session-1"
    assert found["sessions"][0]["handoff_path"] is None
    assert found["sessions"][0]["files_changed"] == []
    with write_transaction(demo._connection):
        end_session(
            demo._connection,
            "session-1",
            handoff_path="_memtrove/agent/handoffs/session-1.md",
            summary="Moved the cache to Redis.",
            files_changed=["src/cache.py"],
            stamp="2026-03-02T10:00:00Z",
        )
    [session] = client.get("/sessions").json()["sessions"]
    assert session["handoff_path"] == "_memtrove/agent/handoffs/session-1.md"
    assert session["summary"] == "Moved the cache to Redis."
    assert session["files_changed"] == ["src/cache.py"]
    assert session["ended_at"] == "2026-03-02T10:00:00Z"


def test_lifecycle_status_counts_curation(client: TestClient, demo: Vault) -> None:
    before = client.get("/lifecycle/status").json()
    assert before["active"] == 30 and before["pinned"] == 0
    docids = [demo.get(f"demo/{path}").docid for path in _paths(demo)[:3]]
    client.post(f"/documents/{docids[0]}/pin", headers=JSON)
    client.post(f"/documents/{docids[1]}/snooze", headers=JSON)
    client.post(f"/documents/{docids[2]}/forget", headers=JSON)
    after = client.get("/lifecycle/status").json()
    assert after["pinned"] == 1 and after["snoozed"] == 1
    assert after["inactive"] == before["inactive"] + 1


# -- maintenance -------------------------------------------------------------------------------


def test_reindex(client: TestClient, example_copy: Path) -> None:
    unchanged = client.post("/reindex", headers=JSON).json()
    assert unchanged["collections"] == ["demo"] and unchanged["unchanged"] == 30
    write(example_copy, "notes/new-idea.md", "# New idea\n\nCache the thumbnails at the edge.\n")
    added = client.post("/reindex", json={"collection": "demo"}).json()
    assert added["added"] == 1 and added["summary"] == "+1 ~0 =30 -0"
    assert client.post("/search", json={"query": "edge thumbnails"}).json()["count"] > 0
    assert client.post("/reindex", json={"collection": "nope"}).status_code == 404
    assert client.post("/reindex", json={"collections": ["demo"]}).status_code == 422


def test_reindex_can_embed(client: TestClient) -> None:
    answer = client.post("/reindex", json={"embed": True}).json()
    assert answer["embed"]["documents"] == 30 and answer["embed"]["errors"] == []


def test_export_streams_the_vault_as_export_lines(client: TestClient, demo: Vault) -> None:
    with client.stream("GET", "/export") as answer:
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("application/x-ndjson")
        lines = [json.loads(line) for line in answer.iter_lines() if line]
    assert lines[0]["format"] == "memtrove-export" and lines[-1]["type"] == "end"
    documents = [line for line in lines if line.get("type") == "documents"]
    assert len(documents) == lines[0]["counts"]["documents"] == 30
    assert lines[-1]["records"] == len(lines) - 2


def test_export_documents_keeps_the_clawmem_shape(client: TestClient, demo: Vault) -> None:
    with client.stream("GET", "/export?format=documents") as answer:
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("application/json")
        text = "".join(answer.iter_text())
    exported = json.loads(text)
    assert exported["version"] == "1.0.0" and exported["exported_at"].endswith("Z")
    assert exported["count"] == 30 == len(exported["documents"])
    assert exported["errors"] == [] and exported["truncated"] == []
    first = exported["documents"][0]
    assert first["body"] == demo.get(f"{first['collection']}/{first['path']}").body


def _paths(vault: Vault) -> list[str]:
    return sorted(summary.path for summary in vault.list(50, "demo"))
