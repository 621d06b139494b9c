"""Walk a folder for conversation files and find each one's format.

Files ending ``.jsonl``, ``.json``, ``.txt`` or ``.md`` are candidates (and ``.zip``: the
export zips of ChatGPT, Claude.ai and Slack; and folders, for the Slack reader, which takes a
whole export); tool and build folders are never
entered (:data:`SKIP_DIRS`). Each candidate is offered to the readers in
:data:`memtrove.mine.formats.ORDER` (or to the one ``--format`` names): the first whose
``sniff`` accepts it and whose ``read`` yields a conversation takes it. A reader that yields
none but counted what it skipped (a subagent transcript, say) also takes it, so its reasons
are reported; a file that no reader takes is listed as unrecognised, never guessed.

Nothing below the folder mined is followed: a candidate or a folder that is a symbolic link
(wherever it points) and a candidate that is not a regular file (a FIFO, a device) are
counted by reason (:mod:`memtrove.files`), never opened; the folder or file named to
``mine`` may itself be a link, the user chose it.
"""

from __future__ import annotations

import itertools
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

from memtrove.files import NOT_REGULAR, SYMLINK
from memtrove.mine.exchanges import Conversation, Skips, open_source
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


def candidates(
    root: Path, labels: Sequence[str] = ORDER, refused: Skips | None = None
) -> Iterator[tuple[Path, bool]]:
    """(path, is a folder export) in a stable order: folders a reader takes whole (Slack),
    then files by extension. Symbolic links are not followed, and only regular files are
    offered (a FIFO, socket or device would block or never end): the others are counted in
    ``refused`` by reason."""
    refused = refused if refused is not None else Skips()
    # Only Slack exports are folders (or zips) read whole.
    folder_readers = [module for label, module in _readers(labels) if label == "slack"]
    if not root.is_dir():
        why = _refusal(root, follow=True)
        if why is None:
            # a file named to mine may be a link (the user chose it): read what it names
            yield (Path(os.path.realpath(root)) if root.is_symlink() else root), False
        elif root.exists():
            refused.skip(why)
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
                refused.skip(SYMLINK)
                continue
            if takes_folder(path):
                yield path, True
            else:
                kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            path = Path(folder, name)
            suffix = path.suffix.lower()
            if suffix in EXTENSIONS or suffix == ".zip":
                why = _refusal(path)
                if why is None:
                    yield path, False
                elif why != "gone":
                    refused.skip(why)


def _refusal(path: Path, *, follow: bool = False) -> str | None:
    """Why ``path`` (not what a link names, unless ``follow``) is not offered to a reader."""
    try:
        mode = (os.stat if follow else os.lstat)(path).st_mode
    except OSError:
        return "gone"
    if stat.S_ISLNK(mode):
        return SYMLINK
    return None if stat.S_ISREG(mode) else NOT_REGULAR


def detect(path: Path, is_folder: bool, labels: Sequence[str] = ORDER) -> Found | None:
    """The first reader (in ``labels`` order) that takes ``path``, or None."""
    head = b""
    if not is_folder:
        # A file refused (a FIFO swapped in since the walk) is the caller's to report.
        with open_source(path) as handle:
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
