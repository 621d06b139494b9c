"""Copying a SQLite vault file without writing to it: a snapshot stays as it was.

Opening a vault the ordinary way switches it to WAL mode and migrates it; a frozen
snapshot (``memtrove eval run --db FILE``) must not change. :func:`copy_read_only` opens
the file read-only (``mode=ro``: SQLite refuses any write; ``immutable`` as well when no
write-ahead log lies beside it, so no ``-wal``/``-shm`` file is made either) and writes a
consistent copy with ``VACUUM INTO``, which the caller then opens as a vault of its own.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import sqlean

from memtrove.db.sqlite.connection import _vec0_path
from memtrove.errors import VaultOpenError

__all__ = ["copy_read_only"]


def copy_read_only(source: Path, target: Path) -> None:
    """Write a copy of the SQLite file ``source`` to the new file ``target``, reading
    ``source`` through a read-only connection; VaultOpenError naming ``source`` when it
    cannot be read as a vault file."""
    uri = f"file:{quote(str(source.resolve()))}?mode=ro"
    if not Path(f"{source}-wal").exists():
        # Nothing is writing it (no write-ahead log): read it as an unchanging file, so no
        # -wal or -shm file is made beside it either.
        uri += "&immutable=1"
    try:
        connection = sqlean.connect(uri, uri=True, isolation_level=None)
    except sqlean.DatabaseError as error:
        raise VaultOpenError(f"cannot open snapshot {source}: {error}") from None
    try:
        connection.enable_load_extension(True)
        connection.load_extension(_vec0_path())  # its tables are copied through it
        connection.enable_load_extension(False)
        connection.execute("VACUUM INTO ?", (str(target),))
    except sqlean.DatabaseError as error:
        raise VaultOpenError(f"cannot read snapshot {source}: {error}") from None
    finally:
        connection.close()
