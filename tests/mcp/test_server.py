"""The MCP server in process, through the SDK's own client (no subprocess, no stdio)."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError

from memtrove import Vault
from memtrove.mcp import tools
from memtrove.mcp.server import build_server
from memtrove.results.marking import FRAME_CLOSE, FRAME_OPEN
from tests.conftest import EXAMPLES

TOOLS = {
    "__IMPORTANT", "memory_retrieve", "query", "search", "vsearch", "get", "multi_get",
    "find_similar", "timeline", "status", "index_stats", "reindex", "memory_pin",
    "memory_snooze", "memory_forget", "session_log", "lifecycle_status",
    "memory_remember", "memory_recall", "memory_forget_entry", "find_duplicates",
    "dedup_mark_checked", "hygiene_report", "get_extraction_payload", "extraction_done",
    "memory_archive",
    "rule_add", "rule_link", "rule_signal", "rule_codify", "rule_list",
    "intent_search", "find_causal_links", "query_plan", "kg_query", "build_graphs",
    "memory_evolution_status", "lifecycle_sweep", "lifecycle_restore", "mine", "import_status",
    "diary_write", "diary_read", "profile", "beads_sync", "list_vaults", "vault_sync",
}  # fmt: skip


@pytest.fixture
def opener(tmp_path: Path) -> Callable[[], Vault]:
    """Opens the examples vault, counting how often it is asked to."""
    vault = Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config")
    vault.add_collection(EXAMPLES, name="demo")
    vault.update()
    calls: list[int] = []

    def open_vault() -> Vault:
        calls.append(1)
        return vault

    open_vault.calls = calls  # type: ignore[attr-defined]
    return open_vault


def drive(opener: Callable[[], Vault], body: Callable[[Client], Awaitable[None]]) -> None:
    async def main() -> None:
        async with Client(build_server(opener)) as client:
            await body(client)

    anyio.run(main)


def text_of(result: Any) -> str:
    """The answer's text inside its data frame (every answer of vault data has one)."""
    text = str(result.content[0].text)
    if result.is_error or not (result.structured_content or {}).get("untrusted"):
        return text  # an error, __IMPORTANT: nothing of the vault's in it
    head, opening, rest = text.partition(FRAME_OPEN + "\n")
    assert opening and rest.endswith("\n" + FRAME_CLOSE), text[:200]
    return head + rest.removesuffix("\n" + FRAME_CLOSE)


def test_tools_listed_and_vault_opened_lazily_once(opener: Callable[[], Vault]) -> None:
    calls = opener.calls  # type: ignore[attr-defined]

    async def body(client: Client) -> None:
        listed = await client.list_tools()
        assert {tool.name for tool in listed.tools} == TOOLS
        assert calls == []  # listing tools opens nothing
        schema = next(t for t in listed.tools if t.name == "query").input_schema
        assert {"minScore", "candidateLimit", "includeInternal", "vault"} <= set(
            schema["properties"]
        )
        assert schema["required"] == ["query"]
        get_schema = next(t for t in listed.tools if t.name == "get").input_schema
        assert {"file", "fromLine", "maxLines", "lineNumbers"} <= set(get_schema["properties"])
        for _ in range(2):
            result = await client.call_tool("status", {})
            assert not result.is_error and result.structured_content["documents"] == 30
        assert calls == [1]

    drive(opener, body)


def test_structured_results_and_compact_text(opener: Callable[[], Vault]) -> None:
    async def body(client: Client) -> None:
        result = await client.call_tool("search", {"query": "refresh token", "limit": 2})
        assert not result.is_error
        data = result.structured_content
        assert data is not None and len(data["results"]) == 2 and data["stages"] == ["bm25"]
        assert text_of(result).startswith('Found 2 results for "refresh token":\n#')

    drive(opener, body)


def test_errors_are_tool_errors_in_one_line(
    opener: Callable[[], Vault], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(vault: Vault) -> tools.ToolResult:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(tools, "status", broken)

    async def body(client: Client) -> None:
        cases: list[tuple[str, dict[str, Any], str]] = [
            ("search", {}, "invalid arguments for search: query: Field required"),
            ("search", {"query": "x", "limit": "many"}, "invalid arguments for search: limit:"),
            ("search", {"query": "x", "limit": 0}, "limit must be a positive integer, got 0"),
            ("get", {"file": "demo/nope.md"}, "no document 'demo/nope.md' in the vault"),
            ("get", {"file": "demo/../../etc/passwd"}, "is not a document in the vault"),
            ("memory_retrieve", {"query": "x", "mode": "psychic"}, "unknown mode 'psychic'"),
            ("timeline", {"docid": "#e1745d", "before": 99}, "before must be between 1 and 20"),
            ("status", {}, "unexpected RuntimeError: boom second line"),
            # a flag is true or false: 0 made mine's dry_run false, and it wrote
            ("mine", {"path": ".", "dry_run": 0}, "invalid arguments for mine: dry_run"),
            ("memory_forget", {"query": "#e1745d", "confirm": "yes"}, "memory_forget: confirm"),
            ("no_such_tool", {}, "Unknown tool: no_such_tool"),
        ]
        for name, arguments, message in cases:
            result = await client.call_tool(name, arguments)
            assert result.is_error, name
            assert message in text_of(result) and "\n" not in text_of(result), text_of(result)
        # a quoted argument of any size leaves a short error (it echoed a megabyte)
        huge = await client.call_tool("get", {"file": "demo/" + "z" * 1_000_000})
        assert huge.is_error and len(text_of(huge)) == 600 and "…" in text_of(huge)

    drive(opener, body)


def test_named_vault_is_accepted_with_a_note(opener: Callable[[], Vault]) -> None:
    async def body(client: Client) -> None:
        result = await client.call_tool("status", {"vault": "work"})
        assert not result.is_error
        assert text_of(result).startswith("note: named vaults are not supported yet")
        assert result.structured_content["notes"]

    drive(opener, body)


def test_document_resource(opener: Callable[[], Vault]) -> None:
    async def body(client: Client) -> None:
        templates = await client.list_resource_templates()
        assert [t.uri_template for t in templates.resource_templates] == ["memtrove://{+path}"]
        read = await client.read_resource(
            "memtrove://demo/decisions/0004-jwt-access-and-rotating-refresh-tokens.md"
        )
        assert read.contents[0].text.startswith("1: ---\n")
        for uri in (
            "memtrove://demo/../../etc/passwd",
            "memtrove://demo/%2E%2E/%2E%2E/etc/passwd",
            "memtrove://demo/nope.md",
        ):
            with pytest.raises(MCPError):
                await client.read_resource(uri)

    drive(opener, body)


def test_only_the_server_module_imports_the_sdk() -> None:
    package = Path(__file__).resolve().parents[2] / "src" / "memtrove"
    importers = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            if any(name == "mcp" or name.startswith("mcp.") for name in names):
                importers.add(path.relative_to(package).as_posix())
    # the server and its registration parts (mcp/*_server.py), nothing else
    assert "mcp/server.py" in importers
    assert all(p.startswith("mcp/") and p.endswith("server.py") for p in importers), importers


def test_the_cli_does_not_import_the_sdk_until_mcp_runs() -> None:
    probe = (
        "import sys, memtrove.cli.application; print(sorted(m for m in sys.modules if m == 'mcp'))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == "[]", result.stderr


def test_arguments_in_either_spelling_and_unknown_ones_refused(
    opener: Callable[[], Vault],
) -> None:
    async def body(client: Client) -> None:
        camel = await client.call_tool(
            "search", {"query": "refresh token", "minScore": 0.1, "includeInternal": False}
        )
        snake = await client.call_tool(
            "search", {"query": "refresh token", "min_score": 0.1, "include_internal": False}
        )
        assert not camel.is_error and not snake.is_error
        assert camel.structured_content["results"] == snake.structured_content["results"]
        forced = await client.call_tool("intent_search", {"query": "why", "forceIntent": "WHY"})
        assert not forced.is_error, text_of(forced)
        typo = await client.call_tool("search", {"query": "refresh", "limt": 3})
        assert typo.is_error
        message = typo.content[0].text
        assert "search has no argument 'limt'" in message and "limit" in message
        assert "\n" not in message
        twice = await client.call_tool("search", {"query": "x", "minScore": 0.1, "min_score": 0})
        assert twice.is_error and "given twice" in twice.content[0].text

    drive(opener, body)
