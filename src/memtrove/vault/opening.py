"""Opening a vault's database for :meth:`Vault.open <memtrove.vault.core.Vault.open>`.

Contract: given the vault's location (a SQLite file's path, or a server's URL: see
:mod:`memtrove.locations`), the busy timeout and whether a missing vault may be created.
Its statements are those of :mod:`memtrove.db.connection` (opening the connection) and
:mod:`memtrove.db.migrations` (bringing every table to the current schema).
"""

from __future__ import annotations

from pathlib import Path

from memtrove.db.connection import Connection, open_connection
from memtrove.db.migrations import migrate
from memtrove.errors import VaultNotFoundError
from memtrove.locations import is_server_url, shown_location

__all__ = ["open_database"]

_MIGRATIONS_TABLE = "schema_migrations"


def open_database(location: Path | str, busy_timeout_ms: int, *, create: bool = True) -> Connection:
    """The migrated connection to the vault at ``location``; with ``create=False``,
    VaultNotFoundError naming it (a URL without its password) when there is no vault there:
    no file, or on a server no schema or one that holds no vault."""
    server = is_server_url(location)
    if not create and not server and not _exists(Path(location)):
        raise VaultNotFoundError(_no_vault(location))
    try:
        connection = open_connection(location, busy_timeout_ms, create=create)
    except VaultNotFoundError:
        raise VaultNotFoundError(_no_vault(location)) from None
    try:
        if server and not create and not connection.catalog.has_table(_MIGRATIONS_TABLE):
            raise VaultNotFoundError(_no_vault(location))
        migrate(connection, label=f"vault {shown_location(location)}")
    except BaseException:
        connection.close()
        raise
    return connection


def _no_vault(location: Path | str) -> str:
    return (
        f"no vault at {shown_location(location)}: create one with `memtrove init` or "
        "`memtrove bootstrap FOLDER`, or name yours with --vault or MEMTROVE_VAULT"
    )


def _exists(path: Path) -> bool:
    """Whether ``path`` names something (a name the system refuses counts as there: opening
    it then says why)."""
    try:
        return path.exists()
    except OSError:
        return True
