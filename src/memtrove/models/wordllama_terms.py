"""WordLlama token ids and rows for a query's words, without loading the model.

A one-shot ``vsearch`` or ``query`` embeds a handful of words. Loading the Rust tokenizer
(its 1.8 MB JSON) and the whole 16 MB embedding table costs such a process ~80 ms, more than
the search. This module tokenizes words itself, exactly as the bundled tokenizer does
(SentencePiece-style BPE: ``▁`` before the word, characters, merges by rank, bytes for
characters outside the vocabulary), looking the vocabulary and the merge ranks up in a small
SQLite file built once from the tokenizer's JSON and kept in the cache folder, and reads only
the table rows it needs from the weights file.

Anything unexpected (no cache folder, a file that cannot be read or built, a word holding
one of the tokenizer's special tokens) answers None, and the caller uses the real tokenizer.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import threading
from itertools import pairwise
from pathlib import Path
from typing import Any

from memtrove.text import sha256_hex

__all__ = ["TableRows", "TermTokenizer", "bpe"]

FORMAT = 1  # bumped when the cache file's layout changes
_SPACE = "\u2581"  # SentencePiece's word marker, what the tokenizer's normalizer writes
_SPECIAL = "<"  # every special token starts with it; such words go to the real tokenizer


def bpe(
    word: str,
    vocabulary: Any,
    ranks: Any,
) -> list[int] | None:
    """Token ids of ``word`` as the bundled tokenizer encodes it (no special tokens).

    ``vocabulary(pieces)`` maps the given pieces to their ids (missing pieces left out);
    ``ranks(pairs)`` maps ``"left right"`` merge keys to their rank (missing left out).
    None when a byte has no token (the real tokenizer would answer ``<unk>``).
    """
    text = _SPACE + word.replace(" ", _SPACE)
    symbols = list(text)
    known = vocabulary(set(symbols))
    pieces: list[str] = []
    for symbol in symbols:
        if symbol in known:
            pieces.append(symbol)
            continue
        for byte in symbol.encode("utf-8", "surrogatepass"):
            pieces.append(f"<0x{byte:02X}>")  # byte fallback: these pieces never merge
    while len(pieces) > 1:
        pairs = {f"{a} {b}" for a, b in pairwise(pieces)}
        found = ranks(pairs)
        if not found:
            break
        best = min(found, key=found.__getitem__)
        left, right = best.split(" ", 1)
        merged: list[str] = []
        position = 0
        while position < len(pieces):
            if (
                position + 1 < len(pieces)
                and pieces[position] == left
                and pieces[position + 1] == right
            ):
                merged.append(left + right)
                position += 2
            else:
                merged.append(pieces[position])
                position += 1
        pieces = merged
    ids = vocabulary(set(pieces))
    if any(piece not in ids for piece in pieces):
        return None
    return [ids[piece] for piece in pieces]


class TermTokenizer:
    """The bundled tokenizer's BPE over a cached SQLite copy of its vocabulary and merges."""

    def __init__(self, tokenizer_json: Path, cache_folder: str | None) -> None:
        self._source = tokenizer_json
        self._folder = cache_folder
        self._connection: Any = None
        self._failed = False
        self._lock = threading.Lock()

    def ids(self, word: str) -> list[int] | None:
        """The word's token ids, or None when the real tokenizer must answer."""
        if not word or _SPECIAL in word:
            return None
        with self._lock:
            connection = self._open()
            if connection is None:
                return None
            try:
                return bpe(
                    word,
                    lambda pieces: _lookup(connection, "pieces", pieces),
                    lambda pairs: _lookup(connection, "merges", pairs),
                )
            except Exception:  # a damaged cache file: stop using it
                self._failed = True
                return None

    def _open(self) -> Any:
        if self._connection is not None or self._failed:
            return self._connection
        try:
            self._connection = _connect(self._cache_file())
        except Exception:  # no cache folder, a file that cannot be read or built
            self._failed = True
        return self._connection

    def _cache_file(self) -> Path:
        if not self._folder:
            raise FileNotFoundError("no cache folder")
        stat = self._source.stat()
        key = sha256_hex(
            f"{FORMAT}\0{self._source.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}".encode(
                "utf-8", "surrogatepass"
            )
        )[:24]
        target = Path(self._folder) / "models" / f"wordllama-tokens-{key}.sqlite"
        if not target.exists():
            _build(self._source, target)
        return target


def _connect(path: Path) -> Any:
    import sqlean

    connection = sqlean.connect(f"{path.as_uri()}?mode=ro", uri=True, check_same_thread=False)
    try:
        connection.execute("SELECT piece FROM pieces LIMIT 1").fetchall()
        connection.execute("SELECT pair FROM merges LIMIT 1").fetchall()
    except Exception:
        connection.close()
        raise
    return connection


def _lookup(connection: Any, table: str, keys: set[str]) -> dict[str, int]:
    if not keys:
        return {}
    column = "piece" if table == "pieces" else "pair"
    marks = ",".join("?" * len(keys))
    rows = connection.execute(
        f"SELECT {column}, value FROM {table} WHERE {column} IN ({marks})", tuple(keys)
    ).fetchall()
    return {str(key): int(value) for key, value in rows}


def _build(source: Path, target: Path) -> None:
    """Write the vocabulary and the merge ranks of ``source`` to ``target`` (atomically:
    a temporary file renamed into place, so a concurrent reader never sees half a file)."""
    import sqlean

    model = json.loads(source.read_text(encoding="utf-8"))["model"]
    if model.get("type") != "BPE" or not model.get("byte_fallback"):
        raise ValueError("not the byte-fallback BPE tokenizer this module reproduces")
    vocabulary = model["vocab"]
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        connection = sqlean.connect(str(temporary))
        try:
            connection.execute("CREATE TABLE pieces (piece TEXT PRIMARY KEY, value INTEGER)")
            connection.execute("CREATE TABLE merges (pair TEXT PRIMARY KEY, value INTEGER)")
            connection.executemany(
                "INSERT INTO pieces VALUES (?, ?)",
                ((str(piece), int(index)) for piece, index in vocabulary.items()),
            )
            connection.executemany(
                "INSERT INTO merges VALUES (?, ?) ON CONFLICT (pair) DO NOTHING",
                ((pair, rank) for rank, pair in enumerate(merges)),
            )
            connection.commit()
        finally:
            connection.close()
        os.replace(temporary, target)
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink()


class TableRows:
    """Rows of a safetensors embedding table read one by one (float16 bytes), not the
    whole table."""

    def __init__(self, path: Path, tensor: str) -> None:
        with path.open("rb") as handle:
            (length,) = struct.unpack("<Q", handle.read(8))
            if not 0 < length < 1 << 24:
                raise ValueError("not a safetensors file")
            header = json.loads(handle.read(length))
        entry = header[tensor]
        if entry.get("dtype") != "F16" or len(entry.get("shape", ())) != 2:
            raise ValueError(f"{tensor} is not a float16 matrix")
        self.rows, self.width = (int(n) for n in entry["shape"])
        start, end = (int(n) for n in entry["data_offsets"])
        if end - start != self.rows * self.width * 2:
            raise ValueError(f"{tensor} does not hold its shape")
        self._path = path
        self._offset = 8 + length + start

    def read(self, ids: list[int]) -> bytes:
        """The float16 rows of ``ids`` (clipped to the table), concatenated in order."""
        size = self.width * 2
        with self._path.open("rb") as handle:
            chunks = []
            for index in ids:
                handle.seek(self._offset + min(max(index, 0), self.rows - 1) * size)
                chunks.append(handle.read(size))
        data = b"".join(chunks)
        if len(data) != size * len(ids):
            raise ValueError("the weights file is shorter than its header says")
        return data
