"""The import direction of DESIGN.md, checked by walking every module's imports."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "memtrove"

INTERFACES = {"cli", "mcp", "api", "console", "hooks", "eval", "__main__"}
FACADE = {"vault", "__init__"}
DOMAIN = {"index", "retrieval", "graph", "memory", "lifecycle", "mine", "capture"}
STORAGE = {"db", "models"}
FOUNDATION = {
    "errors", "results", "text", "patterns", "config", "paths", "warm", "files", "security"
}  # fmt: skip
LAYER = {
    **dict.fromkeys(INTERFACES, 4),
    **dict.fromkeys(FACADE, 3),
    **dict.fromkeys(DOMAIN, 2),
    **dict.fromkeys(STORAGE, 1),
    **dict.fromkeys(FOUNDATION, 0),
}
INTERFACE_LIBRARIES = {"typer", "rich", "click", "mcp", "fastapi", "uvicorn", "starlette"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _part(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0].removesuffix(".py")


def test_every_module_has_a_layer() -> None:
    for path in PACKAGE.rglob("*.py"):
        assert _part(path) in LAYER, f"{path} is not placed in DESIGN.md's layers"


def test_imports_point_downwards() -> None:
    problems: list[str] = []
    for path in PACKAGE.rglob("*.py"):
        source = _part(path)
        for name in _imports(path):
            top = name.split(".")[0]
            if top == "memtrove" and "." in name:
                target = name.split(".")[1]
                if target == source:
                    continue
                if LAYER[target] > LAYER[source] or (LAYER[target] == LAYER[source] == 1):
                    problems.append(f"{path.relative_to(PACKAGE)} imports {name}")
                if target in ("config", "paths") and LAYER[source] < 3 and source != "config":
                    problems.append(f"{path.relative_to(PACKAGE)} reads settings ({name})")
            if top in INTERFACE_LIBRARIES and LAYER[source] < 4:
                problems.append(f"{path.relative_to(PACKAGE)} imports {top}")
    assert problems == []


def test_modules_stay_small() -> None:
    for path in PACKAGE.rglob("*.py"):
        lines = path.read_text(encoding="utf-8").count("\n")
        assert lines <= 600, f"{path.relative_to(PACKAGE)} has {lines} lines"


def test_the_vault_is_assembled_from_areas_not_mixins() -> None:
    """Each area is an object the Vault builds (``vault.retrieval``, ``vault.graph``...):
    ``Vault`` inherits from nothing."""
    from memtrove.vault import Vault

    assert Vault.__bases__ == (object,)


def test_interfaces_run_no_sql_and_nothing_reaches_into_the_vault() -> None:
    """CLI, MCP, REST, the console, hooks and eval call the Vault and its areas: none holds a
    connection or runs a statement, and no module outside the vault package touches the
    Vault's connection, lock or retriever."""
    statement = re.compile(r"\.(execute|executemany|executescript)\(|\._connection\b|\.database\b")
    private = re.compile(r"\bvault\.(_connection|_lock|_retriever|database)\b")
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if _part(path) in INTERFACES:
            found = [m.group(0) for m in statement.finditer(text)]
            assert not found, f"{path.relative_to(PACKAGE)} runs SQL or holds a connection: {found}"
        if _part(path) != "vault":
            found = [m.group(0) for m in private.finditer(text)]
            assert not found, f"{path.relative_to(PACKAGE)} reaches into the Vault: {found}"
