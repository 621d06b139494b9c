"""`memtrove diary write|read` and the `diary_write`/`diary_read` MCP tools."""

from __future__ import annotations

import json
from typing import Any

import anyio
from mcp import Client
from typer.testing import CliRunner, Result

from memtrove import Vault
from memtrove.capture.diary import MAX_ENTRY_CHARS
from memtrove.cli import app
from memtrove.mcp.server import build_server
from tests.conftest import where


def memtrove(vault: Vault, *args: str, stdin: str | None = None) -> Result:
    env = {"MEMTROVE_CONFIG_DIR": str(vault.config_file.parent)}
    return CliRunner().invoke(app, ["--vault", str(where(vault)), *args], input=stdin, env=env)


def ok(result: Result) -> str:
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result.stdout


def one_error(result: Result, code: int = 1) -> str:
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_write_saves_an_agent_memory_that_search_and_read_find(vault: Vault) -> None:
    saved = json.loads(
        ok(memtrove(vault, "diary", "write", "Moved", "the", "cache", "to", "Redis",
                    "-t", "infra", "--json"))
    )  # fmt: skip
    assert saved["agent"] == "user" and saved["topic"] == "infra"
    assert saved["text"] == "Moved the cache to Redis"
    assert saved["path"].startswith("_memtrove/diary/") and saved["path"].endswith("-infra.md")
    stamp = saved["path"].removeprefix("_memtrove/diary/")
    assert stamp[:10] == saved["written_at"][:10] and stamp[10] == "-" and stamp[17:20].isdigit()

    document = vault.get(saved["path"])
    assert document.confidence == 0.7 and document.collection == "_memtrove"
    hits = vault.search("Redis cache", collections=["_memtrove"])
    assert [hit.docid for hit in hits] == [saved["docid"]]

    ok(memtrove(vault, "diary", "write", "Reviewed the PR", "-a", "claude"))
    ok(memtrove(vault, "diary", "write", "-", "--agent", "claude", stdin="From a pipe\nline 2\n"))
    entries = json.loads(ok(memtrove(vault, "diary", "read", "--json")))
    assert [e["text"] for e in entries] == [
        "From a pipe\nline 2",
        "Reviewed the PR",
        "Moved the cache to Redis",
    ]
    assert [e["topic"] for e in entries] == ["general", "general", "infra"]
    assert [e["text"] for e in json.loads(ok(memtrove(vault, "diary", "read", "-n", "1",
                                                      "--json")))] == ["From a pipe\nline 2"]  # fmt: skip
    mine = json.loads(ok(memtrove(vault, "diary", "read", "-a", "CLAUDE", "--json")))
    assert [e["agent"] for e in mine] == ["claude", "claude"]

    shown = ok(memtrove(vault, "diary", "read", "-a", "user"))
    assert "user · infra" in shown and "  Moved the cache to Redis" in shown
    assert "no diary entries by nobody" in ok(memtrove(vault, "diary", "read", "-a", "nobody"))


def test_hostile_names_and_text_stay_inside_the_diary_folder(vault: Vault) -> None:
    saved = json.loads(
        ok(memtrove(vault, "diary", "write", "note\x1b[31m red\x07", "-t", "../../etc/passwd",
                    "-a", "evil\nagent", "--json"))
    )  # fmt: skip
    assert saved["path"].startswith("_memtrove/diary/") and saved["path"].endswith("-etc-passwd.md")
    assert "/.." not in saved["path"] and saved["text"] == "note[31m red"
    assert saved["topic"] == "../../etc/passwd" and saved["agent"] == "evil agent"

    other = json.loads(ok(memtrove(vault, "diary", "write", "x", "-t", "日記", "--json")))
    name = other["path"].rsplit("/", 1)[1]
    assert name.endswith(".md") and name.split("-")[-2] == "t" and name.isascii()

    shown = ok(memtrove(vault, "diary", "read"))
    assert "\x1b" not in shown and "\x07" not in shown


def test_bad_entries_are_refused_in_one_line(vault: Vault) -> None:
    assert one_error(memtrove(vault, "diary", "write", "  \n ")) == (
        "memtrove: error: a diary entry must not be empty"
    )
    huge = memtrove(vault, "diary", "write", "-", stdin="x" * (MAX_ENTRY_CHARS + 1))
    assert "holds at most 50,000 characters" in one_error(huge)
    assert one_error(memtrove(vault, "diary", "write", "hi", "-a", " \t")) == (
        "memtrove: error: agent must not be empty"
    )
    assert json.loads(ok(memtrove(vault, "diary", "read", "--json"))) == []


def test_the_mcp_tools_write_and_read_the_same_diary(vault: Vault) -> None:
    ok(memtrove(vault, "diary", "write", "Written at the command line"))
    answers: dict[str, Any] = {}

    async def main() -> None:
        async with Client(build_server(lambda: vault)) as client:
            answers["write"] = await client.call_tool(
                "diary_write", {"entry": "Found the flaky test's cause", "topic": "tests"}
            )
            answers["read"] = await client.call_tool("diary_read", {"last_n": 5})
            answers["agent"] = await client.call_tool("diary_read", {"agent": "agent"})
            answers["empty"] = await client.call_tool("diary_write", {"entry": ""})
            answers["bad"] = await client.call_tool("diary_read", {"last_n": 0})

    anyio.run(main)
    written = answers["write"].structured_content
    assert not answers["write"].is_error
    assert written["agent"] == "agent" and written["topic"] == "tests"
    assert vault.get(written["path"]).confidence == 0.7
    read = answers["read"].structured_content
    assert read["count"] == 2
    assert [e["text"] for e in read["entries"]] == [
        "Found the flaky test's cause",
        "Written at the command line",
    ]
    assert "Found the flaky test's cause" in answers["read"].content[0].text
    assert [e["agent"] for e in answers["agent"].structured_content["entries"]] == ["agent"]
    assert answers["empty"].is_error
    assert "a diary entry must not be empty" in answers["empty"].content[0].text
    assert answers["bad"].is_error and "last_n" in answers["bad"].content[0].text
