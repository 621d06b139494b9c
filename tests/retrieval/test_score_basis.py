"""``scoreBasis`` and the degraded fields on every search answer: MCP tools through the
SDK's own client, REST, and the CLI's ``--json``; a failing embedder makes the answers
that wanted vectors say so."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from typer.testing import CliRunner

from memtrove import Vault
from memtrove.api.app import create_app
from memtrove.cli import app
from memtrove.mcp.server import build_server
from memtrove.models.registry import ModelSettings
from tests.api.conftest import local_client
from tests.conftest import EXAMPLES
from tests.fakes.model_server import ModelServer

HOW = {"scoreBasis", "degraded", "degradedReason", "degradedLegs"}
QUESTION = "refresh token rotation"
# Each search tool with its arguments and the basis its scores have.
TOOLS: list[tuple[str, dict[str, Any], str]] = [
    ("search", {"query": QUESTION}, "fts-bm25"),
    ("search", {"query": "latest refresh token change"}, "composite"),
    ("vsearch", {"query": QUESTION}, "vector-cosine"),
    ("query", {"query": QUESTION}, "composite"),
    ("intent_search", {"query": "why did we rotate refresh tokens"}, "composite"),
    ("query_plan", {"query": "refresh tokens and image thumbnails"}, "composite"),
    ("memory_retrieve", {"query": QUESTION, "mode": "keyword"}, "fts-bm25"),
    ("memory_retrieve", {"query": QUESTION, "mode": "semantic"}, "vector-cosine"),
    ("memory_retrieve", {"query": QUESTION, "mode": "hybrid"}, "fused"),
    ("memory_retrieve", {"query": "why did we rotate refresh tokens"}, "composite"),
]


@pytest.fixture
def served(tmp_path: Path, model_server: ModelServer) -> Iterator[Vault]:
    settings = ModelSettings(embed_url=model_server.url, embed_dimensions=64)
    vault = Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "config", models=settings)
    vault.add_collection(EXAMPLES, name="demo")
    vault.update()
    vault.embed()
    yield vault
    vault.close()


def call_tools(vault: Vault, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    answers: list[dict[str, Any]] = []

    async def main() -> None:
        async with Client(build_server(lambda: vault)) as client:
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                assert not result.is_error, result.content
                answers.append(result.structured_content)

    anyio.run(main)
    return answers


def test_every_mcp_search_tool_says_what_its_scores_are(served: Vault) -> None:
    answers = call_tools(served, [(name, arguments) for name, arguments, _ in TOOLS])
    for (name, arguments, basis), answer in zip(TOOLS, answers, strict=True):
        assert set(answer) >= HOW, name
        assert (name, arguments, answer["scoreBasis"]) == (name, arguments, basis)
        assert answer["degraded"] is False and answer["degradedLegs"] == []
        assert answer["results"], name
    similar = call_tools(served, [("find_similar", {"file": answers[0]["results"][0]["docid"]})])
    assert similar[0]["scoreBasis"] == "vector-cosine"


def test_a_failed_vector_leg_is_named_in_every_answer_that_wanted_it(
    served: Vault, model_server: ModelServer
) -> None:
    model_server.set_mode("embeddings", "http500")
    wanted: list[tuple[str, dict[str, Any], str]] = [
        ("query", {"query": QUESTION}, "composite"),
        ("intent_search", {"query": QUESTION}, "composite"),
        # semantic falls back to keywords: the scores are BM25's, and the answer says why
        ("memory_retrieve", {"query": QUESTION, "mode": "semantic"}, "fts-bm25"),
    ]
    answers = call_tools(served, [(name, arguments) for name, arguments, _ in wanted])
    for (name, _, basis), answer in zip(wanted, answers, strict=True):
        assert answer["degraded"] is True, name
        assert "leg-failed" in answer["degradedReason"] and answer["degradedLegs"] == ["vector"]
        assert (name, answer["scoreBasis"]) == (name, basis)
        assert answer["results"], name
    keyword = call_tools(served, [("search", {"query": QUESTION})])[0]
    assert keyword["degraded"] is False  # BM25 alone never wanted vectors
    client = local_client(create_app(served))
    rest = client.post("/search", json={"query": QUESTION, "mode": "hybrid"}).json()
    assert rest["scoreBasis"] == "fused" and rest["degradedLegs"] == ["vector"]


def test_rest_and_the_cli_carry_the_basis(
    served: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = local_client(create_app(served))
    for mode, basis in (
        ("keyword", "fts-bm25"),
        ("semantic", "vector-cosine"),
        ("hybrid", "fused"),
    ):
        answer = client.post("/search", json={"query": QUESTION, "mode": mode}).json()
        assert (mode, answer["scoreBasis"], answer["degraded"]) == (mode, basis, False)
    answer = client.post("/retrieve", json={"query": QUESTION}).json()
    assert answer["scoreBasis"] == "composite"
    served.close()
    monkeypatch.setenv("MEMTROVE_VAULT", str(tmp_path / "v.sqlite"))
    monkeypatch.setenv("MEMTROVE_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("MEMTROVE_EMBED_URL", served.models.settings.embed_url or "")
    monkeypatch.setenv("MEMTROVE_EMBED_DIMENSIONS", "64")
    runner = CliRunner()
    for command, basis in (("search", "fts-bm25"), ("vsearch", "vector-cosine")):
        result = runner.invoke(app, [command, "refresh", "token", "--json"])
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        assert set(data) >= HOW and data["scoreBasis"] == basis and data["degraded"] is False
