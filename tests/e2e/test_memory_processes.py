"""The extraction queue and its nudges end to end: ``memtrove buffer-batch`` and
``buffer-tool`` processes, context-surfacing hook processes, and the MCP tools over stdio."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession
from mcp.client.stdio import stdio_client

from tests.e2e.test_mcp_stdio import env, environment, prepared, server_parameters  # noqa: F401

SESSION = "e2e-session-7f3a"
SECRET = "sk-proj-Zz9yXx8wVv7uUt6sSr5qQp4oOn3m"


def run(
    arguments: list[str], stdin: bytes, environ: dict[str, str]
) -> subprocess.CompletedProcess[bytes]:
    done = subprocess.run(
        [sys.executable, "-m", "memtrove", *arguments],
        input=stdin,
        env=environ,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done


def surface(env: dict[str, str], prompt: str, session: str = SESSION) -> str:  # noqa: F811
    body = json.dumps({"session_id": session, "hook_event_name": "UserPromptSubmit",
                       "prompt": prompt, "cwd": str(Path(env["HOME"]))}).encode()  # fmt: skip
    answer = json.loads(run(["hook", "context-surfacing"], body, env).stdout)
    return str(answer["hookSpecificOutput"]["additionalContext"])


def batch(calls: list[dict[str, Any]], session: str = SESSION) -> bytes:
    return json.dumps({"session_id": session, "hook_event_name": "PostToolBatch",
                       "tool_calls": calls}).encode()  # fmt: skip


def test_queue_nudges_and_drain_across_processes(env: dict[str, str]) -> None:  # noqa: F811
    calls = [
        {"tool_name": "Bash", "tool_input": {"command": "fly deploy --region ams"},
         "tool_response": {"stdout": "deployed v42 to ams", "stderr": ""}},
        {"tool_name": "Read", "tool_input": {"file_path": ".env"},
         "tool_response": f"OPENAI_API_KEY={SECRET}\nREGION=ams"},
        {"tool_name": "mcp__memtrove__search", "tool_input": {"query": "x"}, "tool_response": "y"},
    ]  # fmt: skip
    done = run(["buffer-batch"], batch(calls), env)
    assert done.stdout == b"" and done.stderr == b""
    single = {"conversation_id": SESSION, "tool_name": "Grep",
              "tool_input": {"pattern": "region"}, "tool_output": "fly.toml: primary_region=ams"}  # fmt: skip
    assert run(["buffer-tool"], json.dumps(single).encode(), env).stdout == b""
    assert run(["buffer-batch"], b"not json at all", env).stdout == b""  # fails open, silently

    prompts = [f"How do we deploy the photo service, part {n}?" for n in range(5)]
    contexts = [surface(env, prompt) for prompt in prompts]
    assert "When you reach a pause" in contexts[0] and "When you reach a pause" in contexts[1]
    assert "Reminder:" in contexts[2]
    assert "OVERDUE (3 REMINDERS IGNORED)" in contexts[3]
    assert all(c.startswith("<memory-extraction>") for c in contexts)
    assert "<memory-extraction>" not in surface(env, "How do we deploy it?", session="other")

    found: dict[str, Any] = {}

    async def agent() -> None:
        async with (
            stdio_client(server_parameters(env)) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            payload = await session.call_tool("get_extraction_payload", {"session_id": SESSION})
            found["payload"] = payload.structured_content
            again = await session.call_tool("get_extraction_payload", {"session_id": SESSION})
            found["again"] = again.structured_content
            saved = await session.call_tool(
                "memory_remember",
                {"label": "Deploy region", "content": "The photo service deploys to Fly.io ams.",
                 "session_id": SESSION},
            )  # fmt: skip
            found["saved"] = saved.structured_content
            recalled = await session.call_tool("memory_recall", {"query": "where do we deploy"})
            found["recalled"] = recalled.structured_content
            empty = await session.call_tool("get_extraction_payload", {"session_id": SESSION})
            found["empty"] = empty.structured_content
            refused = await session.call_tool(
                "memory_remember", {"label": "deploy region", "content": "other"}
            )
            found["refused"] = (refused.is_error, refused.content[0].text)

    anyio.run(agent)
    interactions = found["payload"]["payload"]["interactions"]
    assert [i["tool_name"] for i in interactions] == ["Bash", "Read", "Grep"]
    assert SECRET not in json.dumps(interactions) and "[REDACTED:" in json.dumps(interactions)
    assert found["again"] == found["payload"]  # peeking removes nothing
    assert found["saved"]["drained"] == 3 and found["saved"]["created"] is True
    assert found["recalled"]["entries"][0]["label"] == "Deploy region"
    assert found["empty"]["payload"] is None
    assert (
        found["refused"][0] is True
        and "already has an entry 'Deploy region'" in found["refused"][1]
    )
    after = surface(env, "How do we deploy the photo service now?")
    assert "<memory-extraction>" not in after

    # A new batch starts polite again: the count was reset with the drain.
    run(["buffer-batch"], batch(calls[:1]), env)
    assert "When you reach a pause" in surface(env, "And how do we roll back a deploy?")


def test_cli_memory_commands(env: dict[str, str], tmp_path: Path) -> None:  # noqa: F811
    def cli(*arguments: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-m", "memtrove", *arguments], input=stdin,
                              env=env, capture_output=True, timeout=60, cwd=tmp_path)  # fmt: skip

    assert cli("remember", "Café Müller", "Meet at the café.", "--confidence", "8").returncode == 0
    piped = cli("remember", "Runbook", "-", stdin=b"1. drain\n2. deploy\n")
    assert piped.returncode == 0 and b"remembered" in piped.stdout
    refused = cli("remember", "café müller", "again")
    assert refused.returncode == 1
    assert refused.stderr.decode().startswith("memtrove: error: store ")
    assert cli("remember", "café müller", "Meet at noon.", "--overwrite").returncode == 0
    recalled = json.loads(cli("recall", "where do we meet", "--json").stdout)
    assert recalled[0]["label"] == "café müller" and recalled[0]["recall_count"] == 1
    assert recalled[0]["content"] == "Meet at noon." and recalled[0]["confidence"] is None
    assert b"Store is healthy." in cli("hygiene").stdout
    added = json.loads(cli("behavior", "add", "Run tests before pushing", "--when",
                           "about to push a branch", "--json").stdout)  # fmt: skip
    assert cli("behavior", "confirm", added["id"], "--soft").returncode == 0
    listed = json.loads(cli("behavior", "list", "--json").stdout)
    assert listed[0]["confirm_count"] == 0.25 and listed[0]["confidence"] == round(2.75 / 5.25, 4)
    bad = cli("prediction", "confirm", "p-nope")
    assert bad.returncode == 1 and bad.stderr.count(b"\n") == 1
    assert cli("forget", "Runbook").returncode == 0
    assert cli("forget", "Runbook").returncode == 1


def test_buffer_batch_answers_when_stdin_stays_open(env: dict[str, str]) -> None:  # noqa: F811
    """A writer that never closes its end: the call is queued and the process still ends."""
    import time

    call = {"session_id": "open-stdin", "tool_calls": [
        {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": "a b"}]}  # fmt: skip
    for data in (json.dumps(call).encode(), b'{"session_id": "open-stdin", "tool_'):
        process = subprocess.Popen(
            [sys.executable, "-m", "memtrove", "buffer-batch"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        )  # fmt: skip
        assert process.stdin is not None
        process.stdin.write(data)
        process.stdin.flush()
        started = time.monotonic()
        try:
            assert process.wait(timeout=15) == 0
        finally:
            process.kill()
            process.stdin.close()
        assert time.monotonic() - started < 10
        assert process.stdout is not None and process.stdout.read() == b""
