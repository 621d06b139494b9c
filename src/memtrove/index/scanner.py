"""Walking a collection's folder: which files its pattern takes, and which it must not.

Never followed: symbolic links (to files or folders, broken or looping, inside the folder or
out of it): a link the pattern takes, and a link to a folder, are reported. Never entered: the
folders the spec excludes and any folder whose name starts with a dot. Never opened: what is
not a regular file (a FIFO would block the reader, a device has no end), reported as such.
Files larger than 5 MB are skipped from their size alone, without being read. A file or
folder whose name is not valid UTF-8 cannot be stored or shown as a path: it is reported
(the name printed with U+FFFD for the bad bytes) and the rest of the collection indexed. A
folder that cannot be listed, or a file whose status cannot be read (it may have vanished
since the listing), is reported, and the indexer keeps every document under or at it.

A collection's ``exclude`` globs (same syntax as its pattern, relative to its folder) take
files out: a glob that matches a file's path, or the path of a folder above it, excludes the
file. Excluded files that the pattern takes are reported (``excluded by pattern``), never
stat'ed or read; their documents leave the index like deleted files.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from functools import lru_cache
from operator import itemgetter
from pathlib import Path
from stat import S_ISREG
from typing import NamedTuple

from memtrove.files import file_kind
from memtrove.results import SkipReason

__all__ = [
    "EXCLUDED_DIRS",
    "MAX_FILE_BYTES",
    "FileEntry",
    "ScanResult",
    "compile_pattern",
    "file_kind",
    "scan_collection",
]

EXCLUDED_DIRS = frozenset(
    {
        "_PRIVATE",
        ".memtrove",
        ".clawmem",
        ".git",
        ".obsidian",
        ".logseq",
        ".foam",
        ".dendron",
        ".trash",
        ".stversions",
        "node_modules",
        ".cache",
        "vendor",
        "dist",
        "build",
        "gits",
        "scraped",
    }
)
MAX_FILE_BYTES = 5 * 1024 * 1024
_GLOB_SYNTAX = frozenset("/*?[]{}\\")  # what makes a pattern's tail more than plain text


class FileEntry(NamedTuple):
    path: str  # relative, with forward slashes
    absolute: str
    size: int
    mtime_ns: int


# path -> (size, mtime_ns), as the vault last saw each file
Recorded = dict[str, tuple[int | None, int | None]]


class ScanResult:
    """What a walk found. A slotted class, not a dataclass: importing :mod:`dataclasses`
    would cost every ``update`` a few milliseconds."""

    __slots__ = (
        "files",
        "root_missing",
        "skipped",
        "unchanged",
        "unreadable_dirs",
        "unreadable_files",
    )

    def __init__(self) -> None:
        self.files: list[FileEntry] = []
        self.skipped: list[tuple[str, SkipReason, str]] = []  # (relative path, reason, detail)
        self.unreadable_dirs: list[str] = []  # relative, "" for the root
        self.unreadable_files: list[str] = []
        self.root_missing = False
        self.unchanged = 0  # files found as ``recorded`` holds them (not in ``files``)


_NEW_ENTRY = tuple.__new__  # FileEntry without the Python-level __new__ (a third of its cost)
_BY_PATH = itemgetter(0)


def _nothing_excluded(relative: str) -> bool:
    return False


def is_excluded_dir(name: str) -> bool:
    return name in EXCLUDED_DIRS or name.startswith(".")


def _is_utf8(name: str) -> bool:
    """False for a name the OS gave with undecodable bytes (held as lone surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable_path(path: str) -> str:
    """``path`` with each byte that is not valid UTF-8 shown as U+FFFD."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


@lru_cache(maxsize=64)
def compile_pattern(pattern: str) -> re.Pattern[str]:
    """Translate a glob (``**``, ``*``, ``?``, ``[...]``, ``{a,b}``) to a regex on paths."""
    return re.compile(_translate(pattern.strip().lstrip("/") or "**/*.md") + r"\Z", re.S)


def literal_suffix(pattern: str) -> str | None:
    """``X`` when ``pattern`` is ``**/*X`` with ``X`` plain text and no ``/`` (``**/*.md``):
    such a pattern takes exactly the paths that end in ``X``. None for any other pattern."""
    glob = pattern.strip().lstrip("/") or "**/*.md"
    suffix = glob[4:]
    if not glob.startswith("**/*") or any(char in _GLOB_SYNTAX for char in suffix):
        return None
    return suffix


def _translate(pattern: str) -> str:
    out: list[str] = []
    index = 0
    length = len(pattern)
    while index < length:
        char = pattern[index]
        if pattern.startswith("**/", index):
            out.append("(?:[^/]*/)*")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif char == "*":
            out.append("[^/]*")
            index += 1
        elif char == "?":
            out.append("[^/]")
            index += 1
        elif char == "[":
            translated, close = _bracket(pattern, index)
            if translated is None:
                out.append(re.escape(char))
                index += 1
                continue
            out.append(translated)
            index = close + 1
        elif char == "{":
            close = _matching_brace(pattern, index)
            if close < 0:
                out.append(re.escape(char))
                index += 1
                continue
            options = _split_options(pattern[index + 1 : close])
            out.append("(?:" + "|".join(_translate(option) for option in options) + ")")
            index = close + 1
        else:
            out.append(re.escape(char))
            index += 1
    return "".join(out)


def _bracket(pattern: str, start: int) -> tuple[str | None, int]:
    """A ``[...]`` class at ``start`` as a regex class and the index of its ``]``.

    As in fnmatch, a ``]`` right after ``[`` (or ``[!``) is a member, not the end. A class
    that does not close or that regex cannot take (a reversed range such as ``[z-a]``) gives
    None: the ``[`` is then a literal character. A negated class never matches ``/``.
    """
    index = start + 1
    negated = pattern[index : index + 1] in ("!", "^")
    if negated:
        index += 1
    first = index
    if pattern[index : index + 1] == "]":
        index += 1
    close = pattern.find("]", index)
    if close < 0:
        return None, start
    body = pattern[first:close]
    # A `-` is a range only between two other members; elsewhere, and doubled (which regex
    # would read as a set operation), it is a plain `-`.
    members = "".join(
        "-"
        if c == "-" and 0 < i < len(body) - 1 and body[i - 1] != "-" and body[i + 1] != "-"
        else re.escape(c)
        for i, c in enumerate(body)
    )
    translated = "[^/" + members + "]" if negated else "[" + members + "]"
    try:
        re.compile(translated)
    except re.error:
        return None, start
    return translated, close


def _matching_brace(pattern: str, start: int) -> int:
    depth = 0
    for index in range(start, len(pattern)):
        if pattern[index] == "{":
            depth += 1
        elif pattern[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    return -1


def _split_options(body: str) -> list[str]:
    options: list[str] = []
    depth = 0
    current: list[str] = []
    for char in body:
        if char == "," and depth == 0:
            options.append("".join(current))
            current = []
            continue
        depth += char == "{"
        depth -= char == "}"
        current.append(char)
    options.append("".join(current))
    return options


def scan_collection(
    root: Path, pattern: str, exclude: Sequence[str] = (), recorded: Recorded | None = None
) -> ScanResult:
    """Every file under ``root`` that ``pattern`` takes and no ``exclude`` glob matches,
    with its size and mtime.

    ``recorded``, each file's ``(size, mtime_ns)`` by path as the vault last saw it: a file
    found just so is only counted (``unchanged``), not listed, and taken out of
    ``recorded``, which is left with the files that changed or were not found.
    """
    result = ScanResult()
    matcher = compile_pattern(pattern)
    excluders = [compile_pattern(glob) for glob in exclude if glob.strip().strip("/")]

    def is_excluded(relative: str) -> bool:
        return any(excluder.match(relative) for excluder in excluders)

    if not excluders:
        is_excluded = _nothing_excluded

    if not root.is_dir():
        result.root_missing = True
        return result
    # A pattern such as **/*.md takes a path when its last name ends so: no regex per file.
    suffix = literal_suffix(pattern)
    by_suffix, ending = suffix is not None, suffix or ""
    match = matcher.match
    files: list[FileEntry] = []
    skipped = result.skipped
    unchanged = 0
    # (folder, its path relative to root, whether an exclude glob took it or a folder above)
    stack: list[tuple[str, str, bool]] = [(str(root), "", False)]
    while stack:
        directory, relative, excluded_dir = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError as error:
            if not excluded_dir:  # an excluded folder's documents leave the index anyway
                result.unreadable_dirs.append(relative)
                detail = error.strerror or type(error).__name__
                skipped.append((relative or ".", SkipReason.FOLDER_UNREADABLE, detail))
            continue
        prefix = relative + "/" if relative else ""
        for entry in entries:
            name = entry.name
            child = prefix + name
            if not name.isascii() and not _is_utf8(name):
                shown = printable_path(child)
                excluded = excluded_dir or is_excluded(shown)
                _skip_bad_name(result, entry, shown, matcher, excluded)
                continue
            try:
                # A regular file by the listing's own type (no system call): no link, no folder.
                if entry.is_file(follow_symlinks=False):
                    pass
                elif entry.is_symlink():
                    if match(child):
                        excluded = excluded_dir or is_excluded(child)
                        reason = SkipReason.EXCLUDED if excluded else SkipReason.SYMLINK
                        skipped.append((child, reason, ""))
                    elif _links_a_folder(entry, excluded_dir or is_excluded(child)):
                        skipped.append((child, SkipReason.SYMLINK, "folder not entered"))
                    continue
                elif entry.is_dir(follow_symlinks=False):
                    if not is_excluded_dir(name):
                        stack.append((entry.path, child, excluded_dir or is_excluded(child)))
                    continue
                if by_suffix:
                    if not name.endswith(ending):
                        continue
                elif not match(child):
                    continue
                if excluded_dir or (excluders and is_excluded(child)):
                    skipped.append((child, SkipReason.EXCLUDED, ""))
                    continue
                stat = entry.stat(follow_symlinks=False)
                if not S_ISREG(stat.st_mode):
                    skipped.append((child, SkipReason.NOT_REGULAR, file_kind(stat.st_mode)))
                    continue
            except OSError as error:
                result.unreadable_files.append(child)
                detail = error.strerror or type(error).__name__
                skipped.append((child, SkipReason.UNREADABLE, detail))
                continue
            size = stat.st_size
            if size > MAX_FILE_BYTES:
                skipped.append((child, SkipReason.TOO_LARGE, f"{size:,} bytes"))
                continue
            mtime_ns = stat.st_mtime_ns
            if recorded is not None:
                was = recorded.pop(child, None)
                if was == (size, mtime_ns):
                    unchanged += 1
                    continue
                if was is not None:
                    recorded[child] = was  # changed: its record stays
            files.append(_NEW_ENTRY(FileEntry, (child, entry.path, size, mtime_ns)))
    files.sort(key=_BY_PATH)
    skipped.sort(key=_BY_PATH)
    result.files = files
    result.unchanged = unchanged
    return result


def _links_a_folder(entry: os.DirEntry[str], excluded: bool) -> bool:
    """Whether ``entry``, a link, names a folder the walk would have entered were it one (so
    its skip is reported): only the link's target is stat'ed, nothing is opened."""
    if excluded or is_excluded_dir(entry.name):
        return False
    try:
        return entry.is_dir()
    except OSError:
        return False


def _skip_bad_name(
    result: ScanResult,
    entry: os.DirEntry[str],
    shown: str,
    matcher: re.Pattern[str],
    excluded: bool,
) -> None:
    """Report a file the pattern would take, or a folder that would be entered, whose name
    is not valid UTF-8 (nothing under such a folder could be stored either). Excluded
    ones are reported as such, like any other."""
    try:
        is_folder = entry.is_dir(follow_symlinks=False)
    except OSError:
        is_folder = False
    if is_folder:
        if not excluded and not is_excluded_dir(entry.name):
            result.skipped.append((shown, SkipReason.BAD_NAME, "folder not entered"))
    elif matcher.match(shown):
        reason = SkipReason.EXCLUDED if excluded else SkipReason.BAD_NAME
        result.skipped.append((shown, reason, ""))
