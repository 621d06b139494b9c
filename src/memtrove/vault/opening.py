"""Opening a vault's database file for :meth:`Vault.open <memtrove.vault.core.Vault.open>`.

Contract: given the vault's path, the busy timeout and whether a missing file may be
created. Its statements are those of :mod:`memtrove.db.connection` (opening the connection)
and :mod:`memtrove.db.migrations` (bringing every table to the current schema).
"""

from __future__ import annotations

from pathlib import Path

from memtrove.db.connection import Connection, open_connection
from memtrove.db.migrations import migrate
from memtrove.errors import VaultNotFoundError

__all__ = ["open_database"]


def open_database(vault_path: Path, busy_timeout_ms: int, *, create: bool = True) -> Connection:
    """The migrated connection to ``vault_path``; with ``create=False``, VaultNotFoundError
    naming the path when there is no vault there."""
    if not create and not _exists(vault_path):
        raise VaultNotFoundError(
            f"no vault at {vault_path}: create one with `memtrove init` or "
            "`memtrove bootstrap FOLDER`, or name yours with --vault or MEMTROVE_VAULT"
        )
    connection = open_connection(vault_path, busy_timeout_ms)
    try:
        migrate(connection, label=f"vault {vault_path}")
    except BaseException:
        connection.close()
        raise
    return connection


def _exists(path: Path) -> bool:
    """Whether ``path`` names something (a name the system refuses counts as there: opening
    it then says why)."""
    try:
        return path.exists()
    except OSError:
        return True
