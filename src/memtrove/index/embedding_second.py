"""The second space's embedding job: a vector per fragment from the second embedder
(``MEMTROVE_EMBED_SECOND``), after the first space's.

Resumable like the first: what is pending is every fragment of an active document without a
second-space vector, embedded in small batches that each commit with their vectors (the
transformer embeds ~8 fragments a second on one core, so an interrupted run loses seconds).
Bodies shared by several documents are embedded once. A lease (``embedding-second``) keeps
two processes from doing the same work; another model's vectors are refused unless
``force`` clears them first.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from memtrove.db.connection import Connection, write_transaction
from memtrove.errors import ModelResponseError
from memtrove.index.embedding import EmbedProgress
from memtrove.lifecycle.leases import Lease
from memtrove.models.protocols import Embedder
from memtrove.retrieval.second_space import (
    PENDING_FRAGMENTS,
    check_second_space,
    clear_second,
    insert_second,
    second_count,
    set_second_space,
)
from memtrove.retrieval.vectors import format_document_input

__all__ = ["SecondReport", "embed_second"]

BATCH_FRAGMENTS = 32
# The transformer reads at most 256 word pieces (~1,200 characters of prose); tokenising a
# whole long fragment only to truncate it costs time for nothing.
MAX_INPUT_CHARS = 3000


@dataclass
class SecondReport:
    """What one run of the second space's job did."""

    space: str = ""
    fragments: int = 0
    elapsed_seconds: float = 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "space": self.space,
            "fragments": self.fragments,
            "elapsed_seconds": round(self.elapsed_seconds, 3),
        }


def embed_second(
    connection: Connection,
    embedder: Embedder,
    *,
    force: bool = False,
    progress: EmbedProgress | None = None,
    batch_fragments: int = BATCH_FRAGMENTS,
    lock: AbstractContextManager[object] | None = None,
) -> SecondReport:
    """Embed every pending fragment into the second space (everything with ``force``).

    ``lock`` (the vault's) is held only while the connection is used, never while the model
    computes: a served vault keeps answering during a run that may take minutes."""
    started = time.monotonic()
    guard = lock or contextlib.nullcontext()
    identity, dimensions = embedder.identity, embedder.dimensions
    report = SecondReport(space=f"{identity} ({dimensions}-d)")
    with guard:
        if not force and second_count(connection) > 0:
            check_second_space(connection, identity, dimensions)
        lease = Lease.acquire(connection, "embedding-second")
    try:
        with guard:
            with write_transaction(connection):
                if force or second_count(connection) == 0:
                    clear_second(connection)
                if force or check_second_space(connection, identity, dimensions) is None:
                    set_second_space(connection, identity, dimensions)
            keys = connection.execute(
                f"SELECT f.hash, f.seq {PENDING_FRAGMENTS} ORDER BY f.hash, f.seq"
            ).fetchall()
        total = len(keys)
        if progress:
            progress(0, total)
        for start in range(0, total, batch_fragments):
            batch = [(str(h), int(s)) for h, s in keys[start : start + batch_fragments]]
            with guard:
                inputs = _inputs(connection, embedder, batch)
            vectors = embedder.embed_documents(inputs)
            if vectors.shape != (len(batch), dimensions):
                raise ModelResponseError(
                    f"the second embedder returned vectors of shape {vectors.shape}, "
                    f"expected ({len(batch)}, {dimensions})"
                )
            with guard, write_transaction(connection):
                lease.renew()
                insert_second(connection, batch, vectors)  # a body gone meanwhile: harmless
            report.fragments += len(batch)
            if progress:
                progress(report.fragments, total)
    finally:
        with guard:
            lease.release()
    report.elapsed_seconds = time.monotonic() - started
    return report


def _inputs(
    connection: Connection, embedder: Embedder, keys: Sequence[tuple[str, int]]
) -> list[str]:
    """Each fragment's text as the embedder reads it (label or title, then the text)."""
    hashes = sorted({h for h, _ in keys})
    marks = ",".join("?" * len(hashes))
    bodies = {
        str(h): str(doc)
        for h, doc in connection.execute(
            f"SELECT hash, doc FROM content WHERE hash IN ({marks})", hashes
        )
    }
    titles = {
        str(h): str(t or "")
        for h, t in connection.execute(
            f"SELECT hash, MIN(title) FROM documents WHERE hash IN ({marks}) AND active = 1 "
            "GROUP BY hash",
            hashes,
        )
    }
    spans: dict[tuple[str, int], Any] = {
        (str(r[0]), int(r[1])): r
        for r in connection.execute(
            "SELECT hash, seq, label, start_offset, end_offset FROM fragments "
            f"WHERE hash IN ({marks})",
            hashes,
        )
    }
    texts: list[str] = []
    for key in keys:
        row = spans.get(key)
        body = bodies.get(key[0], "")
        text = body[int(row[3]) : int(row[4])] if row is not None else ""
        label = str(row[2] or "") if row is not None else ""
        texts.append(
            format_document_input(embedder, label or titles.get(key[0], ""), text)[:MAX_INPUT_CHARS]
        )
    return texts
