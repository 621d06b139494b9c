"""``kg_query`` end to end: the ``memtrove kg`` command, the MCP tool over stdio with the
official client, and ``GET /graph/entity/{name}`` on a running ``memtrove serve``, all over
one vault whose entities were extracted by a real ``memtrove entities``."""

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

TOKEN = "kg-e2e-token-2b9d"


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
    folder = tmp_path_factory.mktemp("kg")
    notes = folder / "notes"
    write(notes, "adr-7.md", "# ADR 7\n\nCatalog moves from MySQL to PostgreSQL on Kubernetes.\n")
    write(notes, "ops.md", "# Ops\n\nPostgreSQL backups run nightly; Redis caches sessions.\n")
    env = base_env(folder)
    for command in (
        ("collection", "add", str(notes), "--name", "notes"),
        ("update",),
        ("entities", "--json"),
    ):
        result = memtrove(env, *command)
        assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["documents"] == 2
    with Vault.open(folder / "vault.sqlite", config_dir=folder / "config") as vault:
        vault.knowledge.add_triple("Catalog", "runs_on", "MySQL", valid_from="2024-01-01")
        vault.knowledge.add_triple("Catalog", "runs_on", "PostgreSQL", valid_from="2025-03-15")
        vault.knowledge.add_triple("Catalog", "prefers", "small transactions")
    return folder


def test_the_cli(home: Path) -> None:
    env = base_env(home)
    result = memtrove(env, "kg", "catalog", "--as-of", "2024-12-31", "--json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["entity_id"] == "default:concept:catalog"
    assert [(f["predicate"], f["object"]) for f in answer["facts"]] == [
        ("prefers", "small transactions"),
        ("runs_on", "MySQL"),
    ]
    text = memtrove(env, "kg", "postgres", "--direction", "incoming")
    assert text.returncode == 0 and "Catalog runs_on PostgreSQL" in text.stdout
    assert "default:tool:postgresql" in text.stdout  # resolved to the extracted entity
    for bad, message in (
        (["--direction", "up"], "direction must be one of"),
        (["--as-of", "someday"], "as_of must be a date"),
    ):
        failed = memtrove(env, "kg", "catalog", *bad)
        assert failed.returncode == 1 and message in failed.stderr
        assert failed.stderr.count("\n") == 1 and "Traceback" not in failed.stderr


def test_the_mcp_tool(home: Path, tmp_path: Path) -> None:
    listed, answers = call_tools(
        base_env(home),
        {
            "now": ("kg_query", {"entity": "Catalog"}),
            "then": ("kg_query", {"entity": "Catalog", "as_of": "2024-06-01"}),
            "bad": ("kg_query", {"entity": "Catalog", "direction": "sideways"}),
            "missing": ("kg_query", {}),
        },
        tmp_path / "stderr.txt",
    )
    assert "kg_query" in listed
    now, then = answers["now"], answers["then"]
    assert not now.is_error and now.structured_content["count"] == 3
    current = {f["object"]: f["current"] for f in now.structured_content["facts"]}
    assert current == {"small transactions": True, "PostgreSQL": True, "MySQL": False}
    assert [f["object"] for f in then.structured_content["facts"]] == [
        "small transactions",
        "MySQL",
    ]
    assert "Catalog runs_on MySQL" in then.content[0].text
    for name in ("bad", "missing"):
        result = answers[name]
        assert result.is_error and "\n" not in result.content[0].text
    assert "direction must be one of" in answers["bad"].content[0].text
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()


@pytest.fixture(scope="module")
def server(home: Path) -> Iterator[Server]:
    running = start(
        {**base_env(home), "MEMTROVE_API_TOKEN": TOKEN}, "--port", "0", log=home / "kg.log"
    )
    yield running
    assert running.stop() == 0
    assert "Traceback" not in running.log.read_text()


def test_the_rest_route(server: Server) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=server.url, timeout=30, headers=headers) as http:
        answer = http.get("/graph/entity/Catalog", params={"as_of": "2025-03-15"})
        assert answer.status_code == 200
        body = answer.json()
        assert [f["object"] for f in body["facts"]] == ["small transactions", "PostgreSQL"]
        assert body["as_of"] == "2025-03-15T23:59:59Z"
        incoming = http.get("/graph/entity/default:tool:postgresql?direction=incoming").json()
        assert [f["subject"] for f in incoming["facts"]] == ["Catalog"]
        unknown = http.get("/graph/entity/%E2%9C%93%20nobody").json()
        assert unknown["entity_id"] is None and unknown["facts"] == []
        bad = http.get("/graph/entity/Catalog", params={"direction": "up"})
        assert bad.status_code == 400 and "direction must be one of" in bad.json()["error"]
        bad = http.get("/graph/entity/Catalog", params={"as_of": "'; DROP TABLE x"})
        assert bad.status_code == 400 and "as_of" in bad.json()["error"]
        assert http.get("/graph/entity/" + "x" * 600).status_code == 422
        assert httpx.get(server.url + "/graph/entity/Catalog").status_code == 401
