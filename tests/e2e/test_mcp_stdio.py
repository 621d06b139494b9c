"""``memtrove mcp`` as Claude Code runs it: a real subprocess driven by the official MCP client.

The vault is the examples, bootstrapped (indexed and embedded) once by a real ``memtrove
bootstrap``; each test serves a copy. Timings are printed, never asserted.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client

from memtrove.results.marking import FRAME_CLOSE, FRAME_OPEN
from tests.conftest import EXAMPLES

JWT = "demo/decisions/0004-jwt-access-and-rotating-refresh-tokens.md"
TOOLS = {
    "__IMPORTANT", "memory_retrieve", "query", "search", "vsearch", "get", "multi_get",
    "find_similar", "timeline", "status", "index_stats", "reindex", "memory_pin",
    "memory_snooze", "memory_forget", "session_log", "lifecycle_status",
    "memory_remember", "memory_recall", "memory_forget_entry", "find_duplicates",
    "dedup_mark_checked", "hygiene_report", "get_extraction_payload", "extraction_done",
    "memory_archive",
    "rule_add", "rule_link", "rule_signal", "rule_codify", "rule_list",
    "kg_query", "build_graphs", "intent_search", "find_causal_links", "query_plan",
    "memory_evolution_status", "lifecycle_sweep", "lifecycle_restore", "mine", "import_status",
    "diary_write", "diary_read", "profile", "beads_sync", "list_vaults", "vault_sync",
}  # fmt: skip

# tool -> (good arguments, text the answer contains, bad arguments, text the error contains)
CALLS: list[tuple[str, dict[str, Any], str, dict[str, Any], str]] = [
    ("__IMPORTANT", {}, "memory_retrieve", {"extra": 1}, "has no argument 'extra'"),
    ("memory_retrieve", {"query": "ADR-0004 JWT"}, "[routed: keyword]",
     {"query": "x", "mode": "psychic"}, "unknown mode 'psychic'"),
    ("intent_search", {"query": "why do users get logged out?"}, "[intent: WHY",
     {"query": "x", "force_intent": "HOW"}, "force_intent must be one of WHY, WHEN"),
    ("find_causal_links", {"docid": JWT}, "Causal links of #e1745d",
     {"docid": JWT, "depth": 99}, "depth must be a whole number from 1 to 10"),
    ("query_plan", {"query": "refresh token rotation; thumbnail workers"}, "Plan:",
     {"query": "x", "limit": 0}, "limit must be a positive integer"),
    ("query", {"query": "why do users get logged out?", "limit": 3}, "stages: ",
     {"query": "x", "minScore": 3}, "minScore must be between 0 and 1"),
    ("search", {"query": "refresh token", "limit": 2}, 'Found 2 results for "refresh token"',
     {"limit": 2}, "invalid arguments for search: query: Field required"),
    ("vsearch", {"query": "uploading large videos from a phone", "limit": 2}, "Found 2 results",
     {"query": "x", "collection": "nope"}, "no collection named 'nope'"),
    ("get", {"file": JWT, "maxLines": 3, "lineNumbers": True}, "#e1745d demo/decisions/",
     {"file": "demo/../../etc/passwd"}, "is not a document in the vault"),
    ("multi_get", {"pattern": "demo/decisions/*.md", "maxLines": 2}, "#e1745d",
     {"pattern": "#e1745d", "maxBytes": 0}, "maxBytes must be a positive integer"),
    ("find_similar", {"file": JWT, "limit": 3}, "Found 3 results",
     {"file": "demo/nope.md"}, "no document"),
    ("timeline", {"docid": "#e1745d", "before": 2, "after": 2}, "> ",
     {"docid": "#e1745d", "after": 50}, "after must be between 1 and 20"),
    ("status", {}, "documents 30 active", {"vault": 7}, "invalid arguments for status: vault"),
    ("index_stats", {}, "embedded 30", {"vault": []}, "invalid arguments for index_stats"),
    ("session_log", {"limit": 5}, "No sessions recorded yet", {"limit": -1}, "limit must be"),
    ("lifecycle_status", {}, "active 30", {"vault": {}}, "invalid arguments"),
    ("lifecycle_sweep", {}, "dry run: 0 documents would be archived", {"dry_run": "perhaps"},
     "invalid arguments for lifecycle_sweep"),
    ("lifecycle_restore", {"all": True}, "restored 0 documents", {}, "say what to restore"),
    ("reindex", {}, "reindexed +0 ~0 =30 -0", {"vault": 1.5}, "invalid arguments"),
    ("memory_pin", {"query": JWT}, "Pinned: #e1745d", {"query": JWT, "unpin": "maybe"},
     "invalid arguments for memory_pin: unpin"),
    ("memory_snooze", {"query": JWT, "until": "2099-01-31"}, "Snoozed until 2099-01-31",
     {"query": JWT, "until": "2001-01-01"}, "2001-01-01"),
    ("memory_forget", {"query": "#e1745d", "confirm": False}, "Would forget #e1745d",
     {"query": "#e1745d", "confirm": "perhaps"}, "invalid arguments for memory_forget"),
]  # fmt: skip


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A vault of the examples, indexed and embedded by a real ``memtrove bootstrap``."""
    root = tmp_path_factory.mktemp("mcp-vault")
    result = subprocess.run(
        [sys.executable, "-m", "memtrove", "bootstrap", str(EXAMPLES), "--name", "demo"],
        env=environment(root),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return root


def environment(root: Path) -> dict[str, str]:
    home = root / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMTROVE_")}
    return env | {
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "MEMTROVE_VAULT": str(root / "vault.sqlite"),
        "MEMTROVE_CONFIG_DIR": str(root / "config"),
    }


@pytest.fixture
def env(prepared: Path, tmp_path: Path) -> dict[str, str]:
    """A private copy of the prepared vault."""
    root = tmp_path / "served"
    shutil.copytree(prepared, root, ignore=shutil.ignore_patterns("home"))
    return environment(root)


def server_parameters(env: dict[str, str], *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "memtrove", "mcp", *args], env=env
    )


def text_of(result: Any) -> str:
    """The answer's text inside its data frame (every answer of vault data has one)."""
    text = str(result.content[0].text)
    if result.is_error or not (result.structured_content or {}).get("untrusted"):
        return text  # an error, __IMPORTANT: nothing of the vault's in it
    head, opening, rest = text.partition(FRAME_OPEN + "\n")
    assert opening and rest.endswith("\n" + FRAME_CLOSE), text[:200]
    return head + rest.removesuffix("\n" + FRAME_CLOSE)


def test_every_tool_over_stdio(
    env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stderr_path = tmp_path / "server-stderr.txt"
    timings: dict[str, float] = {}

    async def main() -> None:
        with stderr_path.open("w") as errlog:
            started = time.perf_counter()
            async with (
                stdio_client(server_parameters(env), errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                initialized = await session.initialize()
                timings["spawn to initialized"] = time.perf_counter() - started
                listed_at = time.perf_counter()
                listed = await session.list_tools()
                timings["tools/list"] = time.perf_counter() - listed_at
                timings["spawn to tools listed"] = time.perf_counter() - started
                assert initialized.server_info.name == "memtrove"
                assert {tool.name for tool in listed.tools} == TOOLS

                for name, good, expected, bad, error in CALLS:
                    result = await session.call_tool(name, good)
                    assert not result.is_error, (name, text_of(result))
                    assert expected in text_of(result), (name, text_of(result))
                    assert isinstance(result.structured_content, dict), name
                    result = await session.call_tool(name, bad)
                    assert result.is_error, (name, bad, text_of(result))
                    assert error in text_of(result) and "\n" not in text_of(result)

                vague = await session.call_tool("memory_pin", {"query": "zyzzyva quux"})
                assert not vague.is_error and "nothing was pinned" in text_of(vague)
                done = await session.call_tool("memory_forget", {"query": "#e1745d"})
                assert done.structured_content["changed"] is True
                gone = await session.call_tool("search", {"query": "rotating refresh tokens"})
                assert "#e1745d" not in text_of(gone)

                read_back = await session.read_resource("memtrove://demo/index.md")
                assert read_back.contents[0].text.startswith("1: ")
                for uri in ("memtrove://demo/../../etc/passwd", f"memtrove://{JWT}/../../x"):
                    with pytest.raises(MCPError):
                        await session.read_resource(uri)

    anyio.run(main)
    stderr = stderr_path.read_text()
    assert "Traceback" not in stderr and "Error" not in stderr, stderr
    with capsys.disabled():
        print(
            "\nmemtrove mcp over stdio: "
            + ", ".join(f"{name} {seconds * 1000:.0f} ms" for name, seconds in timings.items())
        )


def start_stdio(env: dict[str, str]) -> subprocess.Popen[str]:
    """``memtrove mcp`` over stdio, text pipes on all three streams."""
    return subprocess.Popen(
        [sys.executable, "-m", "memtrove", "mcp"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_stdout_carries_only_protocol(env: dict[str, str]) -> None:
    """Every line on stdout is a JSON-RPC message, even around model loading and failures."""
    process = start_stdio(env)
    assert process.stdin is not None and process.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert process.stdin is not None
        process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        process.stdin.flush()

    def answer(request_id: int) -> dict[str, Any]:
        assert process.stdout is not None
        while True:
            message = json.loads(process.stdout.readline())
            assert message["jsonrpc"] == "2.0"
            if message.get("id") == request_id:
                return dict(message)

    try:
        send(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }
        )
        assert answer(1)["result"]["serverInfo"]["name"] == "memtrove"
        send({"method": "notifications/initialized"})
        calls = [
            ("vsearch", {"query": "image decoding library"}),  # loads the embedded model
            ("memory_retrieve", {"query": "explain the thumbnail pipeline"}),
            ("query", {"query": "thumbnail memory leak", "limit": 2}),
            ("get", {"file": "demo/nope.md"}),
            ("reindex", {}),
        ]
        for number, (name, arguments) in enumerate(calls, 2):
            send({"id": number, "method": "tools/call", "params": {"name": name, "arguments": arguments}})  # fmt: skip
            assert "result" in answer(number)
        process.stdin.write("this is not json\n")
        process.stdin.flush()
        send({"id": 99, "method": "tools/list"})
        assert len(answer(99)["result"]["tools"]) == len(TOOLS)
        rest, stderr = process.communicate(timeout=30)  # closes stdin: the server exits
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    for line in rest.splitlines():
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert process.returncode == 0 and "Traceback" not in stderr, stderr


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_streamable_http_on_loopback(env: dict[str, str]) -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "memtrove", "mcp", "--http", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.communicate()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "memtrove mcp --http did not start"
                time.sleep(0.05)

        async def main() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                listed = await client.list_tools()
                assert {tool.name for tool in listed.tools} == TOOLS
                result = await client.call_tool("search", {"query": "perceptual hash", "limit": 1})
                assert not result.is_error and "#" in text_of(result)

        anyio.run(main)
        busy = subprocess.run(
            [sys.executable, "-m", "memtrove", "mcp", "--http", "--port", str(port)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert busy.returncode == 1
        assert busy.stderr == f"memtrove: error: cannot listen on 127.0.0.1:{port}: in use\n"
    finally:
        process.terminate()
        stdout, stderr = process.communicate(timeout=30)
    assert stdout == "" and "Traceback" not in stderr, stderr
    assert stderr.startswith(f"memtrove mcp: streamable HTTP on http://127.0.0.1:{port}/mcp")


def handshake(env: dict[str, str], errlog: Path) -> tuple[float, dict[str, Any], list[str]]:
    """One stdio session: (seconds from spawn to tools listed, initialize result, tool names)."""
    found: dict[str, Any] = {}

    async def main() -> None:
        with errlog.open("a") as stream:
            started = time.perf_counter()
            async with (
                stdio_client(server_parameters(env), errlog=stream) as (read, write),
                ClientSession(read, write) as session,
            ):
                initialized = await session.initialize()
                listed = await session.list_tools()
                found["seconds"] = time.perf_counter() - started
                found["initialize"] = initialized.model_dump(mode="json")
                found["tools"] = [tool.name for tool in listed.tools]
                result = await session.call_tool("search", {"query": "refresh token", "limit": 1})
                assert not result.is_error and "#" in text_of(result)

    anyio.run(main)
    return found["seconds"], found["initialize"], found["tools"]


def answers_file(env: dict[str, str]) -> Path:
    return Path(env["XDG_CACHE_HOME"]) / "memtrove" / "mcp-answers.json"


def test_the_handshake_is_answered_from_stored_answers(
    env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    errlog = tmp_path / "stderr.txt"
    assert not answers_file(env).exists()
    cold, first_initialize, first_tools = handshake(env, errlog)
    stored = json.loads(answers_file(env).read_text())
    methods = {json.loads(key)[0] for key in stored["answers"]}
    assert {"initialize", "tools/list"} <= methods
    warm, second_initialize, second_tools = handshake(env, errlog)
    assert second_initialize == first_initialize and second_tools == first_tools
    assert set(second_tools) == TOOLS
    assert "Traceback" not in errlog.read_text() and "out of date" not in errlog.read_text()
    with capsys.disabled():
        print(f"\nmcp handshake: first start {cold * 1000:.0f} ms, later {warm * 1000:.0f} ms")


def test_an_out_of_date_stored_answer_heals(env: dict[str, str], tmp_path: Path) -> None:
    errlog = tmp_path / "stderr.txt"
    handshake(env, errlog)
    path = answers_file(env)
    stored = json.loads(path.read_text())
    for key, result in stored["answers"].items():
        if json.loads(key)[0] == "tools/list":
            result["tools"] = result["tools"][:1]
    path.write_text(json.dumps(stored))
    handshake(env, errlog)  # answered from the stale file, then corrected by the SDK's answer
    assert "a stored MCP answer was out of date" in errlog.read_text()
    _, _, tools = handshake(env, errlog)
    assert set(tools) == TOOLS
    stored = json.loads(path.read_text())
    assert all(
        len(result["tools"]) == len(TOOLS)
        for key, result in stored["answers"].items()
        if json.loads(key)[0] == "tools/list"
    )


def test_answers_of_another_version_are_ignored(env: dict[str, str], tmp_path: Path) -> None:
    errlog = tmp_path / "stderr.txt"
    path = answers_file(env)
    path.parent.mkdir(parents=True, exist_ok=True)
    bogus = {"tools": [{"name": "bogus", "inputSchema": {"type": "object"}}]}
    path.write_text(json.dumps({"fingerprint": "0.0.0|old", "answers": {'["tools/list",null]': bogus}}))  # fmt: skip
    _, _, tools = handshake(env, errlog)
    assert set(tools) == TOOLS
    assert json.loads(path.read_text())["fingerprint"] != "0.0.0|old"


def test_an_unwritable_cache_only_costs_speed(env: dict[str, str], tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    errlog = tmp_path / "stderr.txt"
    _, _, tools = handshake(env | {"XDG_CACHE_HOME": str(blocker)}, errlog)
    assert set(tools) == TOOLS
    assert "cannot store MCP answers" in errlog.read_text()
    assert "Traceback" not in errlog.read_text()


def test_the_modern_protocol_is_answered_from_stored_answers_too(env: dict[str, str]) -> None:
    """The SDK's ``Client`` probes ``server/discover`` (2026-07-28) before any handshake."""
    listings: list[list[str]] = []

    async def main() -> None:
        async with Client(server_parameters(env)) as client:
            listed = await client.list_tools()
            listings.append([tool.name for tool in listed.tools])
            result = await client.call_tool("status", {})
            assert not result.is_error and "documents 30 active" in text_of(result)

    anyio.run(main)
    anyio.run(main)
    assert listings[0] == listings[1] and set(listings[0]) == TOOLS
    stored = json.loads(answers_file(env).read_text())
    assert "server/discover" in {json.loads(key)[0] for key in stored["answers"]}


def test_lone_surrogates_in_tool_arguments_are_answered(env: dict[str, str]) -> None:
    """A client may send ``\\ud800`` escapes (JSON allows them): every call is answered."""
    process = start_stdio(env)
    calls = [
        ("search", {"query": "thumbnail memory"}),
        ("search", {"query": "thumbnail \ud800 memory"}),
        ("query", {"query": "thumbnail \udfff memory", "limit": 2}),
        ("memory_retrieve", {"query": "thumbnail \ud800 memory"}),
        ("memory_remember", {"label": "lab\ud800el", "content": "body \udc00 text"}),
        ("memory_recall", {"query": "bo\ud800dy"}),
    ]
    lines = [
        {"id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
         "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
        {"method": "notifications/initialized"},
        *({"id": number, "method": "tools/call", "params": {"name": name, "arguments": args}}
          for number, (name, args) in enumerate(calls, 2)),
    ]  # fmt: skip
    answers: dict[Any, dict[str, Any]] = {}

    def read() -> None:
        assert process.stdout is not None
        for text in process.stdout:
            message = json.loads(text)
            answers[message.get("id")] = message

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert process.stdin is not None
    try:
        for line in lines:
            process.stdin.write(json.dumps({"jsonrpc": "2.0", **line}) + "\n")  # \ud800 escapes
            process.stdin.flush()
        deadline = time.monotonic() + 120
        while len(answers) < len(calls) + 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    for number, (name, _) in enumerate(calls, 2):
        assert number in answers, (name, stderr[-2000:])
        result = answers[number]["result"]
        assert not result.get("isError"), (name, result)
    assert "Traceback" not in stderr, stderr


# -- hanging up: pending calls are answered, then the server exits at once ---------------------

HANDSHAKE = [
    {"id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
     "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
    {"method": "notifications/initialized"},
    {"id": 2, "method": "tools/list"},
]  # fmt: skip


def hang_up_after(env: dict[str, str], lines: list[Any]) -> tuple[dict[Any, Any], float, str]:
    """Send ``lines`` and close stdin at once: (answers by id, seconds from the last answer
    (or from closing, with none) to the exit, stderr)."""
    process = start_stdio(env)
    assert process.stdin is not None and process.stdout is not None
    answers: dict[Any, Any] = {}
    try:
        for line in lines:
            text = line if isinstance(line, str) else json.dumps({"jsonrpc": "2.0", **line})
            process.stdin.write(text + "\n")
        process.stdin.close()
        last = time.monotonic()
        for text in process.stdout:
            message = json.loads(text)
            answers[message.get("id")] = message
            last = time.monotonic()
        process.wait(timeout=60)
        exited = time.monotonic()
        stderr = process.stderr.read() if process.stderr else ""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0 and "Traceback" not in stderr, stderr
    return answers, exited - last, stderr


@pytest.mark.parametrize("stored", [False, True], ids=["first-start", "stored-answers"])
def test_calls_sent_just_before_hanging_up_are_answered(
    env: dict[str, str], stored: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    if stored:
        hang_up_after(env, HANDSHAKE)  # the SDK's answers are stored for the next start
        assert answers_file(env).exists()
    calls = [
        {"id": 3, "method": "tools/call", "params": {"name": "status", "arguments": {}}},
        {"id": "four", "method": "tools/call",
         "params": {"name": "search", "arguments": {"query": "refresh token", "limit": 1}}},
    ]  # fmt: skip
    answers, exit_seconds, _ = hang_up_after(env, [*HANDSHAKE, *calls])
    assert set(answers) == {1, 2, 3, "four"}
    assert len(answers[2]["result"]["tools"]) == len(TOOLS)
    assert "documents 30 active" in answers[3]["result"]["content"][0]["text"]
    assert "#" in answers["four"]["result"]["content"][0]["text"]
    assert exit_seconds < 3, exit_seconds
    with capsys.disabled():
        print(f"\nmcp exit after the last answer ({'stored' if stored else 'first'}): "
              f"{exit_seconds * 1000:.0f} ms")  # fmt: skip


def test_hanging_up_at_once_exits_at_once(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    answers, exit_seconds, _ = hang_up_after(env, [])
    assert answers == {} and exit_seconds < 3, exit_seconds
    with capsys.disabled():
        print(f"\nmcp exit with no calls: {exit_seconds * 1000:.0f} ms after stdin closed")


def test_malformed_requests_are_answered_with_errors_and_do_not_hold_the_exit(
    env: dict[str, str],
) -> None:
    """Malformed and batched requests are answered with JSON-RPC errors by the front (the
    SDK would drop them without a word); a cancelled one may go unanswered; the exit does
    not wait for either."""
    odd = [
        {"id": 10, "method": "tools/call", "params": "not an object"},
        {"id": 11.5, "method": "tools/list"},
        {"id": True, "method": "tools/list"},
        '{"jsonrpc": "1.0", "id": 12, "method": "tools/list"}',
        '[{"jsonrpc": "2.0", "id": 13, "method": "ping"}]',
        "this is not json",
        {"id": 14, "method": "tools/call",
         "params": {"name": "query", "arguments": {"query": "thumbnail pipeline"}}},
        {"method": "notifications/cancelled", "params": {"requestId": 14}},
        {"id": 15, "method": "ping"},
    ]  # fmt: skip
    deep = '{"jsonrpc": "2.0", "id": 16, "method": "ping", "params": {"x": ' + "[" * 5000
    huge = (  # json.dumps cannot write it either
        '{"jsonrpc": "2.0", "id": 17, "method": "tools/call", "params": {"name": "search", '
        '"arguments": {"query": "x", "limit": 1' + "0" * 5000 + "}}}"
    )
    # the reading thread died on the nested line, and nothing after it was answered
    answers, exit_seconds, _ = hang_up_after(
        env, [*HANDSHAKE, *odd, deep + "]" * 5000 + "}}", huge]
    )
    assert {1, 2, 10, 12, None, 15, 17} <= set(answers) <= {1, 2, 10, 12, None, 14, 15, 17}
    assert answers[10]["error"]["code"] == -32602  # params not an object
    assert answers[12]["error"]["code"] == -32600  # not JSON-RPC 2.0
    assert answers[None]["error"]["code"] in (-32700, -32600)  # not JSON, a batch, a bad id
    assert answers[17]["error"] == {
        "code": -32602, "message": "Invalid params: a number has more than 4300 digits"
    }  # fmt: skip
    assert exit_seconds < 3, exit_seconds


def test_a_message_past_the_size_limit_is_refused_and_the_next_one_answered(
    env: dict[str, str],
) -> None:
    """A line of more than 16 MB (a 17 MB query) is answered -32600 and read past without
    being kept; a 50 MB query used to come back twice in a 100 MB answer."""
    from memtrove.mcp.front import MAX_MESSAGE_BYTES

    query = "x" * (MAX_MESSAGE_BYTES + 1024 * 1024)
    big = {"id": 20, "method": "tools/call",
           "params": {"name": "search", "arguments": {"query": query}}}  # fmt: skip
    answers, _, _ = hang_up_after(env, [*HANDSHAKE, big, {"id": 21, "method": "ping"}])
    assert set(answers) == {1, 2, None, 21}
    assert answers[None]["error"]["code"] == -32600
    assert "more than 16,777,216 bytes" in answers[None]["error"]["message"]
    assert answers[21]["result"] == {}


@pytest.mark.parametrize("typer_path", [False, True], ids=["mcp", "vault-option"])
def test_sigterm_answers_the_calls_in_flight_then_exits_cleanly(
    env: dict[str, str], typer_path: bool
) -> None:
    """SIGTERM ends the server as a hang-up would: calls already sent are answered, the exit
    is 0 and nothing is printed but protocol; a second SIGTERM is not needed."""
    args = ["--vault", env["MEMTROVE_VAULT"], "mcp"] if typer_path else ["mcp"]
    process = subprocess.Popen(
        [sys.executable, "-m", "memtrove", *args],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    calls = [
        *HANDSHAKE,
        {"id": 3, "method": "tools/call", "params": {"name": "status", "arguments": {}}},
        {"id": 4, "method": "tools/call",
         "params": {"name": "search", "arguments": {"query": "refresh token", "limit": 1}}},
    ]  # fmt: skip
    try:
        for call in calls:
            process.stdin.write(json.dumps({"jsonrpc": "2.0", **call}) + "\n")
        process.stdin.flush()  # the client stays connected: stdin is never closed
        first = _raw_line(process.stdout.fileno())  # the front is up (the SDK may still be
        process.send_signal(signal.SIGTERM)  # importing); no read-ahead for communicate to miss
        stdout, stderr = process.communicate(timeout=60)
        stdout = first + stdout
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    answers = {message["id"]: message for message in map(json.loads, stdout.splitlines())}
    assert set(answers) == {1, 2, 3, 4}, (stdout, stderr)
    assert "documents 30 active" in answers[3]["result"]["content"][0]["text"]
    assert process.returncode == 0 and "Traceback" not in stderr, stderr


def _raw_line(descriptor: int) -> str:
    """One line read straight from the pipe, a byte at a time (a buffered readline reads
    ahead, and communicate() never sees what it took)."""
    data = b""
    while not data.endswith(b"\n"):
        byte = os.read(descriptor, 1)
        if not byte:
            break
        data += byte
    return data.decode("utf-8")
