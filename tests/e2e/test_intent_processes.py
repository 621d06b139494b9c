"""intent-search, causal and plan as users run them: real CLI processes, the MCP server over
stdio with the official client, and ``memtrove serve`` over HTTP, on the judged set's notes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.e2e.mcp_calls import unframed
from tests.e2e.test_serve import base_env, start

DOCS = Path(__file__).resolve().parent.parent / "fixtures" / "intent" / "docs"
EDGES = Path(__file__).resolve().parent.parent / "fixtures" / "intent" / "edges.json"
DECISION = "intent/decisions/2026-03-06-billing-connection-pool.md"
OUTAGE = "postmortems/2026-03-04-billing-outage.md"


def memtrove(env: dict[str, str], *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "memtrove", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == code, (result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    return result


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The judged set's notes, bootstrapped by the CLI, with its edges written from Python."""
    from memtrove.vault import Vault

    folder = tmp_path_factory.mktemp("intent-e2e")
    shutil.copytree(DOCS, folder / "notes")
    env = base_env(folder)
    memtrove(env, "bootstrap", str(folder / "notes"), "--name", "intent")
    with Vault.open(folder / "vault.sqlite", config_dir=folder / "config") as vault:
        for source, target, kind, weight in json.loads(EDGES.read_text(encoding="utf-8")):
            vault.graph.relate(f"intent/{source}", f"intent/{target}", kind, weight)
    return folder


def test_the_cli_commands(home: Path) -> None:
    env = base_env(home)
    question = ["why", "did", "we", "put", "PgBouncer", "in", "front", "of", "billing?"]
    found = json.loads(memtrove(env, "intent-search", *question, "--json").stdout)
    assert found["intent"] == "WHY" and "graph" in found["stages"]
    assert OUTAGE in [hit["path"] for hit in found["results"][:3]]
    text = memtrove(env, "intent-search", *question).stdout
    assert text.startswith("intent: WHY (0.90, heuristic)") and "stages: " in text

    chain = json.loads(memtrove(env, "causal", DECISION, "--json").stdout)
    assert chain["count"] == 2 and {link["direction"] for link in chain["links"]} == {
        "causes",
        "caused_by",
    }
    assert "came from" in memtrove(env, "causal", DECISION, "-d", "caused_by").stdout

    plan = json.loads(
        memtrove(env, "plan", "how do we deploy; on-call handover day", "--json").stdout
    )
    assert len(plan["clauses"]) == 3 and all("clauses" in hit for hit in plan["results"])

    for args in (
        ("intent-search", "x", "--intent", "HOW"),
        ("causal", DECISION, "--direction", "sideways"),
        ("causal", "#ffffff"),
    ):
        refused = memtrove(env, *args, code=1)
        assert refused.stderr.startswith("memtrove: error: ") and refused.stderr.count("\n") == 1


def test_the_mcp_tools_over_stdio(home: Path) -> None:
    env = base_env(home)
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "memtrove", "mcp"], env=env
    )
    answers: dict[str, object] = {}

    async def main() -> None:
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert {"intent_search", "find_causal_links", "query_plan"} <= names
            answers["intent"] = await session.call_tool(
                "intent_search", {"query": "why did we put PgBouncer in front of billing?"}
            )
            answers["causal"] = await session.call_tool(
                "find_causal_links", {"docid": DECISION, "direction": "causes", "depth": 2}
            )
            answers["plan"] = await session.call_tool("query_plan", {"query": "deploys; on-call"})
            answers["routed"] = await session.call_tool(
                "memory_retrieve", {"query": "why did the mobile SDK get single-flight refresh?"}
            )
            answers["bad"] = await session.call_tool(
                "find_causal_links", {"docid": DECISION, "depth": 99}
            )

    anyio.run(main)
    intent = answers["intent"]
    assert intent.structured_content["intent"] == "WHY"  # type: ignore[attr-defined]
    assert unframed(intent.content[0].text).startswith("[intent: WHY")  # type: ignore[attr-defined]
    assert answers["causal"].structured_content["count"] == 1  # type: ignore[attr-defined]
    assert answers["plan"].structured_content["clauses"]  # type: ignore[attr-defined]
    routed = answers["routed"]
    assert routed.structured_content["mode"] == "causal"  # type: ignore[attr-defined]
    assert unframed(routed.content[0].text).startswith("[routed: causal]")  # type: ignore[attr-defined]
    bad = answers["bad"]
    assert bad.is_error and "depth must be" in bad.content[0].text  # type: ignore[attr-defined]


def test_the_rest_routes(home: Path) -> None:
    server = start(base_env(home), "--port", "0", log=home / "serve.log")
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            found = http.post(
                "/search/intent", json={"query": "why did we put PgBouncer in front of billing?"}
            ).json()
            assert found["intent"] == "WHY" and found["count"] > 0
            docid = found["results"][0]["docid"]
            chain = http.get(f"/graph/causal/{docid}", params={"direction": "both"}).json()
            assert chain["docid"] == docid and chain["count"] >= 1
            plan = http.post("/search/plan", json={"query": "deploys; on-call handover"}).json()
            assert plan["clauses"] and plan["count"] > 0
            routed = http.post("/retrieve", json={"query": "deploys vs on-call", "mode": "complex"})
            assert routed.status_code == 200 and routed.json()["mode"] == "complex"
            assert http.post("/search/intent", json={"query": " "}).status_code == 422
            assert (
                http.post("/search/intent", json={"query": "x", "force_intent": "HOW"}).status_code
                == 422
            )
            assert http.get("/graph/causal/zzz").status_code == 400
            assert http.get(f"/graph/causal/{docid}", params={"depth": 0}).status_code == 422
            assert http.get(f"/graph/causal/{docid}", params={"direction": "up"}).status_code == 400
    finally:
        assert server.stop() == 0
    assert "Traceback" not in server.log.read_text()
