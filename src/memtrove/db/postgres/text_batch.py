"""One flush of the PostgreSQL text index (:mod:`memtrove.db.postgres.text_store`), built
at once and sent in ``COPY``'s binary format.

A buffered row keeps its tokens as numbers (:class:`~memtrove.db.text_tokens.TermNumbers`:
each distinct word is tokenized once per flush), or comes tokenized from the indexer's
helper process (:func:`~memtrove.db.text_tokens.tokenized_rows`) and is renumbered here. At the
flush numpy sorts every token of the batch into the segment's postings (one row per term:
its rows in id order, their hits in each column, their lengths, their positions) and lays
the arrays' elements out in the binary format, so neither this process formats a number
as text nor the server parses one.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Iterator, Sequence

import numpy as np

from memtrove.db.postgres.text_sql import storable
from memtrove.db.text_tokens import TermNumbers, Tokenized

__all__ = ["Batch", "copies"]

_SIGNATURE = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
_TRAILER = struct.pack(">h", -1)
_INT4, _INT8 = 23, 20  # the arrays' element types (pg_type oids)
_EL4 = np.dtype([("size", ">i4"), ("value", ">i4")])
_EL8 = np.dtype([("size", ">i4"), ("value", ">i8")])
_CHUNK = 1 << 20  # bytes handed to the driver at a time (the server reads while we build)


class Batch:
    """The rows of one index buffered for its next segment."""

    __slots__ = ("_remap", "columns", "doc_ids", "numbers", "sizes", "stream", "totals")

    def __init__(self, columns: int) -> None:
        self.columns = columns
        self.doc_ids: list[int] = []
        self.sizes = array("q")  # tokens in each column of each row, row after row
        self.stream = array("i")  # each token's term number, row after row, column by column
        self.numbers = TermNumbers(storable)
        self.totals = [0] * (columns + 1)  # rows, then tokens per column
        self._remap: tuple[list[str], int, np.ndarray] | None = None  # the last terms' numbers

    def __len__(self) -> int:
        return len(self.doc_ids)

    def add(self, doc_id: int, texts: Sequence[str]) -> None:
        if len(texts) != self.columns:
            raise ValueError(f"a row of this index has {self.columns} columns")
        totals = self.totals
        for col, text in enumerate(texts):
            numbers = self.numbers.of(text)
            self.stream.extend(numbers)
            self.sizes.append(len(numbers))
            totals[col + 1] += len(numbers)
        totals[0] += 1
        self.doc_ids.append(int(doc_id))

    def add_tokenized(self, doc_id: int, row: Tokenized) -> bool:
        """Add a row another process tokenized (:func:`tokenized_rows` of the texts :meth:`add`
        would get); False, and nothing added, when ``row`` does not fit this index."""
        local = np.frombuffer(row.numbers, dtype=np.intc)
        if (
            len(row.sizes) != self.columns
            or sum(row.sizes) != len(local)
            or (len(local) and not 0 <= int(local.min()) <= int(local.max()) < len(row.terms))
        ):
            return False
        remap = self._numbers_of(row.terms)
        self.stream.frombytes(remap[local].tobytes())
        self.sizes.extend(row.sizes)
        for col, size in enumerate(row.sizes):
            self.totals[col + 1] += size
        self.totals[0] += 1
        self.doc_ids.append(int(doc_id))
        return True

    def _numbers_of(self, terms: list[str]) -> np.ndarray:
        """This batch's number of each of ``terms`` (a list many rows may share)."""
        last = self._remap
        if last is not None and last[0] is terms and last[1] == len(terms):
            return last[2]
        remap = np.array(self.numbers.numbers(terms), dtype=np.intc)
        self._remap = (terms, len(terms), remap)
        return remap


class _Tokens:
    """Every token of a batch as arrays: term number, row, column, position."""

    def __init__(self, batch: Batch) -> None:
        cols = batch.columns
        self.rows = len(batch.doc_ids)
        self.doc_ids = np.array(batch.doc_ids, dtype=np.int64)
        sizes = np.frombuffer(batch.sizes, dtype=np.int64) if batch.sizes else np.zeros(0, np.int64)
        self.sizes = sizes.reshape(self.rows, cols)
        self.term = (
            np.frombuffer(batch.stream, dtype=np.intc).astype(np.int64)
            if batch.stream
            else np.zeros(0, np.int64)
        )
        cell = np.repeat(np.arange(self.rows * cols, dtype=np.int64), sizes)
        self.row = cell // cols
        self.col = cell % cols
        starts = np.cumsum(sizes) - sizes
        self.pos = np.arange(len(self.term), dtype=np.int64) - np.repeat(starts, sizes)
        self.words = [
            struct.pack(">i", len(raw)) + raw for raw in (t.encode() for t in batch.numbers.terms)
        ]  # each term as a field (and as an element of a text array): size, UTF-8


def _elements(values: np.ndarray, dtype: np.dtype) -> bytes:
    out = np.empty(len(values), dtype=dtype)
    out["size"] = dtype["value"].itemsize
    out["value"] = values
    return out.tobytes()


def _array_head(oid: int, count: int, data_bytes: int) -> bytes:
    """A one-dimension array field's size and header (``count`` elements of ``data_bytes``
    in all); an empty array has no dimension."""
    if count == 0:
        return struct.pack(">iiii", 12, 0, 0, oid)
    return struct.pack(">iiiiii", 20 + data_bytes, 1, 0, oid, count, 1)


def _chunks(rows: Iterator[bytes]) -> Iterator[bytes]:
    """The binary ``COPY`` stream of ``rows``, in pieces of about :data:`_CHUNK` bytes."""
    parts = [_SIGNATURE]
    size = len(_SIGNATURE)
    for row in rows:
        parts.append(row)
        size += len(row)
        if size >= _CHUNK:
            yield b"".join(parts)
            parts, size = [], 0
    parts.append(_TRAILER)
    yield b"".join(parts)


def copies(batch: Batch, idx: int, seg: int) -> list[tuple[str, int, Iterator[bytes]]]:
    """What a flush of ``batch`` as segment ``seg`` of index ``idx`` sends: (table and
    columns, rows, the binary ``COPY`` stream) for ``text_postings`` (one row per term)
    and ``text_rows`` (one row per row)."""
    tokens = _Tokens(batch)
    return [
        (
            "text_postings (idx, term, seg, docs, c0, c1, c2, lengths, positions)",
            len(tokens.words),
            _chunks(_postings(tokens, batch.columns, idx, seg)),
        ),
        ("text_rows (idx, doc_id, seg, sizes)", len(batch), _chunks(_sizes(batch, idx, seg))),
    ]


def _postings(tokens: _Tokens, cols: int, idx: int, seg: int) -> Iterator[bytes]:
    """One row per term: its rows in id order, their hits in each column, their lengths,
    and their positions (row after row, column by column, in order: 4 bytes each)."""
    if not len(tokens.term):
        return
    rows = tokens.rows
    by_id = np.argsort(tokens.doc_ids, kind="stable")  # a term's rows go in id order
    rank = np.empty(rows, dtype=np.int64)
    rank[by_id] = np.arange(rows, dtype=np.int64)
    key = (tokens.term * rows + rank[tokens.row]) * cols + tokens.col
    order = np.argsort(key, kind="stable")  # a cell's positions stay in order
    key = key[order]
    positions = tokens.pos[order].astype(">i4").tobytes()
    first = np.r_[True, key[1:] != key[:-1]]
    cells = key[first]
    hits = np.diff(np.r_[np.flatnonzero(first), len(key)])
    pairs = cells // cols  # (term, row) of each (term, row, column)
    new = np.ones(len(pairs), dtype=bool)
    new[1:] = pairs[1:] != pairs[:-1]
    counts = np.zeros((int(new.sum()), 3), dtype=np.int64)
    counts[np.cumsum(new) - 1, cells % cols] = hits
    pairs = pairs[new]
    terms = pairs // rows
    ranked = pairs % rows
    docs = _elements(tokens.doc_ids[by_id][ranked], _EL8)
    lengths = _elements(tokens.sizes.sum(axis=1)[by_id][ranked], _EL4)
    c0, c1, c2 = (_elements(counts[:, col], _EL4) for col in range(3))
    firsts = np.flatnonzero(np.r_[True, terms[1:] != terms[:-1]])
    ends = np.r_[firsts[1:], len(terms)].tolist()
    # where each term's positions start and end, in bytes
    bounds = np.r_[terms[firsts], len(tokens.words)]
    spans = np.asarray(np.searchsorted(key // (rows * cols), bounds))
    span_list = [4 * int(at) for at in spans.tolist()]
    head = struct.pack(">hih", 9, 2, idx)
    seg_field = struct.pack(">iq", 8, seg)
    heads: dict[int, tuple[bytes, bytes]] = {}  # by entries: the arrays' headers
    words = tokens.words
    rows_of = zip(terms[firsts].tolist(), firsts.tolist(), ends, strict=True)
    for number, (term, start, end) in enumerate(rows_of):
        count = end - start
        known = heads.get(count)
        if known is None:
            known = heads[count] = (
                _array_head(_INT8, count, 12 * count),
                _array_head(_INT4, count, 8 * count),
            )
        eight, four = known
        a, b = 8 * start, 8 * end
        p0, p1 = span_list[number], span_list[number + 1]
        yield b"".join(
            (
                head,
                words[term],
                seg_field,
                eight,
                docs[12 * start : 12 * end],
                four,
                c0[a:b],
                four,
                c1[a:b],
                four,
                c2[a:b],
                four,
                lengths[a:b],
                struct.pack(">i", p1 - p0),
                positions[p0:p1],
            )
        )


def _sizes(batch: Batch, idx: int, seg: int) -> Iterator[bytes]:
    """Each row's tokens per column."""
    cols = batch.columns
    sizes = _elements(np.frombuffer(batch.sizes, dtype=np.int64), _EL4) if batch.sizes else b""
    head = _array_head(_INT4, cols, 8 * cols)
    seg_field = struct.pack(">iq", 8, seg)
    for number, doc_id in enumerate(batch.doc_ids):
        yield (
            struct.pack(">hihiq", 4, 2, idx, 8, doc_id)
            + seg_field
            + head
            + sizes[8 * cols * number : 8 * cols * (number + 1)]
        )
