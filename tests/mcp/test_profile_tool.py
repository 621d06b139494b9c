"""The ``profile`` MCP tool through the SDK's own client, on a vault of the examples."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from memtrove import Vault
from memtrove.mcp.server import build_server
from tests.conftest import EXAMPLES


def opener(tmp_path: Path) -> Callable[[], Vault]:
    vault = Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config")
    vault.add_collection(EXAMPLES, name="demo")
    vault.update()
    return lambda: vault


def calls(tmp_path: Path, *arguments: dict[str, Any]) -> list[Any]:
    results: list[Any] = []

    async def main() -> None:
        async with Client(build_server(opener(tmp_path))) as client:
            listed = await client.list_tools()
            tool = next(t for t in listed.tools if t.name == "profile")
            assert set(tool.input_schema["properties"]) == {"rebuild"}  # no vault argument
            for given in arguments:
                results.append(await client.call_tool("profile", given))

    anyio.run(main)
    return results


def test_profile_tool_rebuilds_then_returns_the_profile(tmp_path: Path) -> None:
    missing, rebuilt, shown, wrong = calls(
        tmp_path, {}, {"rebuild": True}, {"rebuild": False}, {"rebuild": "yes"}
    )
    assert missing.is_error
    assert missing.content[0].text == "no profile yet: `memtrove profile rebuild` builds it"
    assert not rebuilt.is_error and "# User Profile" in rebuilt.content[0].text
    data = shown.structured_content
    assert data["path"] == "_memtrove/profile.md" and "## Known Context" in data["body"]
    assert data["static"] and data["body"] == rebuilt.structured_content["body"]
    assert wrong.is_error and "invalid arguments for profile: rebuild" in wrong.content[0].text
