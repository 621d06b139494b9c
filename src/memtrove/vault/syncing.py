"""``vault_sync``: a folder indexed into the vault on an agent's request (the MCP tool of
that name), as ``collection add`` and ``update`` would do it, refusing system folders and
folders that hold secrets.

memtrove serves one vault per process: the folder goes into the vault the process opened,
as a collection named ``collection`` (the tool's ``collection_name``, else the vault name
the agent gave). A collection of that name already indexing the same folder is updated; one
indexing another folder is an error, never re-pointed. Refused (the path as given and as
its links resolve it): the filesystem's root and the home folder themselves,
anything under ``/etc``, ``/root``, ``/proc``, ``/sys``, ``/dev`` or ``/boot``, and a path
with a part named ``.ssh``, ``.aws``, ``.kube``, ``.gnupg``, ``.env`` (or ``.env.*``) or
containing ``credentials``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from memtrove.errors import CollectionError

if TYPE_CHECKING:
    from memtrove.results import Collection, UpdateReport
    from memtrove.vault.core import Vault

__all__ = ["refusal", "sync_folder"]

_SYSTEM = ("/etc", "/root", "/proc", "/sys", "/dev", "/boot")
_SECRET_PARTS = (".ssh", ".aws", ".kube", ".gnupg")


def refusal(folder: Path) -> str | None:
    """Why ``folder`` (resolved) may not be synced, or None."""
    if folder == Path(folder.anchor) or folder == Path.home().resolve():
        return "a whole filesystem or home folder is never synced: name a folder of notes"
    text = folder.as_posix()
    for system in _SYSTEM:
        if text == system or text.startswith(system + "/"):
            return f"system folders ({system}) are never synced"
    for part in folder.parts:
        lowered = part.lower()
        if (
            lowered in _SECRET_PARTS
            or lowered == ".env"
            or lowered.startswith(".env.")
            or "credentials" in lowered
        ):
            return f"folders that hold secrets ({part}) are never synced"
    return None


def sync_folder(
    vault: Vault, content_root: str, pattern: str, collection: str
) -> tuple[Collection, UpdateReport]:
    """Index ``content_root`` as collection ``collection`` (added when new) and update it."""
    if not content_root.strip():
        raise CollectionError("content_root is empty: name the folder to sync")
    given = Path(content_root).expanduser()
    if not given.is_absolute():
        raise CollectionError(f"content_root must be an absolute path, not {content_root!r}")
    folder = given.resolve()
    # the path as given and as resolved: a link must not lead past the rule, nor a system
    # folder that is itself a link (macOS's /etc) escape it
    reason = refusal(folder) or refusal(Path(os.path.normpath(given)))
    if reason is not None:
        raise CollectionError(f"vault_sync refuses {folder}: {reason}")
    existing = {found.name: found for found in vault.collections()}
    known = existing.get(collection)
    if known is None:
        known = vault.add_collection(folder, name=collection, pattern=pattern)
    elif Path(known.path).resolve() != folder:
        raise CollectionError(
            f"collection {collection!r} already indexes {known.path}: give another collection_name"
        )
    return known, vault.update([collection])
