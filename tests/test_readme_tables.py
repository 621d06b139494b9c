"""The README's reference tables against what memtrove really has: every command of the CLI,
every MCP tool the server lists, every REST route of the OpenAPI schema, every hook and
every ``MEMTROVE_*`` variable the code reads has its row (or, for hooks and variables, its
backticked name); and no row names a command, tool or route that does not exist."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import pytest
import typer
from mcp import Client

from memtrove import Vault
from memtrove.api import create_app
from memtrove.cli.application import app as cli_app
from memtrove.hooks.catalog import HOOKS
from memtrove.mcp.server import build_server

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
ROW = re.compile(r"^\|(.+)\|\s*$", re.MULTILINE)
SPAN = re.compile(r"`([^`\n]+)`")


def section(heading: str) -> str:
    """The README's text from ``heading`` (a whole line) to the next heading of its level."""
    level = heading.split(" ", 1)[0]
    start = README.index(f"\n{heading}\n")
    end = README.find(f"\n{level} ", start + len(heading) + 2)
    return README[start : end if end > 0 else len(README)]


def first_cells(text: str) -> list[str]:
    rows = [row.split("|") for row in ROW.findall(text.replace("\\|", "\x00"))]
    return [cells[0].replace("\x00", "|").strip() for cells in rows if cells]


def cli_paths(*, hidden: bool = False) -> list[str]:
    """Every command of the CLI as typed (``collection add``, ``eval run``...), hidden ones
    only when asked."""
    root = typer.main.get_command(cli_app)
    found: list[str] = []

    def walk(command: Any, prefix: list[str]) -> None:
        if hasattr(command, "commands"):  # a group (Typer's own, not click's class)
            for name, sub in command.commands.items():
                if hidden or not sub.hidden:
                    walk(sub, [*prefix, name])
        elif prefix:
            found.append(" ".join(prefix))

    walk(root, [])
    return found


def names_a(path: str, cell: str) -> bool:
    """Whether a Commands cell names ``path``: a backticked span whose words start with the
    path's, a word listing alternatives (``add|link|confirm``) counting for each."""
    words = path.split()
    for span in SPAN.findall(cell):
        typed = span.split()
        if len(typed) >= len(words) and all(
            word in typed[i].split("|") for i, word in enumerate(words)
        ):
            return True
    return False


def test_every_command_has_a_row_in_the_commands_table() -> None:
    cells = first_cells(section("### Commands"))
    assert len(cells) > 50
    missing = [path for path in cli_paths() if not any(names_a(path, cell) for cell in cells)]
    assert missing == []


def test_every_row_of_the_commands_table_is_a_command() -> None:
    # buffer-batch and buffer-tool are answered before the CLI loads (memtrove.__main__)
    groups = {path.split()[0] for path in cli_paths(hidden=True)} | {"buffer-batch", "buffer-tool"}
    cells = [c for c in first_cells(section("### Commands")) if c not in ("Command", "---")]
    unknown = []
    for cell in cells:
        for span in SPAN.findall(cell):
            word = span.split()[0]
            if word.startswith("-") or word.isupper():
                continue  # an option or a placeholder in the cell's text
            if word not in groups:
                unknown.append(span)
    assert unknown == []


def tool_names(tmp_path: Path) -> set[str]:
    vault = Vault.open(tmp_path / "tools.sqlite", config_dir=tmp_path / "config")

    async def listed() -> set[str]:
        async with Client(build_server(lambda: vault)) as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    try:
        return anyio.run(listed)
    finally:
        vault.close()


def table_names(marker: str) -> set[str]:
    """The backticked first cells of every table row in the README (the names rows give)."""
    return {
        span
        for cell in first_cells(README)
        for span in SPAN.findall(cell)
        if re.fullmatch(marker, span)
    }


def test_every_mcp_tool_has_a_row(tmp_path: Path) -> None:
    tools = tool_names(tmp_path)
    assert len(tools) > 30
    rows = table_names(r"[A-Za-z_]+")
    assert sorted(tools - rows) == []


def routes(tmp_path: Path) -> set[tuple[str, str]]:
    vault = Vault.open(tmp_path / "routes.sqlite", config_dir=tmp_path / "config")
    try:
        schema = create_app(vault).openapi()
    finally:
        vault.close()
    return {
        (method.upper(), path)
        for path, operations in schema["paths"].items()
        for method in operations
        if method.upper() in ("GET", "POST", "PUT", "PATCH", "DELETE")
    }


def route_rows() -> set[tuple[str, str]]:
    found = set()
    for row in ROW.findall(README.replace("\\|", "\x00")):
        cells = [cell.strip() for cell in row.split("|")]
        if len(cells) >= 2 and cells[0] in ("GET", "POST", "PUT", "PATCH", "DELETE"):
            found.update((cells[0], span) for span in SPAN.findall(cells[1]))
    return found


def test_every_rest_route_has_a_row_and_every_row_is_a_route(tmp_path: Path) -> None:
    served = {(method, path) for method, path in routes(tmp_path) if not path.startswith("/ui")}
    assert len(served) > 30
    rows = route_rows()
    assert sorted(served - rows) == []
    console = {(m, p) for m, p in rows if p == "/" or p.startswith("/ui")}
    assert sorted(rows - served - console) == []


def test_every_hook_is_documented() -> None:
    named = set(SPAN.findall(README))
    assert sorted(set(HOOKS) - named) == []


VARIABLE = re.compile(r"\bMEMTROVE_[A-Z0-9_]+[A-Z0-9]\b")


def test_every_variable_the_code_reads_is_documented() -> None:
    read: set[str] = set()
    for source in (ROOT / "src" / "memtrove").rglob("*.py"):
        read.update(VARIABLE.findall(source.read_text(encoding="utf-8")))
    assert len(read) > 40
    documented = set(VARIABLE.findall(README))
    assert sorted(read - documented) == []


@pytest.mark.parametrize("path", ["collection add", "eval run", "setup skills", "diary write"])
def test_the_walk_finds_nested_commands(path: str) -> None:
    assert path in cli_paths()
