"""``memtrove export FILE``, ``memtrove import FILE`` and ``memtrove import clawmem PATH``:
moving a vault out, back in, and over from ClawMem."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer

from memtrove.cli.common import Report, fail, given_path, open_vault, print_report, user_errors

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    app.command("export")(export)
    app.command("import")(import_command)


def export(
    ctx: typer.Context,
    file: Path = typer.Argument(..., help="The JSON-lines file to write (replaced if present)."),
    vectors: bool = typer.Option(
        False, "--vectors", help="Also the fragment vectors (no re-embedding in the same space)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Write the whole vault (documents, entries, graph, rules, sessions) as JSON lines."""
    with open_vault(ctx, create=False) as vault, user_errors():
        report = vault.portable.export_to(file, vectors=vectors)
    print_report(report, as_json)


def import_command(
    ctx: typer.Context,
    source: str = typer.Argument(
        ..., metavar="FILE | clawmem", help="An export file, or `clawmem` followed by its PATH."
    ),
    path: Path | None = typer.Argument(
        None,
        metavar="[PATH]",
        help="With `clawmem`: its index.sqlite, or the folder holding it.",
        parser=given_path,
    ),
    config: Path | None = typer.Option(
        None, "--config", help="With `clawmem`: its collection config (index.yml / config.yaml)."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Check and count; write nothing."),
    merge: bool = typer.Option(
        False, "--merge", help="Add an export to a vault in use (what it holds wins)."
    ),
    embed: bool = typer.Option(False, "--embed", help="Then embed what arrived."),
    rename: list[str] = typer.Option(
        [],
        "--rename",
        metavar="OLD=NEW",
        help="With `clawmem`: import its collection OLD as NEW (repeatable).",
    ),
    maps: list[str] = typer.Option(
        [],
        "--map",
        metavar="NAME=DIR",
        help="Register collection NAME for folder DIR (repeatable); others stay unregistered.",
    ),
    allow_any_folder: bool = typer.Option(
        False,
        "--allow-any-folder",
        help="Let --map name the home folder, /, a dot-folder or a folder above the config.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Import an export file into a new vault, or (`import clawmem PATH`) a ClawMem vault
    into this one: documents, metadata, graph, sessions (run again: nothing changes)."""
    clawmem = source == "clawmem" and path is not None
    usage = (
        "usage: memtrove import FILE [--merge] [--map NAME=DIR] [--dry-run] [--embed] | "
        "memtrove import clawmem PATH [--config FILE] [--rename OLD=NEW] [--map NAME=DIR] "
        "[--dry-run] [--embed]"
    )
    if (not clawmem and (path is not None or config is not None or rename)) or (clawmem and merge):
        raise fail(usage, 2)
    if not source.strip():
        raise fail("FILE is empty (an unset variable?): name the export file to import", 2)
    renames = _renames(rename)
    folders = _maps(maps)
    options: dict[str, Any] = {  # what both imports take
        "dry_run": dry_run,
        "embed": embed,
        "folders": folders,
        "allow_any_folder": allow_any_folder,
    }
    report: Report
    with open_vault(ctx) as vault, user_errors():
        if clawmem:
            assert path is not None
            config = config or _clawmem_config(path)
            report = vault.portable.import_clawmem(path, config=config, renames=renames, **options)
        else:
            report = vault.portable.import_from(Path(source), merge=merge, **options)
    print_report(report, as_json)


def _pairs(values: list[str], option: str, shape: str, *, empty_key: bool) -> dict[str, str]:
    """``--option KEY=VALUE`` values as a mapping (usage error when malformed or repeated);
    ``empty_key``: an empty KEY is allowed (a ClawMem collection whose name is empty, which
    this vault cannot hold, is named that way)."""
    pairs: dict[str, str] = {}
    for value in values:
        key, equals, target = value.partition("=")
        blank = not key.strip() and (bool(key) or not empty_key)
        if not equals or blank or not target.strip() or key.strip() in pairs:
            raise fail(f"{option} takes {shape}, once per collection (not {value!r})", 2)
        pairs[key.strip()] = target.strip()
    return pairs


def _renames(values: list[str]) -> dict[str, str]:
    """``--rename OLD=NEW`` values as a mapping."""
    return _pairs(values, "--rename", "OLD=NEW", empty_key=True)


def _maps(values: list[str]) -> dict[str, str]:
    """``--map NAME=DIR`` values as a mapping."""
    return _pairs(values, "--map", "NAME=DIR", empty_key=False)


def _clawmem_config(path: Path) -> Path | None:
    """None when a config sits beside the database (the import finds it there); else
    ClawMem's own: ``$CLAWMEM_CONFIG_DIR`` (default ``$XDG_CONFIG_HOME/clawmem``),
    ``config.yaml`` if present, otherwise ``index.yml``."""
    folder = path if path.is_dir() else path.parent
    beside = ("config.yaml", "index.yml", "config/config.yaml", "config/index.yml")
    if any((folder / name).is_file() for name in beside):
        return None
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    home = Path(os.environ.get("CLAWMEM_CONFIG_DIR") or Path(base) / "clawmem").expanduser()
    for name in ("config.yaml", "index.yml"):
        if (home / name).is_file():
            return home / name
    return None
