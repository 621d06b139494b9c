"""One ``memtrove mcp`` over stdio, driven by the official MCP client: the tools it lists
and the answers to a list of calls, with the server's stderr kept in a file."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from memtrove.results.marking import FRAME_CLOSE, FRAME_OPEN

__all__ = ["call_tools", "unframed"]


def call_tools(
    env: dict[str, str], calls: dict[str, tuple[str, dict[str, Any]]], stderr: Path
) -> tuple[set[str], dict[str, Any]]:
    """(the listed tool names, ``{name: answer}`` for each ``name: (tool, arguments)``)."""
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "memtrove", "mcp"], env=env
    )
    listed: set[str] = set()
    answers: dict[str, Any] = {}

    async def main() -> None:
        with stderr.open("w") as errlog:
            async with (
                stdio_client(parameters, errlog=errlog) as (read, write_stream),
                ClientSession(read, write_stream) as session,
            ):
                await session.initialize()
                listed.update(tool.name for tool in (await session.list_tools()).tools)
                for name, (tool, arguments) in calls.items():
                    answers[name] = await session.call_tool(tool, arguments)

    anyio.run(main)
    return listed, answers


def unframed(text: str) -> str:
    """A tool answer's text without its data frame (which it must have)."""
    head, opening, rest = text.partition(FRAME_OPEN + "\n")
    assert opening and rest.endswith("\n" + FRAME_CLOSE), text[:200]
    return head + rest.removesuffix("\n" + FRAME_CLOSE)
