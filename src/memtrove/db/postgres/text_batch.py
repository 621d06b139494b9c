"""One flush of the PostgreSQL text index (:mod:`memtrove.db.postgres.text_store`), built
at once and sent in ``COPY``'s binary format.

A buffered row keeps its tokens as numbers (:class:`~memtrove.db.text_tokens.TermNumbers`:
each distinct word is tokenized once per flush), or comes tokenized from the indexer's
helper process (:func:`~memtrove.db.text_tokens.tokenized`) and is renumbered here. At the
flush numpy sorts every token of the batch into the segment's postings (one row per term:
its rows in id order, their hits in each column, their lengths) and each row's places (its
terms in order of first appearance, their hits per column, where each term's positions
start, the positions), and lays the arrays' elements out in the binary format, so neither
this process formats a number as text nor the server parses one. The rows hold what the
text format held, value for value.
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
_INT4, _INT8, _TEXT = 23, 20, 25  # the arrays' element types (pg_type oids)
_EL4 = np.dtype([("size", ">i4"), ("value", ">i4")])
_EL8 = np.dtype([("size", ">i4"), ("value", ">i8")])
_CHUNK = 1 << 20  # bytes handed to the driver at a time (the server reads while we build)


class Batch:
    """The rows of one index buffered for its next segment."""

    __slots__ = ("columns", "doc_ids", "numbers", "sizes", "stream", "totals")

    def __init__(self, columns: int) -> None:
        self.columns = columns
        self.doc_ids: list[int] = []
        self.sizes = array("q")  # tokens in each column of each row, row after row
        self.stream = array("i")  # each token's term number, row after row, column by column
        self.numbers = TermNumbers(storable)
        self.totals = [0] * (columns + 1)  # rows, then tokens per column

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
        """Add a row another process tokenized (:func:`tokenized` of the texts :meth:`add`
        would get); False, and nothing added, when ``row`` does not fit this index."""
        local = np.frombuffer(row.numbers, dtype=np.intc)
        if (
            len(row.sizes) != self.columns
            or sum(row.sizes) != len(local)
            or (len(local) and not 0 <= int(local.min()) <= int(local.max()) < len(row.terms))
        ):
            return False
        remap = np.fromiter(map(self.numbers.tokens.__getitem__, row.terms), dtype=np.intc)
        self.stream.frombytes(remap[local].tobytes())
        self.sizes.extend(row.sizes)
        for col, size in enumerate(row.sizes):
            self.totals[col + 1] += size
        self.totals[0] += 1
        self.doc_ids.append(int(doc_id))
        return True


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
    columns, rows, the binary ``COPY`` stream) for ``text_postings`` (one row per term),
    ``text_rows`` and ``text_places`` (one row per row)."""
    tokens = _Tokens(batch)
    return [
        (
            "text_postings (idx, term, seg, docs, c0, c1, c2, lengths)",
            len(tokens.words),
            _chunks(_postings(tokens, batch.columns, idx, seg)),
        ),
        ("text_rows (idx, doc_id, seg, sizes)", len(batch), _chunks(_sizes(batch, idx, seg))),
        (
            "text_places (idx, doc_id, terms, counts, starts, positions)",
            len(batch),
            _chunks(_places(tokens, batch, idx)),
        ),
    ]


def _postings(tokens: _Tokens, cols: int, idx: int, seg: int) -> Iterator[bytes]:
    """One row per term: its rows in id order, their hits in each column, their lengths."""
    if not len(tokens.term):
        return
    rows = tokens.rows
    by_id = np.argsort(tokens.doc_ids, kind="stable")  # a term's rows go in id order
    rank = np.empty(rows, dtype=np.int64)
    rank[by_id] = np.arange(rows, dtype=np.int64)
    cells, hits = np.unique(
        (tokens.term * rows + rank[tokens.row]) * cols + tokens.col, return_counts=True
    )
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
    head = struct.pack(">hih", 8, 2, idx)
    seg_field = struct.pack(">iq", 8, seg)
    words = tokens.words
    for term, start, end in zip(terms[firsts].tolist(), firsts.tolist(), ends, strict=True):
        count = end - start
        four = _array_head(_INT4, count, 8 * count)
        a, b = 8 * start, 8 * end
        yield b"".join(
            (
                head,
                words[term],
                seg_field,
                _array_head(_INT8, count, 12 * count),
                docs[12 * start : 12 * end],
                four,
                c0[a:b],
                four,
                c1[a:b],
                four,
                c2[a:b],
                four,
                lengths[a:b],
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


def _places(tokens: _Tokens, batch: Batch, idx: int) -> Iterator[bytes]:
    """Each row's terms in order of first appearance (column by column), their hits in
    each column, where each one's positions start, and the positions (each term's, column
    by column, in order)."""
    cols = batch.columns
    rows = tokens.rows
    vocabulary = max(len(tokens.words), 1)
    groups, first_at, inverse = np.unique(
        tokens.row * vocabulary + tokens.term, return_index=True, return_inverse=True
    )
    by_first = np.argsort(first_at, kind="stable")  # (row, term) groups as first seen
    rank = np.empty(len(groups), dtype=np.int64)
    rank[by_first] = np.arange(len(groups), dtype=np.int64)
    group = rank[inverse.reshape(-1)]
    positions = _elements(tokens.pos[np.argsort(group, kind="stable")], _EL4)
    per_cell = np.bincount(group * cols + tokens.col, minlength=len(groups) * cols)
    counts = _elements(per_cell, _EL4)
    group_terms = (groups % vocabulary)[by_first]
    group_rows = (groups // vocabulary)[by_first]
    ends = np.r_[0, np.cumsum(per_cell.reshape(-1, cols).sum(axis=1))]  # tokens before a group
    bounds = np.searchsorted(group_rows, np.arange(rows + 1)).tolist()  # each row's groups
    # each row's starts: its groups' first tokens, then its end, from 0
    spans = np.diff(bounds) + 1
    base = np.repeat(np.asarray(bounds[:-1], dtype=np.int64), spans)
    within = np.arange(int(spans.sum()), dtype=np.int64) - np.repeat(
        np.cumsum(spans) - spans, spans
    )
    starts = _elements(ends[base + within] - ends[base], _EL4)
    words = tokens.words
    term_list = group_terms.tolist()
    ends_list = ends.tolist()
    at = 0  # where the row's starts begin
    for number, doc_id in enumerate(batch.doc_ids):
        first, last = bounds[number], bounds[number + 1]
        count = last - first
        names = b"".join([words[term] for term in term_list[first:last]])
        p0, p1 = ends_list[first], ends_list[last]
        yield b"".join(
            (
                struct.pack(">hihiq", 6, 2, idx, 8, doc_id),
                _array_head(_TEXT, count, len(names)),
                names,
                _array_head(_INT4, count * cols, 8 * count * cols),
                counts[8 * cols * first : 8 * cols * last],
                _array_head(_INT4, count + 1, 8 * (count + 1)),
                starts[8 * at : 8 * (at + count + 1)],
                _array_head(_INT4, p1 - p0, 8 * (p1 - p0)),
                positions[8 * p0 : 8 * p1],
            )
        )
        at += count + 1
