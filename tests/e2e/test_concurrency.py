"""One vault, many writers: ten hook processes and an MCP session at the same time."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.e2e.test_hooks_processes import process_env
from tests.hooks.conftest import (  # noqa: F401  (fixtures)
    hook_env,
    payload,
    surfacing_vault,
    template_vault,
)

TOPICS = ["thumbnail worker memory", "refresh token rotation", "resumable uploads",
          "pyvips decoder benchmark", "postgres metadata schema", "HEIC support options",
          "kickoff meeting notes", "launch scope for v1", "glossary of terms",
          "weekly status of week 33"]  # fmt: skip
JWT = "demo/decisions/0004-jwt-access-and-rotating-refresh-tokens.md"
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search", {"query": "refresh token", "limit": 3}),
    ("memory_pin", {"query": JWT}),
    ("session_log", {"limit": 5}),
    ("memory_snooze", {"query": JWT, "until": "2099-01-31"}),
    ("reindex", {}),
    ("memory_snooze", {"query": JWT}),
    ("memory_pin", {"query": JWT, "unpin": True}),
    ("lifecycle_status", {}),
]


def test_ten_hooks_and_an_mcp_session_share_the_vault(
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
) -> None:
    # what is tested is sharing the vault, not speed: time enough for ten hooks starting at
    # once on a busy machine
    env = process_env(hook_env, MEMTROVE_HOOK_TIMEOUT="30")
    mcp_results: list[tuple[str, bool, str]] = []
    mcp_errors: list[BaseException] = []
    started = threading.Event()

    async def session() -> None:
        parameters = StdioServerParameters(
            command=sys.executable, args=["-m", "memtrove", "mcp"], env=env
        )
        async with (
            stdio_client(parameters) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            started.set()
            for _ in range(3):
                for name, arguments in CALLS:
                    result = await client.call_tool(name, arguments)
                    text = str(result.content[0].text) if result.content else ""
                    mcp_results.append((name, bool(result.is_error), text))

    def run_session() -> None:
        try:
            anyio.run(session)
        except BaseException as error:  # reported by the main thread
            mcp_errors.append(error)
            started.set()

    agent = threading.Thread(target=run_session)
    agent.start()
    assert started.wait(60)
    rounds = 3
    for round_number in range(rounds):
        processes = [
            subprocess.Popen(
                [sys.executable, "-m", "memtrove", "hook", "context-surfacing"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            )
            for _ in TOPICS
        ]
        # each gets its prompt at once, as Claude Code sends it (one after the other, the
        # last ones would wait for their input while the first ran)
        for index, (process, topic) in enumerate(zip(processes, TOPICS, strict=True)):
            prompt = f"What do my notes say about {topic}? (round {round_number})"
            assert process.stdin is not None
            process.stdin.write(
                payload("user_prompt_submit.json", prompt=prompt, session_id=f"s{index}")
            )
            process.stdin.flush()
        for process in processes:
            out, err = process.communicate(timeout=60)
            assert process.returncode == 0 and err == b"", err
            assert json.loads(out)["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    agent.join(timeout=120)
    assert not agent.is_alive() and mcp_errors == []
    assert len(mcp_results) == 3 * len(CALLS)
    for name, is_error, text in mcp_results:
        assert not is_error, (name, text)
        assert "locked" not in text.lower() and "busy" not in text.lower(), (name, text)
    with sqlite3.connect(surfacing_vault) as connection:
        turns = connection.execute(
            "SELECT session_id, COUNT(*), MAX(turn_index) FROM context_usage "
            "WHERE hook_name = 'context-surfacing' GROUP BY session_id"
        ).fetchall()
        curation = connection.execute(
            "SELECT COUNT(*) FROM context_usage WHERE hook_name LIKE 'memory_%'"
        ).fetchone()[0]
    assert sorted(turns) == sorted((f"s{i}", rounds, rounds - 1) for i in range(len(TOPICS)))
    assert curation == 3 * 4  # two pins and two snoozes per pass, each logged
