"""Files read and written safely: user files read through one opener, small files written
whole or not at all, and one writer at a time.

Reads: what a user's folder holds is not trusted: an unpacked export can carry symbolic
links (``unzip`` restores them), a FIFO that would block a reader for good, a link to a
device that never ends. Every reader of user files (the indexer, each ``mine`` format and the export zips,
``import``, the hooks' transcripts) opens them here, and this module promises:

- **No link is followed below the chosen folder.** A file is opened from the folder the user
  chose, one folder at a time (``openat`` with ``O_NOFOLLOW``), so neither the file nor any
  folder between it and the chosen one may be a symbolic link, wherever it points (out of the
  folder, or inside it: one rule, with nothing to resolve): it is refused as ``symbolic link
  (not followed)``. The chosen folder itself, and a file the user names directly, may be
  links: the user chose them.
- **Only regular files are read.** The open never waits (``O_NONBLOCK``) and the file is
  checked once it is open (``fstat``: what is read is what was checked, even if the name was
  swapped since the folder was listed): a FIFO, a socket, a device or a folder is refused as
  ``not a regular file``.
- **Every read has a size cap.** A file larger than its cap is refused from its size
  (``larger than N MB``) without being read, and no more than the cap is ever read.

A refusal is a :class:`Refused` (an ``OSError``) carrying the short reason readers count.
Where ``openat`` does not exist (Windows) each folder on the way is checked with ``lstat``
just before the open instead.

Writes: :func:`write_atomic` replaces a file whole, :func:`exclusive_lock` holds an advisory
lock. Standard library only, and ``tempfile`` loads on the first write, so the lightest entry
points (the MCP front, a hook's warm-path client) can use it without paying for it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:  # zipfile loads its compressors: not for the hooks that import this
    import zipfile

__all__ = [
    "LEAVES",
    "NOT_REGULAR",
    "SYMLINK",
    "Refused",
    "entry_refusal",
    "exclusive_lock",
    "file_kind",
    "open_beneath",
    "open_regular",
    "read_beneath",
    "read_capped",
    "read_regular",
    "too_large",
    "write_atomic",
    "zip_member_refusal",
]

SYMLINK = "symbolic link (not followed)"
NOT_REGULAR = "not a regular file"
LEAVES = "path leaving the folder"

_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_AT = os.open in os.supports_dir_fd and hasattr(os, "O_DIRECTORY")
_KINDS = (
    (stat.S_ISFIFO, "FIFO"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
    (stat.S_ISDIR, "folder"),
    (stat.S_ISLNK, "symbolic link"),
)


class Refused(OSError):
    """A file the opener would not read; ``reason`` is what a report counts it under."""

    def __init__(self, path: object, reason: str, detail: str = "") -> None:
        super().__init__(f"{path}: {reason}" + (f" ({detail})" if detail else ""))
        self.reason = reason
        self.detail = detail


def too_large(limit: int) -> str:
    """The reason for a file over ``limit`` bytes: ``larger than 5 MB``."""
    if limit >= 1 << 30 and limit % (1 << 30) == 0:
        return f"larger than {limit >> 30} GB"
    if limit >= 1 << 20:
        return f"larger than {round(limit / (1 << 20))} MB"
    return f"larger than {limit:,} bytes"


def file_kind(mode: int) -> str:
    """What a file that is not regular is, for a report (``FIFO``, ``socket``...)."""
    return next((kind for test, kind in _KINDS if test(mode)), "special file")


def _checked(descriptor: int, path: object, max_bytes: int | None) -> BinaryIO:
    """``descriptor`` as a binary file once it is known to be a regular file within its cap
    (closed and refused otherwise)."""
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise Refused(path, NOT_REGULAR, file_kind(status.st_mode))
        if max_bytes is not None and status.st_size > max_bytes:
            raise Refused(path, too_large(max_bytes), f"{status.st_size:,} bytes")
        return open(descriptor, "rb")  # the caller closes it
    except BaseException:
        os.close(descriptor)
        raise


def _why(path: object, error: OSError, name: str, directory: int | None, last: bool) -> OSError:
    """The refusal an open that failed stands for (the entry is a link, or a socket), else
    the error itself."""
    try:
        mode = os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode
    except OSError:
        return error
    if stat.S_ISLNK(mode):
        return Refused(path, SYMLINK)
    if last and not stat.S_ISREG(mode):
        return Refused(path, NOT_REGULAR, file_kind(mode))
    return error


def open_regular(path: Path, *, max_bytes: int | None = None, follow: bool = True) -> BinaryIO:
    """``path`` opened for reading in binary: a file the user named (``follow``: it may be a
    link) or one a reader found (``follow=False``: a link is refused). Refused
    (:class:`Refused`) unless it is a regular file of at most ``max_bytes``."""
    flags = _FILE_FLAGS | (0 if follow else _NOFOLLOW)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        raise _why(path, error, os.fspath(path), None, True) from None
    return _checked(descriptor, path, max_bytes)


def _parts(path: Path, relative: str | PurePosixPath) -> tuple[str, ...]:
    parts = tuple(part for part in PurePosixPath(relative).parts if part != ".")
    if not parts or PurePosixPath(relative).is_absolute() or ".." in parts:
        raise Refused(path, LEAVES)
    return parts


def open_beneath(
    root: Path, relative: str | PurePosixPath, *, max_bytes: int | None = None
) -> BinaryIO:
    """``root/relative`` opened for reading in binary, no link followed below ``root`` (see
    the module doc); ``relative`` uses ``/`` and may not climb out (``..``)."""
    path = root / relative
    parts = _parts(path, relative)
    if not _AT:  # pragma: no cover - Windows
        return _open_checking_each(root, parts, max_bytes)
    directory = os.open(root, _DIR_FLAGS)
    try:
        for name in parts[:-1]:
            try:
                child = os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=directory)
            except OSError as error:
                raise _why(path, error, name, directory, False) from None
            os.close(directory)
            directory = child
        try:
            descriptor = os.open(parts[-1], _FILE_FLAGS | _NOFOLLOW, dir_fd=directory)
        except OSError as error:
            raise _why(path, error, parts[-1], directory, True) from None
    finally:
        os.close(directory)
    return _checked(descriptor, path, max_bytes)


def _open_checking_each(  # pragma: no cover - Windows
    root: Path, parts: tuple[str, ...], max_bytes: int | None
) -> BinaryIO:
    current = root
    for name in parts[:-1]:
        current = current / name
        if stat.S_ISLNK(os.lstat(current).st_mode):
            raise Refused(root.joinpath(*parts), SYMLINK)
    return open_regular(root.joinpath(*parts), max_bytes=max_bytes, follow=False)


def read_capped(handle: BinaryIO, max_bytes: int, path: object) -> bytes:
    """All of ``handle``, refused when it holds more than ``max_bytes`` (a file that grew
    since it was opened): never more than that is read."""
    # sized from the open file: a small file costs no buffer of the cap's size
    size = min(os.fstat(handle.fileno()).st_size, max_bytes)
    data = handle.read(size + 1)
    if len(data) > size:  # it grew since: read on, to the cap and no further
        data += handle.read(max_bytes + 1 - len(data))
    if len(data) > max_bytes:
        raise Refused(path, too_large(max_bytes))
    return data


def read_beneath(root: Path, relative: str | PurePosixPath, max_bytes: int) -> bytes:
    """The bytes of ``root/relative`` (:func:`open_beneath`), at most ``max_bytes``."""
    with open_beneath(root, relative, max_bytes=max_bytes) as handle:
        return read_capped(handle, max_bytes, root / relative)


def read_regular(path: Path, max_bytes: int, *, follow: bool = True) -> bytes:
    """The bytes of ``path`` (:func:`open_regular`), at most ``max_bytes``."""
    with open_regular(path, max_bytes=max_bytes, follow=follow) as handle:
        return read_capped(handle, max_bytes, path)


def entry_refusal(entry: os.DirEntry[str]) -> str | None:
    """Why a walk must not read or enter ``entry`` (a link, or neither a regular file nor a
    folder), None when it may. Nothing is followed to answer."""
    if entry.is_symlink():
        return SYMLINK
    if entry.is_dir(follow_symlinks=False) or entry.is_file(follow_symlinks=False):
        return None
    return NOT_REGULAR


def zip_member_refusal(info: zipfile.ZipInfo, max_bytes: int) -> str | None:
    """Why a zip member must not be read: a symbolic link stored as a member (its bytes
    name a path, ``unzip`` would restore the link), or more than ``max_bytes`` once
    uncompressed (a zip bomb). The declared size bounds what ``zipfile`` reads, so checking
    it bounds memory."""
    if stat.S_ISLNK(info.external_attr >> 16):
        return SYMLINK
    if info.file_size > max_bytes:
        return too_large(max_bytes)
    return None


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
