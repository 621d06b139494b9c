"""A-MEM end to end: ``memtrove reindex --enrich`` against the loopback fake model server
(embeddings and LLM), then ``memtrove evolution``, the MCP tool ``memory_evolution_status``
over stdio with the official client, and ``GET /graph/evolution/{docid}`` on a running
``memtrove serve``; plus ``reindex --enrich`` with no LLM at all."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import write
from tests.e2e.mcp_calls import call_tools
from tests.e2e.test_serve import Server, base_env, start
from tests.fakes.model_server import ModelServer

TOKEN = "amem-e2e-token-71c4"
CACHE = "# Redis session cache\n\nSessions live in Redis with a one hour TTL; eviction is LRU.\n"
LINKS = [
    {"index": 1, "relation": "contradicts", "confidence": 0.9, "reasoning": "the TTL changed",
     "keywords": ["redis", "ttl", "superseded"], "context": "Superseded by a newer note"},
]  # fmt: skip


def reply(prompt: str) -> str:
    if "A-MEM links" in prompt:
        return json.dumps(LINKS)
    return json.dumps({"keywords": ["redis", "sessions"], "tags": ["cache"], "context": "Cache"})


def memtrove(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memtrove", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def models() -> Iterator[ModelServer]:
    with ModelServer() as server:
        server.set_chat_reply(reply)
        yield server


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, models: ModelServer) -> Path:
    folder = tmp_path_factory.mktemp("amem")
    notes = folder / "notes"
    write(notes, "cache.md", CACHE)
    env = {**base_env(folder), "MEMTROVE_EMBED_URL": models.url, "MEMTROVE_LLM_URL": models.url}
    for command in (("collection", "add", str(notes), "--name", "notes"), ("update",), ("embed",)):
        result = memtrove(env, *command)
        assert result.returncode == 0, result.stderr
    first = memtrove(env, "reindex", "--enrich", "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["enrichment"]["llm_notes"] == 1
    write(notes, "cache-v2.md", CACHE.replace("one hour", "two hour") + "Redis TTL raised.\n")
    for command in (("update",), ("embed",)):
        assert memtrove(env, *command).returncode == 0
    second = memtrove(env, "reindex", "--enrich", "--json")
    assert second.returncode == 0, second.stderr
    enrichment = json.loads(second.stdout)["enrichment"]
    assert enrichment["documents"] == 1 and enrichment["unchanged"] == 1
    assert enrichment["links"]["contradicts"] == 1 and enrichment["evolutions"] == 1
    return folder


def test_the_cli(home: Path, models: ModelServer) -> None:
    env = {**base_env(home), "MEMTROVE_EMBED_URL": models.url, "MEMTROVE_LLM_URL": models.url}
    again = memtrove(env, "reindex", "--enrich", "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["enrichment"]["documents"] == 0
    forced = memtrove(env, "reindex", "--force")
    assert forced.returncode == 0 and "enriched 2 document(s)" in forced.stdout
    plain = memtrove(env, "reindex")
    assert plain.returncode == 0 and "reindexed" in plain.stdout and "enriched" not in plain.stdout
    shown = memtrove(env, "evolution", "notes/cache.md", "--json")
    assert shown.returncode == 0, shown.stderr
    answer = json.loads(shown.stdout)
    assert answer["count"] >= 1 and answer["evolution"][0]["reasoning"] == "the TTL changed"
    text = memtrove(env, "evolution", "notes/cache.md")
    assert "superseded" in text.stdout and "the TTL changed" in text.stdout
    for bad, message in ((["notes/cache.md", "-n", "0"], "limit"), (["#abcdef"], "no document")):
        failed = memtrove(env, "evolution", *bad)
        assert failed.returncode == 1 and message in failed.stderr
        assert failed.stderr.count("\n") == 1 and "Traceback" not in failed.stderr


def test_reindex_enrich_without_an_llm(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    write(notes, "a.md", CACHE)
    write(notes, "b.md", "# Bananas\n\nYellow fruit from tropical climates.\n")
    env = base_env(tmp_path)
    assert memtrove(env, "collection", "add", str(notes), "--name", "notes").returncode == 0
    result = memtrove(env, "reindex", "--enrich", "--json")
    assert result.returncode == 0, result.stderr
    enrichment = json.loads(result.stdout)["enrichment"]
    assert enrichment["heuristic_notes"] == 2 and enrichment["llm_notes"] == 0
    assert json.loads(result.stdout)["added"] == 2
    doctor = memtrove(env, "doctor", "--json")
    checks = {check["name"]: check for check in json.loads(doctor.stdout)["checks"]}
    assert "runs without an LLM" in checks["enrichment"]["detail"]


def test_the_mcp_tool(home: Path, tmp_path: Path) -> None:
    listed, answers = call_tools(
        base_env(home),
        {
            "good": ("memory_evolution_status", {"docid": "notes/cache.md"}),
            "limit": ("memory_evolution_status", {"docid": "notes/cache.md", "limit": 500}),
            "unknown": ("memory_evolution_status", {"docid": "#abcdef"}),
            "missing": ("memory_evolution_status", {}),
        },
        tmp_path / "stderr.txt",
    )
    assert "memory_evolution_status" in listed
    good = answers["good"]
    assert not good.is_error and good.structured_content["count"] >= 1
    assert good.structured_content["evolution"][0]["new_keywords"] == ["redis", "ttl", "superseded"]
    assert "the TTL changed" in good.content[0].text
    for name in ("limit", "unknown", "missing"):
        assert answers[name].is_error and "\n" not in answers[name].content[0].text
    assert "limit must be between 1 and 100" in answers["limit"].content[0].text
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()


@pytest.fixture(scope="module")
def server(home: Path) -> Iterator[Server]:
    running = start(
        {**base_env(home), "MEMTROVE_API_TOKEN": TOKEN}, "--port", "0", log=home / "amem.log"
    )
    yield running
    assert running.stop() == 0
    assert "Traceback" not in running.log.read_text()


def test_the_rest_route(server: Server, home: Path) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=server.url, timeout=30, headers=headers) as http:
        listed = memtrove(base_env(home), "evolution", "notes/cache.md", "--json")
        docid = json.loads(listed.stdout)["docid"]
        answer = http.get(f"/graph/evolution/{docid}", params={"limit": 1})
        assert answer.status_code == 200
        body = answer.json()
        assert body["docid"] == docid and body["count"] >= 1 and len(body["evolution"]) == 1
        assert body["evolution"][0]["reasoning"] == "the TTL changed"
        bad = http.get(f"/graph/evolution/{docid}", params={"limit": 0})
        assert bad.status_code == 400 and "limit" in bad.json()["error"]
        assert http.get("/graph/evolution/not-a-docid").status_code == 400
        assert http.get("/graph/evolution/abcdef").status_code == 404
        assert httpx.get(server.url + f"/graph/evolution/{docid}").status_code == 401
