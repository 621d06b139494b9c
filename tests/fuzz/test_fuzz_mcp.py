"""Any arguments to any MCP tool, through the SDK's own client: every call is answered (a
result or a tool error), the server never breaks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client, MCPError

from memtrove import Vault
from memtrove.mcp.server import build_server
from memtrove.text import scrub_json
from tests.conftest import EXAMPLES
from tests.fuzz.conftest import json_values

TOOLS = ["memory_retrieve", "query", "search", "get", "multi_get", "find_similar", "timeline",
         "memory_pin", "memory_snooze", "memory_remember", "memory_recall", "rule_add",
         "rule_list", "session_log", "find_duplicates"]  # fmt: skip
ARGUMENT_NAMES = ["query", "limit", "ref", "refs", "label", "content", "kind", "statement",
                  "until", "store", "collection", "min_score", "compact", "before", "after"]  # fmt: skip


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vault]:
    folder = tmp_path_factory.mktemp("fuzz-mcp")
    opened = Vault.open(folder / "vault.sqlite", config_dir=folder / "config")
    opened.add_collection(EXAMPLES, name="demo")
    opened.update()
    yield opened
    opened.close()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    tool=st.sampled_from(TOOLS),
    arguments=st.dictionaries(st.sampled_from(ARGUMENT_NAMES), json_values, max_size=4),
)
def test_any_arguments_to_any_tool_are_answered(
    vault: Vault, tool: str, arguments: dict[str, Any]
) -> None:
    async def call() -> None:
        with anyio.fail_after(30):
            await answer()

    async def answer() -> None:
        async with Client(build_server(lambda: vault)) as client:
            try:
                # Lone surrogates cannot leave the SDK's client; the stdio front replaces
                # them (tests/e2e/test_mcp_stdio.py sends them raw).
                result = await client.call_tool(tool, scrub_json(arguments))
            except MCPError as error:  # invalid arguments: a protocol error, with a message
                assert str(error)
                return
            assert result.content

    anyio.run(call)
