"""query's temporal and entity channels and memory_retrieve's timeline as users run them: the
CLI in real processes and the MCP server over stdio with the official client, on the judged
temporal/entity set's notes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.mcp_calls import call_tools, unframed
from tests.e2e.test_serve import base_env
from tests.retrieval.channel_set import build

MARCH = "oncall/2026-03-13-oncall-report.md"


def memtrove(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "memtrove", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    return result


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("channels-e2e")
    build(folder).close()  # indexed, embedded, entities extracted
    return folder


def test_query_on_the_command_line(home: Path) -> None:
    env = base_env(home)
    found = json.loads(
        memtrove(
            env, "query", "what", "paged", "the", "on-call", "in", "March", "2026?", "--json"
        ).stdout
    )
    assert found["results"][0]["path"] == MARCH
    assert {"temporal", "proximity"} <= set(found["stages"])
    entity = json.loads(memtrove(env, "query", "Kubernetes", "batch", "jobs", "--json").stdout)
    assert "entities" in entity["stages"]
    text = memtrove(env, "query", "what", "paged", "the", "on-call", "in", "March", "2026?").stdout
    assert MARCH in text and "temporal" in text


def test_memory_retrieve_timeline_over_stdio(home: Path) -> None:
    _, answers = call_tools(
        base_env(home),
        {
            "timeline": (
                "memory_retrieve",
                {"query": "what happened in March 2026?", "mode": "timeline"},
            ),
            "auto": ("memory_retrieve", {"query": "what did we do yesterday?"}),
        },
        home / "mcp-stderr.txt",
    )
    timeline = answers["timeline"]
    assert not timeline.is_error
    assert unframed(timeline.content[0].text).startswith("[routed: timeline]")
    data = timeline.structured_content
    assert data["mode"] == "timeline" and data["window"]["phrase"] == "in March 2026"
    paths = [item["path"] for item in data["results"]]
    assert paths == [  # the March notes, oldest first
        "misc/coffee-machine.md",
        "sessions/2026-03-02-sessions-table.md",
        MARCH,
        "infra/2026-03-18-feature-flag-store.md",
    ]
    auto = answers["auto"].structured_content
    assert auto["mode"] == "timeline" and "sessions" in auto
