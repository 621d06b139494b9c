"""Small files written safely: whole or not at all, and one writer at a time.

Standard library only, and ``tempfile`` loads on the first write, so the lightest entry
points (the MCP front, a hook's warm-path client) can use it without paying for it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

__all__ = ["exclusive_lock", "open_regular", "write_atomic"]


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading in binary, refused (``OSError``) unless it is a regular
    file: opened without blocking, so a FIFO named as a source is never waited on."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    handle = open(descriptor, "rb")  # noqa: SIM115 - the caller closes it
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        handle.close()
        raise OSError(f"{path.name} is not a regular file")
    return handle


def write_atomic(
    path: Path, text: str, *, prefix: str = ".tmp-", sync: bool = False, mode: int | None = None
) -> None:
    """Replace ``path`` with ``text`` through a temporary file in the same folder, so a
    reader sees the old file or the new one, never half of it. ``sync`` flushes it to disk
    first; ``mode`` sets its permissions (default: private, as ``mkstemp`` makes it)."""
    import tempfile

    descriptor, temporary = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            if sync:
                handle.flush()
                os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


@contextlib.contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on the file ``path`` (created if needed) for the
    block. Where ``fcntl`` does not exist (Windows) no lock is taken: best effort."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            yield
            return
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
