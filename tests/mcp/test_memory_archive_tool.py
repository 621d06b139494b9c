"""``memory_archive`` through the SDK's own client, in process, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import anyio
from mcp import Client

from memtrove import Vault
from memtrove.mcp.server import build_server


def test_archive_and_restore_over_mcp(vault: Vault) -> None:
    vault.memory.project_store = "demo"
    text = "We deploy the web app to Fly.io in the ams region with blue-green releases."
    found: dict[str, Any] = {}

    async def main() -> None:
        async with Client(build_server(lambda: vault)) as client:
            for label in ("Deploy A", "Deploy B"):
                await client.call_tool("memory_remember", {"label": label, "content": text})
            archived = await client.call_tool("memory_archive", {"label": "deploy a"})
            found["archived"] = archived
            found["duplicates"] = await client.call_tool("find_duplicates", {})
            found["recall"] = await client.call_tool("memory_recall", {"query": "fly.io ams"})
            found["restored"] = await client.call_tool(
                "memory_archive", {"label": "Deploy A", "restore": True}
            )
            found["missing"] = await client.call_tool("memory_archive", {"label": "nope"})
            found["bad"] = await client.call_tool(
                "memory_archive", {"label": "Deploy A", "restore": "yes"}
            )

    anyio.run(main)
    archived = found["archived"]
    assert not archived.is_error and "[archived] demo :: Deploy A" in archived.content[0].text
    assert archived.structured_content["archived"]["archived"] is True
    assert found["duplicates"].structured_content["pairs"] == 0
    labels = [e["label"] for e in found["recall"].structured_content["entries"]]
    assert labels == ["Deploy B"]
    restored = found["restored"].structured_content["restored"]
    assert restored["label"] == "Deploy A" and restored["archived"] is False
    assert [e.label for e in vault.memory.entries()] and not vault.memory.entry("Deploy A").archived
    missing = found["missing"]
    assert missing.is_error and "no entry 'nope'" in missing.content[0].text
    assert "\n" not in missing.content[0].text.strip()
    assert found["bad"].is_error
