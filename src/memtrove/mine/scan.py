"""Walk a folder for conversation files and find each one's format.

Files ending ``.jsonl``, ``.json``, ``.txt`` or ``.md`` are candidates (and ``.zip``: the
export zips of ChatGPT, Claude.ai and Slack; and folders, for the Slack reader, which takes a
whole export); tool and build folders are never
entered (:data:`SKIP_DIRS`). Each candidate is offered to the readers in
:data:`memtrove.mine.formats.ORDER` (or to the one ``--format`` names): the first whose
``sniff`` accepts it and whose ``read`` yields a conversation takes it. A reader that yields
none but counted what it skipped (a subagent transcript, say) also takes it, so its reasons
are reported; a file that no reader takes is listed as unrecognised, never guessed.
"""

from __future__ import annotations

import itertools
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

from memtrove.files import open_regular
from memtrove.mine.exchanges import Conversation, Skips
from memtrove.mine.formats import ORDER, reader

__all__ = ["EXTENSIONS", "SKIP_DIRS", "Found", "candidates", "detect"]

EXTENSIONS = frozenset({".jsonl", ".json", ".txt", ".md"})
SKIP_DIRS = frozenset(
    {
        ".git",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        "dist",
        "build",
        ".next",
        ".mempalace",
        ".grepai",
        "tool-results",
    }
)
HEAD_BYTES = 8192
ZIP_READERS = frozenset({"chatgpt", "claude-ai", "slack"})
"""The formats delivered as a zip, read in place: ChatGPT's and Claude.ai's exports (their
``conversations.json``) and Slack's."""


class Found(NamedTuple):
    """A source a reader took: its format, its conversations (lazy) and its skips."""

    path: Path
    label: str
    conversations: Iterator[Conversation]
    skips: Skips


def _readers(labels: Sequence[str]) -> list[tuple[str, ModuleType]]:
    found: list[tuple[str, ModuleType]] = []
    for label in labels:
        try:
            found.append((label, reader(label)))
        except ImportError:  # a format whose reader is not installed yet
            continue
    return found


def candidates(root: Path, labels: Sequence[str] = ORDER) -> Iterator[tuple[Path, bool]]:
    """(path, is a folder export) in a stable order: folders a reader takes whole (Slack),
    then files by extension. Symbolic links are not followed, and only regular files are
    offered (a FIFO, socket or device would block or never end)."""
    # Only Slack exports are folders (or zips) read whole.
    folder_readers = [module for label, module in _readers(labels) if label == "slack"]
    if root.is_file():
        yield root, False
        return

    def takes_folder(path: Path) -> bool:
        for module in folder_readers:
            try:
                if module.sniff(path, b""):
                    return True
            except OSError:
                return False
        return False

    if takes_folder(root):
        yield root, True
        return
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        kept = []
        for name in dirs:
            path = Path(folder, name)
            if path.is_symlink():
                continue
            if takes_folder(path):
                yield path, True
            else:
                kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            path = Path(folder, name)
            suffix = path.suffix.lower()
            if (suffix in EXTENSIONS or suffix == ".zip") and _regular(path):
                yield path, False


def _regular(path: Path) -> bool:
    """Whether ``path`` itself (not what a link names) is a regular file."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def detect(path: Path, is_folder: bool, labels: Sequence[str] = ORDER) -> Found | None:
    """The first reader (in ``labels`` order) that takes ``path``, or None."""
    head = b""
    if not is_folder:
        # An unreadable file (or a FIFO swapped in since the walk) is the caller's to report.
        with open_regular(path) as handle:
            head = handle.read(HEAD_BYTES)
    zipped = path.suffix.lower() == ".zip"
    for label, module in _readers(labels):
        if (is_folder and label != "slack") or (zipped and label not in ZIP_READERS):
            continue
        if not module.sniff(path, head):
            continue
        skips = Skips()
        conversations = iter(module.read(path, skips))
        first = next(conversations, None)
        if first is None and not skips:
            continue
        chained = itertools.chain([first], conversations) if first is not None else iter(())
        return Found(path, label, chained, skips)
    return None
