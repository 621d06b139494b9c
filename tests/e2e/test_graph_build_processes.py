"""``build_graphs`` end to end: ``memtrove build-graphs``, the MCP tool over stdio with the
official client, and ``POST /graphs/build`` on a running ``memtrove serve``, over one vault
indexed and embedded by real ``memtrove update`` / ``memtrove embed`` processes; the links
its notes write are reference edges by then."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from memtrove import Vault
from tests.conftest import write
from tests.e2e.mcp_calls import call_tools
from tests.e2e.test_serve import Server, base_env, start

TOKEN = "graphs-e2e-token-5c1e"


def memtrove(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memtrove", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("graphs")
    notes = folder / "notes"
    write(notes, "incident.md", "# Pool exhaustion\n\nThe catalog exhausted its Postgres pool.\n")
    write(
        notes, "decision.md", "# Raise the pool\n\nAfter [the incident](incident.md) we grew it.\n"
    )
    write(notes, "follow up.md", "# Follow-up\n\nSee [[decision]] and [[Nothing Yet]].\n")
    env = base_env(folder)
    for command in (("collection", "add", str(notes), "--name", "notes"), ("update",), ("embed",)):
        result = memtrove(env, *command)
        assert result.returncode == 0, result.stderr
    return folder


def reference_edges(home: Path) -> set[tuple[str, str]]:
    with Vault.open(home / "vault.sqlite", config_dir=home / "config") as vault:
        return {
            (r.source_title, r.target_title)
            for r in vault.graph.relations_of("notes/decision.md")
            if r.relation_type == "reference"
        }


def test_links_are_edges_after_a_real_update(home: Path) -> None:
    assert reference_edges(home) == {
        ("Raise the pool", "Pool exhaustion"),
        ("Follow-up", "Raise the pool"),
    }


def test_the_cli(home: Path) -> None:
    env = base_env(home)
    first = memtrove(env, "build-graphs", "--type", "temporal", "--json")
    assert first.returncode == 0, first.stderr
    answer = json.loads(first.stdout)
    assert answer["temporalTotal"] == 2 and "semantic" not in answer
    again = memtrove(env, "build-graphs", "--type", "temporal")
    assert again.returncode == 0 and again.stdout.startswith("0 new edge(s), 2 total")
    for bad, message in (
        (["--type", "social"], "unknown graph type 'social'"),
        (["--threshold", "7"], "semantic_threshold must be between 0 and 1"),
    ):
        failed = memtrove(env, "build-graphs", *bad)
        assert failed.returncode == 1 and message in failed.stderr, failed.stderr
        assert failed.stderr.count("\n") == 1 and "Traceback" not in failed.stderr


def test_the_mcp_tool(home: Path, tmp_path: Path) -> None:
    listed, answers = call_tools(
        base_env(home),
        {
            "all": ("build_graphs", {"graph_types": ["all"], "semantic_threshold": 0.0}),
            "rerun": ("build_graphs", {}),
            "bad": ("build_graphs", {"graph_types": ["nope"]}),
            "wrong": ("build_graphs", {"semantic_threshold": "high"}),
        },
        tmp_path / "stderr.txt",
    )
    assert "build_graphs" in listed
    built = answers["all"]
    assert not built.is_error, built.content
    assert built.structured_content["semantic"] >= 1
    assert built.structured_content["temporalTotal"] == 2
    assert "new edge(s)" in built.content[0].text
    rerun = answers["rerun"].structured_content
    assert (rerun["temporal"], rerun["semantic"]) == (0, 0)
    for name in ("bad", "wrong"):
        result = answers[name]
        assert result.is_error and "\n" not in result.content[0].text
    assert "unknown graph type 'nope'" in answers["bad"].content[0].text
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()


@pytest.fixture(scope="module")
def server(home: Path) -> Iterator[Server]:
    running = start(
        {**base_env(home), "MEMTROVE_API_TOKEN": TOKEN}, "--port", "0", log=home / "graphs.log"
    )
    yield running
    assert running.stop() == 0
    assert "Traceback" not in running.log.read_text()


def test_the_rest_route(server: Server) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=server.url, timeout=60, headers=headers) as http:
        answer = http.post("/graphs/build", json={"semantic": False})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["temporalTotal"] == 2 and "semantic" not in body
        both = http.post("/graphs/build", json={}).json()
        assert {"temporal", "temporalTotal", "semantic", "semanticTotal"} <= set(both)
        typed = http.post("/graphs/build", json={"graph_types": ["semantic"]}).json()
        assert "temporal" not in typed and typed["semantic"] == 0
        bad = http.post("/graphs/build", json={"graph_types": ["x"]})
        assert bad.status_code == 400 and "unknown graph type" in bad.json()["error"]
        empty = http.post("/graphs/build", json={"graph_types": []})  # as over MCP
        assert empty.status_code == 400 and "graph_types must be" in empty.json()["error"]
        bad = http.post("/graphs/build", json={"semantic_threshold": 2})
        assert bad.status_code == 422
        bad = http.post("/graphs/build", json={"temporal": "yes", "extra": 1})
        assert bad.status_code == 422
        assert httpx.post(server.url + "/graphs/build", json={}).status_code == 401
