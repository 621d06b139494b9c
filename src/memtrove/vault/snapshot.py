"""A vault snapshot opened for reading only: what ``memtrove eval run --db`` measures.

Contract: :func:`open_snapshot` yields a :class:`~memtrove.vault.core.Vault` with the
snapshot's contents and never writes to the snapshot itself. A SQLite file is copied through
a read-only connection (:mod:`memtrove.db.sqlite.snapshot`) into a temporary folder and the
copy is opened (and migrated, if it is older); a server vault (a URL) is opened as it is
(it must exist) and its schema copied beside it, the copy dropped on exit. Either way,
anything the caller does (a cache written by a query) lands in the copy.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

from memtrove.errors import VaultNotFoundError
from memtrove.locations import is_server_url, shown_location
from memtrove.models.registry import Models
from memtrove.vault.core import Vault

__all__ = ["open_snapshot"]


@contextlib.contextmanager
def open_snapshot(
    location: Path | str, *, config_dir: Path | str | None = None, models: Models | None = None
) -> Iterator[Vault]:
    """The snapshot at ``location`` (a vault file or a server vault's URL), read-only: a
    VaultNotFoundError naming it when there is none, never one created."""
    if is_server_url(location):
        opened = Vault.open(location, config_dir=config_dir, models=models, create=False)
        with opened, opened.scratch_copy() as copy:
            yield copy
        return
    from memtrove.db.sqlite.snapshot import copy_read_only

    source = Path(location).expanduser()
    if not source.is_file():
        what = "is a folder, not a vault file" if source.is_dir() else "does not exist"
        raise VaultNotFoundError(f"snapshot {shown_location(source)} {what}")
    with tempfile.TemporaryDirectory(prefix="memtrove-snapshot-") as folder:
        target = Path(folder) / "vault.sqlite"
        copy_read_only(source, target)
        with Vault.open(target, config_dir=config_dir, models=models, create=False) as vault:
            yield vault
