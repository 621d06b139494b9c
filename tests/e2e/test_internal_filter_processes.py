"""No silent empties: memtrove's own notes never crowd an answer out.

A vault where the Stop hooks' handoff writer left 50 notes in ``_memtrove`` that match the
question better than the notes of the user's own collection: ``search``, ``memory_retrieve``
(and the other searching tools) over MCP answer ``limit`` results of the user's notes, as
do REST and the CLI; the notes of ``_memtrove`` come back only when asked for.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters

from memtrove import Vault
from memtrove.api import create_app
from memtrove.capture.turns import Turn
from memtrove.results.marking import FRAME_CLOSE, FRAME_OPEN
from tests.conftest import write

USER_NOTES = 8
CAPTURED = 50
LIMIT = 3


@pytest.fixture
def crowded(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A vault of USER_NOTES notes naming the grace window once each, and CAPTURED handoffs
    of sessions that talked of nothing else; the environment to reach it."""
    notes = tmp_path / "notes"
    for index in range(USER_NOTES):
        write(
            notes,
            f"ops/note-{index}.md",
            f"# Billing note {index}\n\nThe renewal job runs nightly. Long prose about "
            f"invoices, retries and ledgers number {index}. "
            * 6
            + "\nIt honours the grace window.\n",
        )
    vault = Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config")
    try:
        vault.add_collection(notes, "notes")
        vault.update()
        for index in range(CAPTURED):
            turns = [
                Turn(
                    f"grace window grace window: what is the grace window {index}?",
                    (f"The grace window is 72 hours; grace window grace window {index}.",),
                    (),
                )
            ]
            vault.capture.write_handoff(f"session-{index:02d}", turns, use_llm=False)
    finally:
        vault.close()
    env = {
        **os.environ,
        "MEMTROVE_VAULT": str(tmp_path / "vault.sqlite"),
        "MEMTROVE_CONFIG_DIR": str(tmp_path / "config"),
    }
    yield env


def _internal_share(env: dict[str, str], query: str) -> list[str]:
    """The collections of the top hits when nothing is left out: internal ones lead."""
    vault = Vault.open(Path(env["MEMTROVE_VAULT"]), config_dir=Path(env["MEMTROVE_CONFIG_DIR"]))
    try:
        return [r.collection for r in vault.search(query, LIMIT * 4)]
    finally:
        vault.close()


def _mcp(env: dict[str, str], calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "memtrove", "mcp"], env=env)
    answers: list[Any] = []

    async def main() -> None:
        async with Client(params) as client:
            for name, arguments in calls:
                answers.append(await client.call_tool(name, arguments))

    anyio.run(main)
    return answers


@pytest.mark.timeout(180)
def test_mcp_search_and_retrieve_fill_the_limit(crowded: dict[str, str]) -> None:
    query = "grace window"
    assert _internal_share(crowded, query)[:LIMIT] == ["_memtrove"] * LIMIT  # the trap is set
    own = {"query": query, "limit": LIMIT, "includeInternal": False}
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search", own),
        ("search", {**own, "compact": True}),
        ("memory_retrieve", own),
        ("memory_retrieve", {**own, "mode": "keyword"}),
        ("memory_retrieve", {**own, "mode": "hybrid"}),
        ("query", own),
        # the agent's own memories are searched by default, like the user's notes
        ("search", {"query": query, "limit": LIMIT}),
        ("memory_retrieve", {"query": query, "limit": LIMIT}),
        ("search", {"query": query, "limit": LIMIT, "collection": "_memtrove"}),
    ]
    answers = _mcp(crowded, calls)
    for (name, arguments), answer in zip(calls[:6], answers[:6], strict=True):
        data = answer.structured_content
        collections = [r["collection"] for r in data["results"]]
        assert collections == ["notes"] * LIMIT, (name, arguments, collections)
        # nothing failed (a vault without vectors skips them) and nothing was dropped
        assert data["untrusted"] is True and data["degraded"] is False, data["degradedReason"]
        text = answer.content[0].text
        assert text.startswith(FRAME_OPEN) and text.endswith(FRAME_CLOSE)
        assert "No results" not in text
    for answer in answers[6:]:
        collections = [r["collection"] for r in answer.structured_content["results"]]
        assert collections == ["_memtrove"] * LIMIT


@pytest.mark.timeout(120)
def test_rest_search_and_retrieve_fill_the_limit(crowded: dict[str, str]) -> None:
    vault = Vault.open(
        Path(crowded["MEMTROVE_VAULT"]), config_dir=Path(crowded["MEMTROVE_CONFIG_DIR"])
    )

    async def main() -> list[dict[str, Any]]:
        transport = httpx.ASGITransport(app=create_app(vault))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:7438") as c:
            found = []
            for route, body in (
                ("/search", {"query": "grace window", "limit": LIMIT, "mode": "keyword"}),
                ("/search", {"query": "grace window", "limit": LIMIT, "collection": "notes"}),
                ("/retrieve", {"query": "grace window", "limit": LIMIT}),
                ("/retrieve", {"query": "grace window", "limit": LIMIT, "mode": "hybrid"}),
            ):
                answer = await c.post(route, json=body)
                assert answer.status_code == 200, answer.text
                found.append(answer.json())
            return found

    try:
        answers = anyio.run(main)
    finally:
        vault.close()
    for data in answers:
        assert data["count"] == LIMIT and data["untrusted"] is True
        assert data["degraded"] is False and data["degradedReason"] is None
    assert {r["collection"] for r in answers[1]["results"]} == {"notes"}


@pytest.mark.timeout(120)
def test_cli_search_fills_the_limit(crowded: dict[str, str]) -> None:
    for command in (["search"], ["search", "-c", "notes"], ["query"]):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "memtrove",
                *command,
                "grace window",
                "-n",
                f"{LIMIT}",
                "--json",
            ],
            env=crowded,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        results = json.loads(done.stdout)["results"]
        assert len(results) == LIMIT, (command, results)
