"""Which folders an import may register: only those the user names.

An export file or a ClawMem vault comes from elsewhere. It brings documents and their
metadata, and it names the folder each collection lived in, but that name is only a hint:
registering it would let the file choose which of this machine's folders the next
``update`` reads (an export naming ``~`` with ``pattern: "**/*"`` and one stock
``.bashrc`` as its document would have the shell history, ``.netrc`` and private notes
indexed, and then injected). So a collection is registered only when the user maps it to a
folder (``--map NAME=DIR``); the others stay unregistered: their documents are searchable,
no folder is scanned, and ``collection add DIR --name NAME`` takes them over later.

Even a mapped folder is refused, unless the user says ``--allow-any-folder``, when it is
the file system's root, the home folder, a dot-folder or inside one (``~/.ssh``,
``~/.config``), or a folder holding this vault's ``config.yaml``: one typo away from
indexing secrets, and never what a notes collection is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from memtrove.errors import CollectionError
from memtrove.index.scanner import scan_collection

__all__ = ["FolderPlan", "check_folders", "folder_hints", "plan_folder", "unsafe_folder"]

DEFAULT_PATTERN = "**/*.md"


class FolderPlan(NamedTuple):
    """A mapped collection: its folder, the files the next ``update`` would index there,
    and (after a real import) how many of its first documents are those files
    (``sampled`` of them checked, ``matching`` found with the same body)."""

    name: str
    folder: str
    pattern: str
    exclude: list[str]
    files: int
    sampled: int = 0
    matching: int = 0

    def text(self) -> str:
        line = f"  {self.name} -> {self.folder} ({self.pattern}): {self.files} file(s) to index"
        if self.sampled and not self.matching:
            line += (
                f"; none of its first {self.sampled} document(s) is a file there "
                "(the next update takes them out of search)"
            )
        elif self.sampled:
            line += f"; {self.matching} of its first {self.sampled} document(s) are files there"
        return line


def unsafe_folder(folder: Path, protected: Sequence[Path]) -> str | None:
    """Why ``folder`` (resolved) must not be registered without ``--allow-any-folder``, or
    None. ``protected``: folders it must not hold (the config folder)."""
    if folder == Path(folder.anchor):
        return "it is the file system's root"
    try:
        home = Path.home().resolve()
    except (RuntimeError, OSError):  # no home to speak of: nothing to compare
        home = None
    if folder == home:
        return "it is the home folder"
    hidden = next((part for part in folder.parts[1:] if part.startswith(".")), None)
    if hidden is not None:
        return f"it is or lies inside the dot-folder {hidden!r}"
    for place in protected:
        if place == folder or place.is_relative_to(folder):
            return "it holds this vault's config.yaml"
    return None


def check_folders(
    folders: Mapping[str, str | Path],
    names: Sequence[str],
    protected: Sequence[Path],
    *,
    allow_any_folder: bool = False,
) -> dict[str, Path]:
    """The user's ``--map NAME=DIR`` values checked before anything is written: each NAME a
    collection the source holds (``names``), each DIR an existing folder that is safe to
    scan. Raises CollectionError (one line) otherwise; returns name -> resolved folder."""
    checked: dict[str, Path] = {}
    protected = [place.resolve() for place in protected]
    for name, value in folders.items():
        if name not in names:
            listed = ", ".join(sorted(names)) or "none"
            raise CollectionError(
                f"--map {name}=...: the source holds no collection {name!r} (it has {listed})"
            )
        if name.startswith("_"):
            raise CollectionError(f"--map {name}=...: internal collections have no folder")
        given = Path(value).expanduser()
        if not str(value).strip():
            raise CollectionError(f"--map {name}=: name the folder to scan")
        try:
            folder = given.resolve()
            is_folder = folder.is_dir()
        except (OSError, RuntimeError, ValueError) as error:  # a loop of links, a NUL
            raise CollectionError(f"--map {name}={value!r}: {error}") from None
        if not is_folder:
            raise CollectionError(f"--map {name}={given}: no such folder")
        reason = None if allow_any_folder else unsafe_folder(folder, protected)
        if reason is not None:
            raise CollectionError(
                f"--map {name}={given}: {reason}; name the notes folder itself "
                "(or add --allow-any-folder if you mean it)"
            )
        checked[name] = folder
    return checked


def plan_folder(name: str, folder: Path, entry: Mapping[str, Any]) -> FolderPlan:
    """What registering ``folder`` as collection ``name`` would index, with the source's
    pattern and excludes (``entry``: the source's collection settings)."""
    pattern = str(entry.get("pattern") or DEFAULT_PATTERN)
    exclude = [str(glob) for glob in entry.get("exclude") or () if isinstance(glob, str)]
    try:
        files = len(scan_collection(folder, pattern, exclude).files)
    except ValueError as error:  # a pattern the scanner cannot take
        raise CollectionError(f"collection {name!r}: pattern {pattern!r}: {error}") from None
    return FolderPlan(name, str(folder), pattern, exclude, files)


def folder_hints(collections: Any) -> dict[str, str]:
    """Collection name -> the folder the source names for it (shown to the user as a hint,
    never read), for every collection entry the source lists."""
    hints: dict[str, str] = {}
    for entry in collections if isinstance(collections, list) else ():
        if isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
            path = entry.get("path")
            hints[str(entry["name"])] = path[:500] if isinstance(path, str) else ""
    return hints
