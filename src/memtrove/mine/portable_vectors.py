"""Fragment vectors carried in an export (``memtrove export --vectors``), written back by
``memtrove import``: each one checked against the header's embedding space, its size and
its fragment, then stored with its ``content_vectors`` row."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memtrove.db.connection import Connection
from memtrove.errors import PortableFormatError
from memtrove.mine.portable import decode_value

__all__ = ["VectorWriter"]

# The text fields of a vector record (with ``seq`` and ``vector``), as content_vectors has them.
_FIELDS = ("hash", "model", "fragment_type", "fragment_label", "embed_input_fp", "embedded_at")


def _fail(number: int, message: str) -> PortableFormatError:
    return PortableFormatError(f"line {number}: {message}")


class VectorWriter:
    """The vectors of one import (inside its transaction)."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.space: Any = None  # the header's embedding_space
        self.next_vector: int | None = None  # the last content_vectors id given

    def add(self, number: int, record: dict[str, Any], renamed: Mapping[str, str]) -> bool:
        """Store one fragment vector (``export --vectors``) when the vault's embedding space
        is the file's (or the vault has none yet) and its fragment arrived; False when it
        was left out (its body was redacted here, or the vault has that vector already)."""
        space = self.space
        if not isinstance(space, dict) or not isinstance(space.get("dimensions"), int):
            raise _fail(number, "a vector, but the header names no embedding_space")
        identity, dimensions = str(space.get("identity")), int(space["dimensions"])
        if self.next_vector is None:
            from memtrove.retrieval.vectors import set_space, stored_space

            stored = stored_space(self.connection)
            if stored is None:
                set_space(self.connection, identity, dimensions)
            elif (stored.identity, stored.dimensions) != (identity, dimensions):
                raise _fail(
                    number,
                    f"the file's vectors come from {identity} ({dimensions}-d), this vault's "
                    f"from {stored}; import without them (re-export without --vectors)",
                )
            self.next_vector = int(
                self.connection.execute(
                    "SELECT COALESCE(MAX(id), 0) FROM content_vectors"
                ).fetchone()[0]
            )
        if not all(isinstance(record.get(name), str) for name in _FIELDS) or not isinstance(
            record.get("seq"), int
        ):
            raise _fail(number, "a vector record without its fragment's hash, seq and model")
        try:
            vector = decode_value(record.get("vector"))
        except ValueError as error:
            raise _fail(number, f"vectors: {error}") from None
        if not isinstance(vector, bytes) or len(vector) != dimensions * 4:
            raise _fail(number, f"a vector that is not {dimensions} float32 values")
        body_hash, seq = str(record["hash"]), int(record["seq"])
        if body_hash in renamed:
            return False  # its body was redacted here: the vector is of another text
        fragment = self.connection.execute(
            "SELECT 1 FROM fragments WHERE hash = ? AND seq = ?", (body_hash, seq)
        ).fetchone()
        if fragment is None:
            raise _fail(number, f"a vector of a fragment the file does not hold ({body_hash[:12]})")
        taken = self.connection.execute(
            "SELECT 1 FROM content_vectors WHERE hash = ? AND seq = ?", (body_hash, seq)
        ).fetchone()
        if taken is not None:
            return False  # merging: the vault has this fragment's vector already
        self.next_vector += 1
        self.connection.execute(
            "INSERT INTO content_vectors (id, hash, seq, model, fragment_type, fragment_label, "
            "embed_input_fp, embedded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (self.next_vector, body_hash, seq, *(record[name] for name in _FIELDS[1:])),
        )
        self.connection.vectors.insert([(self.next_vector, vector)])
        return True

    def synced(self) -> None:
        """Mark embedded the active documents whose every fragment now has its vector."""
        self.connection.execute(
            "UPDATE documents SET embed_state = 'synced', embed_attempts = 0, embed_error = NULL "
            "WHERE active = 1 AND embed_state != 'synced' "
            "AND EXISTS (SELECT 1 FROM fragments f WHERE f.hash = documents.hash) "
            "AND NOT EXISTS (SELECT 1 FROM fragments f WHERE f.hash = documents.hash AND NOT "
            "EXISTS (SELECT 1 FROM content_vectors v WHERE v.hash = f.hash AND v.seq = f.seq))"
        )
