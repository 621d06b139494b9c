"""``update-context``: a ``CLAUDE.md`` per folder with the decisions and sessions about it.

Opt-in (``directory_context: true`` in ``config.yaml``, see :mod:`memtrove.cli.context_cli`).
For every folder of a collection that holds indexed documents, the block lists:

- up to :data:`MAX_DECISIONS` decisions (content type ``decision``, active, not
  invalidated) of the last :data:`DECISION_DAYS` days by effective time whose text names the
  folder: its path from the collection's root or its absolute path, followed by ``/``;
- up to :data:`MAX_SESSIONS` of the last :data:`RECENT_SESSIONS` sessions whose changed
  files lie in the folder.

The block goes below :data:`MARKER` in the folder's ``CLAUDE.md``; what the user wrote above
the marker is kept as it is, and a folder with nothing to say is left alone. Stored text
(titles, summaries) is an agent's or a note's, and Claude Code reads ``CLAUDE.md`` as its
instructions: each line passes the injection guard (:func:`memtrove.security.guard.sanitize`,
a line carrying an attempt is left out), on one line of at most 160 characters. Files are
written only inside the collection's folder (a symlinked folder or ``CLAUDE.md`` that leads
out is skipped), atomically, and never in a folder that does not exist.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from memtrove.db.connection import Connection
from memtrove.files import write_atomic
from memtrove.results import SessionRecord
from memtrove.security.guard import sanitize
from memtrove.text import to_iso

__all__ = [
    "CONTEXT_FILE",
    "DECISION_DAYS",
    "MARKER",
    "MAX_DECISIONS",
    "MAX_SESSIONS",
    "Decision",
    "context_block",
    "document_folders",
    "merged_file",
    "recent_decisions",
    "write_context_file",
]

CONTEXT_FILE = "CLAUDE.md"
MARKER = "<!-- memtrove auto-generated context: do not edit below this line -->"
MAX_DECISIONS = 5
MAX_SESSIONS = 3
RECENT_SESSIONS = 10
DECISION_DAYS = 30
_DECISIONS_READ = 50
_LINE_CHARS = 160
_SKIPPED_PARTS = {"_PRIVATE", "node_modules", ".git"}


class Decision(NamedTuple):
    """A recent decision: title, effective time (ISO) and stored text."""

    title: str
    effective_at: str
    body: str


def recent_decisions(connection: Connection, now: datetime) -> list[Decision]:
    """The newest active, valid decisions of the last :data:`DECISION_DAYS` days."""
    since = to_iso(now - timedelta(days=DECISION_DAYS))
    rows = connection.execute(
        "SELECT d.title, COALESCE(d.authored_at, d.modified_at), c.doc FROM documents d "
        "JOIN content c ON c.hash = d.hash WHERE d.content_type = 'decision' "
        "AND d.active = 1 AND d.invalidated_at IS NULL "
        "AND COALESCE(d.authored_at, d.modified_at) >= ? "
        "ORDER BY COALESCE(d.authored_at, d.modified_at) DESC, d.id DESC LIMIT ?",
        (since, _DECISIONS_READ),
    ).fetchall()
    return [Decision(str(title), str(when), str(body)) for title, when, body in rows]


def document_folders(connection: Connection, collection: str) -> list[str]:
    """The folders (relative, ``/``-separated) of the collection's active documents, the
    root and folders under ``_PRIVATE``, ``node_modules`` or ``.git`` left out."""
    rows = connection.execute(
        "SELECT path FROM documents WHERE collection = ? AND active = 1", (collection,)
    ).fetchall()
    folders: set[str] = set()
    for (path,) in rows:
        parent = PurePosixPath(str(path)).parent
        if str(parent) in ("", ".") or _SKIPPED_PARTS & set(parent.parts):
            continue
        folders.add(str(parent))
    return sorted(folders)


def _line(text: str) -> str | None:
    """One line of stored text fit for CLAUDE.md, or None when it carries an injection."""
    flat = " ".join(text.split())
    flat = flat if len(flat) <= _LINE_CHARS else flat[: _LINE_CHARS - 1].rstrip() + "…"
    return sanitize(flat) if flat else None


def _inside(path: str, folder: Path, root: Path) -> bool:
    """Whether a changed file's ``path`` (absolute, or relative to the collection's root)
    lies in ``folder``."""
    target = Path(os.path.normpath(path if os.path.isabs(path) else root / path))
    return target.parent == folder or folder in target.parents


def context_block(
    folder: str,
    root: Path,
    decisions: Iterable[Decision],
    sessions: Sequence[SessionRecord],
) -> str | None:
    """The generated block for ``folder`` (relative to the collection's ``root``), or None
    when no decision or session concerns it."""
    absolute = Path(os.path.normpath(root / folder))
    # the folder's path from the root or its absolute path, then "/", not inside a longer
    # name ("docs/" is not named by "mydocs/")
    named = re.compile(
        "|".join(rf"(?<![\w.-]){re.escape(name)}/" for name in (folder, str(absolute)))
    )
    lines: list[str] = []
    for decision in decisions:
        if len(lines) == MAX_DECISIONS:
            break
        if named.search(decision.body):
            title = _line(decision.title)
            if title:
                lines.append(f"- **{title}** ({decision.effective_at[:10]})")
    activity: list[str] = []
    for session in sessions[:RECENT_SESSIONS]:
        if len(activity) == MAX_SESSIONS:
            break
        if any(_inside(path, absolute, root) for path in session.files_changed):
            summary = _line(session.summary or "") or "Session activity"
            day = (session.ended_at or session.last_seen_at or session.started_at)[:10]
            activity.append(f"- {day}: {summary}")
    parts: list[str] = []
    if lines:
        parts += ["## Decisions", "", *lines, ""]
    if activity:
        parts += ["## Recent Activity", "", *activity, ""]
    return "\n".join(parts) if parts else None


def merged_file(existing: str, block: str) -> str:
    """``CLAUDE.md``'s text: what the user wrote above the marker, then the marker and the
    block (the old block replaced)."""
    index = existing.find(MARKER)
    own = (existing[:index] if index >= 0 else existing).rstrip()
    return f"{own}\n\n{MARKER}\n\n{block}" if own else f"{MARKER}\n\n{block}"


def write_context_file(root: Path, folder: str, block: str) -> bool:
    """Write ``block`` into ``root/folder/CLAUDE.md``; False (nothing written) when the
    folder is missing, leads outside ``root`` or its ``CLAUDE.md`` is a link, cannot be
    read as text, or already says exactly this."""
    try:
        real_root = root.resolve(strict=True)
        directory = (root / folder).resolve(strict=True)
    except (OSError, RuntimeError):
        return False
    if not directory.is_dir() or not (directory == real_root or real_root in directory.parents):
        return False
    target = directory / CONTEXT_FILE
    if target.is_symlink() or (target.exists() and not target.is_file()):
        return False
    try:
        existing = target.read_text(encoding="utf-8") if target.exists() else ""
    except (OSError, UnicodeDecodeError):
        return False
    text = merged_file(existing, block)
    if text == existing:
        return False
    try:
        write_atomic(target, text, prefix=".claude-md-")
    except OSError:
        return False
    return True
