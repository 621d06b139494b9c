"""The vault's vectors in a flat file that processes map, for searches in a new process.

A one-shot ``vsearch`` or ``query`` has no vectors in memory. Scanning sqlite-vec's chunk
tables copies every blob out of SQLite into fresh memory (~40 ms for 90k x 256 vectors);
mapping a flat file of the same vectors lets the matrix product read the page cache
directly (~10 ms). The file lives in the cache folder (``vectors/``, one per vault path or URL),
holds the vault's vector stamp (``vector_version``, a new random value at every change of
the vectors), and is used only while that stamp is the vault's and the file is whole;
otherwise the search scans the chunks as before and, for a vault of at least
:data:`MIN_VECTORS` vectors, writes a new file as it goes (to a temporary name, renamed
into place: a reader sees the old file or the new one, never half of one).

Deleting the folder is always safe: it costs the next search one scan.
"""

from __future__ import annotations

import contextlib
import os
import struct
from typing import TYPE_CHECKING, Any

from memtrove.locations import is_server_url, shown_location
from memtrove.models.protocols import Vectors
from memtrove.text import sha256_hex

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["MIN_VECTORS", "VectorFileWriter", "keep_freed_memory", "map_vectors", "vector_file"]

MIN_VECTORS = 5_000  # below this a scan costs a few milliseconds: no file is kept
_MAGIC = b"MTVECS01"
_HEADER = struct.Struct("<8sqqq")  # magic, stamp, count, width
_HEADER_BYTES = 64  # the matrix starts aligned


def vector_file(cache_folder: str, vault_path: str) -> str:
    """Where the vectors of the vault at ``vault_path`` (a file, or a server's URL: named
    without its password) are kept."""
    name = shown_location(vault_path) if is_server_url(vault_path) else os.path.realpath(vault_path)
    key = sha256_hex(name.encode("utf-8", "surrogatepass"))[:24]
    return os.path.join(cache_folder, "vectors", f"{key}.f32")


def map_vectors(path: str, stamp: int) -> tuple[npt.NDArray[np.int64], Vectors] | None:
    """(row ids, vectors) mapped read-only from ``path`` if it was written at ``stamp`` and
    is whole; None otherwise (missing, stale, damaged). The stamp alone dates the file: it
    is written only when it holds every vector of the vault at that stamp, and every later
    change of the vectors gives the vault another stamp."""
    import mmap

    import numpy as np

    try:
        with open(path, "rb") as handle:
            magic, written, rows, width = _HEADER.unpack(handle.read(_HEADER.size))
            if magic != _MAGIC or written != stamp or rows <= 0 or width <= 0:
                return None
            size = _HEADER_BYTES + rows * width * 4 + rows * 8
            if os.fstat(handle.fileno()).st_size != size:
                return None
            mapped = mmap.mmap(handle.fileno(), size, access=mmap.ACCESS_READ)
    except (OSError, ValueError, struct.error):
        return None
    matrix = np.frombuffer(mapped, dtype=np.float32, count=rows * width, offset=_HEADER_BYTES)
    ids = np.frombuffer(mapped, dtype=np.int64, count=rows, offset=_HEADER_BYTES + matrix.nbytes)
    return ids, matrix.reshape(rows, width)


class VectorFileWriter:
    """Writes the vectors a scan reads, chunk by chunk, into a new file for ``stamp``;
    :meth:`finish` renames it into place if it holds ``count`` vectors, :meth:`abandon`
    removes it. Any failure to write only means there is no file."""

    def __init__(self, path: str, stamp: int, count: int) -> None:
        self._path = path
        self._stamp = stamp
        self._count = count
        self._rows = 0
        self._width = 0
        self._ids: list[Any] = []
        self._temporary = f"{path}.{os.getpid()}.{id(self):x}.tmp"
        self._handle: Any = None
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            self._handle = open(self._temporary, "wb")  # noqa: SIM115 (closed by finish/abandon)
            self._handle.write(b"\0" * _HEADER_BYTES)
        except OSError:
            self.abandon()

    def add(self, ids: npt.NDArray[np.int64], matrix: Vectors) -> None:
        import numpy as np

        if self._handle is None:
            return
        if self._width and matrix.shape[1] != self._width:
            self.abandon()
            return
        self._width = int(matrix.shape[1])
        try:
            self._handle.write(np.ascontiguousarray(matrix, dtype="<f4").data)
        except (OSError, ValueError):
            self.abandon()
            return
        self._ids.append(np.ascontiguousarray(ids, dtype="<i8"))
        self._rows += len(ids)

    def finish(self, stamp: int) -> None:
        """Put the file in place, if it holds ``count`` vectors and the vault's stamp is
        still the one it was started at (``stamp``, read after the last row)."""
        if self._handle is None:
            return
        if self._rows != self._count or self._rows == 0 or stamp != self._stamp:
            self.abandon()
            return
        try:
            for ids in self._ids:
                self._handle.write(ids.data)
            self._handle.seek(0)
            self._handle.write(_HEADER.pack(_MAGIC, self._stamp, self._rows, self._width))
            self._handle.close()
            self._handle = None
            os.replace(self._temporary, self._path)
        except OSError:
            self.abandon()

    def abandon(self) -> None:
        if self._handle is not None:
            with contextlib.suppress(OSError):
                self._handle.close()
            self._handle = None
        with contextlib.suppress(OSError):
            os.unlink(self._temporary)


_malloc_tuned = False


def keep_freed_memory() -> None:
    """Ask glibc's allocator to reuse freed megabyte blocks rather than hand them back to
    the system: each chunk a scan reads is a fresh 1 MB blob, and without this every one
    is mapped anew and faulted in page by page (~28 ms of a 90k-vector scan's ~55 ms in a
    new process). Elsewhere (another C library) this does nothing."""
    global _malloc_tuned
    if _malloc_tuned:
        return
    _malloc_tuned = True
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        mallopt = ctypes.CDLL("libc.so.6").mallopt
        mallopt(_M_MMAP_THRESHOLD, 8 << 20)
        mallopt(_M_TRIM_THRESHOLD, 64 << 20)
    except (OSError, AttributeError):  # not glibc
        return


_M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters
_M_MMAP_THRESHOLD = -3
