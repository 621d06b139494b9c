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
    "errors", "results", "text", "patterns", "config", "paths", "locations", "warm", "files",
    "security"
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


# SQL only SQLite accepts, allowed only in the SQLite engine (db/sqlite/), the applied
# migrations (db/schema/) and the ClawMem importer (its input is a SQLite file).
SQLITE_ONLY = re.compile(
    r"(?i:\bfts5(vocab)?\b|\bvec0\b|sqlite_master|\bpragma\b|\browid\b|json_each|"
    r"\binsert\s+or\s+(ignore|replace|abort|fail|rollback)\b|\bbm25\s*\(|\bsnippet\s*\(|"
    r"\b\w+_fts\b|\bdocuments_vocab\b|\bvectors_vec\w*|"
    r"\b(instr|ifnull|group_concat|julianday|printf|randomblob|typeof|unixepoch)\s*\(|"
    r"\bsubstr\s*\([^()]*,\s*-|\b(date|datetime|strftime)\s*\(\s*')"
    r"|\bMATCH\b|\bGLOB\b|\b(MAX|MIN)\([^()]*,[^()]*\)|\bIS\s+\?|(?<=[\s(,=<>])\?\d"
)
SQLITE_PLACES = ("db/sqlite/", "db/schema/", "mine/clawmem_import.py", "mine/clawmem_tables.py")
# Names that are not SQL: the export format's record type and field for the entity names of
# the text index (version 1 of the format), and the secrets report's name for them.
NAMES_NOT_SQL = {
    ("mine/portable.py", "entities_fts"),
    ("mine/portable.py", "rowid"),
    ("index/secrets.py", "entities_fts"),
}


def _code_strings(tree: ast.AST) -> list[tuple[int, str]]:
    """Every string literal (f-strings' literal parts included), docstrings left out."""
    docstrings: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def test_sql_outside_the_sqlite_engine_is_portable() -> None:
    """Statements every engine accepts, everywhere but the SQLite engine's own modules: no
    FTS5, sqlite-vec, catalogue tables, PRAGMAs, rowids, ``INSERT OR``, ``json_each``,
    two-argument ``MAX``/``MIN``, ``IS ?`` or numbered placeholders, and no code reads a
    cursor's ``lastrowid`` or a connection's ``total_changes``. Nor ``RETURNING``: on SQLite
    it opens a statement savepoint at which FTS5 writes out its pending rows (a full index
    three times slower); ``connection.insert`` gives a new row's id on every engine."""
    problems: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith(SQLITE_PLACES):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, text in _code_strings(tree):
            found = SQLITE_ONLY.search(text)
            if found and (relative, text) not in NAMES_NOT_SQL:
                problems.append(f"{relative}:{line}: {found.group(0)!r}")
        for line, text in _code_strings(tree) if not relative.startswith("db/postgres/") else ():
            if re.search(r"\bRETURNING\b", text):  # connection.insert gives a new row's id
                problems.append(f"{relative}:{line}: RETURNING")
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("lastrowid", "total_changes"):
                problems.append(f"{relative}:{node.lineno}: .{node.attr}")
    assert problems == []


def _module_graph() -> dict[str, set[str]]:
    """Module -> the memtrove modules it imports (at the top, in functions or for types).
    ``from package import name`` counts as importing ``package.name`` when that is a module.
    The package root (the public names, loaded lazily) is left out."""
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ("memtrove", *path.relative_to(PACKAGE).with_suffix("").parts)
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for module, path in names.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    child = f"{node.module}.{alias.name}"
                    targets.add(child if child in names else node.module)
        graph[module] = {t for t in targets if t in names and t not in (module, "memtrove")}
    graph.pop("memtrove", None)
    return graph


def test_no_import_circle() -> None:
    graph = _module_graph()
    circles: list[list[str]] = []
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    for root in sorted(graph):  # Tarjan's strongly connected components, iteratively
        if root in order:
            continue
        work = [(root, iter(sorted(graph[root])))]
        order[root] = low[root] = len(order)
        stack.append(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in order:
                    order[child] = low[child] = len(order)
                    stack.append(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in stack:
                    low[node] = min(low[node], order[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == order[node]:
                part = stack[stack.index(node) :]
                del stack[stack.index(node) :]
                if len(part) > 1:
                    circles.append(sorted(part))
    assert circles == []
