"""sqlite-vec's chunk tables read directly: the fast scan of every vector of ``vectors_vec``.

sqlite-vec keeps its vectors in chunks: ``vectors_vec_chunks`` holds each chunk's size,
validity bitmap and packed int64 row ids, ``vectors_vec_vector_chunks00`` its packed float32
vectors. Reading those blobs is several times faster than reading the virtual table row by
row. This version of the layout is checked as it is read; anything else raises
:class:`memtrove.db.vector_index.ScanUnavailable`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from memtrove.db.vector_index import ScanUnavailable, VectorBlock

if TYPE_CHECKING:
    from memtrove.db.engine import Connection

__all__ = ["SCAN_MMAP_BYTES", "read_chunks"]

SCAN_MMAP_BYTES = 1 << 30  # while scanning, SQLite maps up to this much of the file


def read_chunks(connection: Connection) -> Iterator[VectorBlock]:
    """sqlite-vec's chunks one at a time (validity bitmap, row ids, packed float32), as
    (row ids, vectors, which rows are valid); ScanUnavailable when they cannot be read so.
    One blob per query: a join sorted by chunk copies every blob through a sorter."""
    try:
        chunks = connection.execute(
            "SELECT chunk_id, size, validity, rowids FROM vectors_vec_chunks ORDER BY chunk_id"
        ).fetchall()
    except Exception as error:  # no such table: another layout
        raise ScanUnavailable from error
    with connection.catalog.scan_memory_map(SCAN_MMAP_BYTES):
        yield from _blocks(_with_vectors(connection, chunks))


def _with_vectors(
    connection: Connection, chunks: list[tuple[int, int, bytes, bytes]]
) -> Iterator[tuple[int, int, bytes, bytes, bytes | None]]:
    for chunk_id, size, validity, rowids in chunks:
        try:
            found = connection.execute(
                "SELECT vectors FROM vectors_vec_vector_chunks00 WHERE rowid = ?", (chunk_id,)
            ).fetchone()
        except Exception as error:
            raise ScanUnavailable from error
        yield chunk_id, size, validity, rowids, None if found is None else found[0]


def _blocks(
    chunks: Iterator[tuple[int, int, bytes, bytes, bytes | None]],
) -> Iterator[VectorBlock]:
    import numpy as np

    width = 0
    for _, size, validity, rowids, block in chunks:
        size = int(size)
        if block is None or len(validity) * 8 < size or len(rowids) < size * 8:
            raise ScanUnavailable
        if width == 0:
            width = len(block) // (size * 4) if size else 0
        if width == 0 or len(block) < size * width * 4:
            raise ScanUnavailable
        valid = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")
        matrix = np.frombuffer(block, dtype=np.float32, count=size * width)
        ids = np.frombuffer(rowids, dtype=np.int64, count=size)
        yield ids, matrix.reshape(size, width), valid[:size].astype(bool)
