"""The vault's database as the Vault's areas are given it: the connection and the lock that
serialises its use within a process.

Every area of the Vault (:mod:`memtrove.vault`) is constructed with this one object rather
than a bare connection, so what a statement runs through has one place to grow: dialect,
transactions and the catalogue belong here as the second engine arrives.
"""

from __future__ import annotations

import threading
from pathlib import Path

from memtrove.db.connection import Connection

__all__ = ["Database"]


class Database:
    """One open vault database: ``connection`` (autocommit; writes go through
    :func:`memtrove.db.connection.write_transaction`), ``lock`` (held around every use of
    the connection, so threads sharing a Vault take turns) and the ``location`` it was
    opened from (the file's path, or the server's URL, which may hold a password: shown
    only through :func:`memtrove.locations.shown_location`)."""

    __slots__ = ("connection", "location", "lock")

    def __init__(self, connection: Connection, location: Path | str) -> None:
        self.connection = connection
        self.lock = threading.RLock()
        self.location = location
