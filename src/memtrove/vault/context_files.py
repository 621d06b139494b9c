"""``update-context``: each collection folder's ``CLAUDE.md`` written again from the vault.

Contract: given a :class:`~memtrove.Vault`, reads its collections, its recent decisions
(:func:`memtrove.capture.directory_context.recent_decisions`, under the vault's lock) and its
session log, and writes the files :mod:`memtrove.capture.directory_context` describes. Only
the caller decides whether the feature is on (``directory_context:`` in ``config.yaml``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from memtrove.vault.core import Vault

__all__ = ["ContextReport", "update_directory_context"]


class ContextReport(NamedTuple):
    """What ``update-context`` did: folders looked at, files written (``collection/folder``),
    and folders left alone (nothing to say, already up to date, or not writable)."""

    folders: int
    written: tuple[str, ...]
    unchanged: int

    def to_dict(self) -> dict[str, Any]:
        return {**self._asdict(), "written": list(self.written)}


def update_directory_context(vault: Vault) -> ContextReport:
    """Write the ``CLAUDE.md`` block of every collection folder that has decisions or
    sessions about it; folders of collections whose folder is missing are skipped."""
    from memtrove.capture import directory_context as context

    collections = [c for c in vault.collections() if c.path.is_dir()]
    sessions = vault.sessions.session_log(context.RECENT_SESSIONS)
    database = vault.database
    with database.lock:
        decisions = context.recent_decisions(database.connection, vault._now())
        folders = {
            c.name: context.document_folders(database.connection, c.name) for c in collections
        }
    written: list[str] = []
    looked = 0
    for collection in collections:
        root = collection.path
        for folder in folders[collection.name]:
            looked += 1
            block = context.context_block(folder, root, decisions, sessions)
            if block is not None and context.write_context_file(root, folder, block):
                written.append(f"{collection.name}/{folder}")
    return ContextReport(looked, tuple(written), looked - len(written))
