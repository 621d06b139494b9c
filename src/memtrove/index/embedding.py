"""The embedding job: give every fragment of every active document a vector.

Incremental and resumable: documents carry an embed state (pending / synced / failed) and a
count of attempts; each batch of bodies commits with its vectors, so an interrupted run loses
at most one batch and the next run carries on. Bodies are embedded once per content hash,
however many documents share them. A lease (``embedding``) keeps two processes from embedding
the same vault at once.

A model other than the one that made the stored vectors is refused; ``force`` first proves
the new model answers, then clears every vector and re-embeds everything with it.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from memtrove.db.connection import Connection, write_transaction
from memtrove.errors import ModelResponseError, ModelUnavailableError
from memtrove.lifecycle.leases import Lease
from memtrove.models.protocols import Embedder
from memtrove.retrieval.vectors import (
    check_space,
    clear_vectors,
    format_document_input,
    insert_vectors,
    set_space,
)

__all__ = ["MAX_ATTEMPTS", "EmbedProgress", "EmbedReport", "embed_pending", "pending_counts"]

MAX_ATTEMPTS = 3
BATCH_FRAGMENTS = 512
_MAX_FAILED_BATCHES = 3

EmbedProgress = Callable[[int, int], None]
"""Called with (fragments done, fragments to do) after each batch."""


@dataclass
class EmbedReport:
    """What one embed run did."""

    space: str = ""
    documents: int = 0
    fragments: int = 0
    failed_documents: int = 0
    skipped_documents: int = 0
    forced: bool = False
    errors: list[str] = field(default_factory=list)
    elapsed_seconds: float = 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "space": self.space,
            "documents": self.documents,
            "fragments": self.fragments,
            "failed_documents": self.failed_documents,
            "skipped_documents": self.skipped_documents,
            "forced": self.forced,
            "errors": list(self.errors),
            "elapsed_seconds": round(self.elapsed_seconds, 3),
        }


def pending_counts(connection: Connection) -> tuple[int, int]:
    """(documents needing vectors, fragments needing vectors) among active documents."""
    docs = connection.execute(
        "SELECT COUNT(*) FROM documents WHERE active = 1 AND embed_state != 'synced' "
        "AND embed_attempts < ?",
        (MAX_ATTEMPTS,),
    ).fetchone()[0]
    fragments = connection.execute(
        "SELECT COUNT(*) FROM fragments f WHERE f.hash IN (SELECT hash FROM documents "
        "WHERE active = 1 AND embed_state != 'synced' AND embed_attempts < ?) "
        "AND NOT EXISTS (SELECT 1 FROM content_vectors cv WHERE cv.hash = f.hash "
        "AND cv.seq = f.seq)",
        (MAX_ATTEMPTS,),
    ).fetchone()[0]
    return int(docs), int(fragments)


def embed_pending(
    connection: Connection,
    embedder: Embedder,
    *,
    force: bool = False,
    progress: EmbedProgress | None = None,
    batch_fragments: int = BATCH_FRAGMENTS,
) -> EmbedReport:
    """Embed what is pending (everything with ``force``); return what was done."""
    started = time.monotonic()
    report = EmbedReport(forced=force)
    dimensions = embedder.dimensions
    identity = embedder.identity
    report.space = f"{identity} ({dimensions}-d)"
    if force:
        _probe(embedder, dimensions)
    else:
        check_space(connection, identity, dimensions)
    with Lease.acquire(connection, "embedding") as lease:
        with write_transaction(connection):
            if force:
                clear_vectors(connection)
            set_space(connection, identity, dimensions)
        _, total = pending_counts(connection)
        done = 0
        failed_batches = 0
        if progress:
            progress(0, total)
        for hashes in _pending_batches(connection, batch_fragments):
            try:
                count = _embed_hashes(connection, embedder, hashes, lease, report)
                failed_batches = 0
            except ModelUnavailableError as error:
                _record_failure(connection, hashes, str(error), report)
                report.errors.append(str(error))
                raise
            except ModelResponseError as error:
                _record_failure(connection, hashes, str(error), report)
                report.errors.append(str(error))
                failed_batches += 1
                if failed_batches >= _MAX_FAILED_BATCHES:
                    raise
                continue
            done += count
            if progress:
                progress(min(done, total), total)
        report.fragments = done
        report.skipped_documents = int(
            connection.execute(
                "SELECT COUNT(*) FROM documents WHERE active = 1 AND embed_state = 'failed' "
                "AND embed_attempts >= ?",
                (MAX_ATTEMPTS,),
            ).fetchone()[0]
        )
    report.elapsed_seconds = time.monotonic() - started
    return report


def _probe(embedder: Embedder, dimensions: int) -> None:
    vectors = embedder.embed_documents(["memtrove embedding probe"])
    if vectors.shape != (1, dimensions):
        raise ModelResponseError(
            f"the embedder returned a vector of shape {vectors.shape}, expected (1, {dimensions})"
        )


def _pending_batches(connection: Connection, batch_fragments: int) -> list[list[str]]:
    """Pending content hashes grouped so each group has about ``batch_fragments`` fragments."""
    rows = connection.execute(
        "SELECT d.hash, (SELECT COUNT(*) FROM fragments f WHERE f.hash = d.hash) "
        "FROM documents d WHERE d.active = 1 AND d.embed_state != 'synced' "
        "AND d.embed_attempts < ? GROUP BY d.hash ORDER BY MIN(d.id)",
        (MAX_ATTEMPTS,),
    ).fetchall()
    batches: list[list[str]] = []
    current: list[str] = []
    size = 0
    for body_hash, count in rows:
        current.append(str(body_hash))
        size += int(count)
        if size >= batch_fragments:
            batches.append(current)
            current, size = [], 0
    if current:
        batches.append(current)
    return batches


def _embed_hashes(
    connection: Connection,
    embedder: Embedder,
    hashes: Sequence[str],
    lease: Lease,
    report: EmbedReport,
) -> int:
    placeholders = ",".join("?" * len(hashes))
    rows = connection.execute(
        "SELECT f.hash, f.seq, f.fragment_type, f.label, "
        "substr(c.doc, f.start_offset + 1, f.end_offset - f.start_offset), "
        "(SELECT title FROM documents d WHERE d.hash = f.hash ORDER BY d.active DESC, d.id "
        "LIMIT 1) "
        "FROM fragments f JOIN content c ON c.hash = f.hash "
        f"WHERE f.hash IN ({placeholders}) AND NOT EXISTS (SELECT 1 FROM content_vectors cv "
        "WHERE cv.hash = f.hash AND cv.seq = f.seq) ORDER BY f.hash, f.seq",
        list(hashes),
    ).fetchall()
    inputs = [format_document_input(embedder, str(r[3] or r[5] or ""), str(r[4])) for r in rows]
    vectors = embedder.embed_documents(inputs) if inputs else np.zeros((0, 0), np.float32)
    if len(inputs) and vectors.shape != (len(inputs), embedder.dimensions):
        raise ModelResponseError(
            f"the embedder returned vectors of shape {vectors.shape}, "
            f"expected ({len(inputs)}, {embedder.dimensions})"
        )
    fragment_rows = [
        (str(r[0]), int(r[1]), str(r[2]), str(r[3] or ""), _fingerprint(text))
        for r, text in zip(rows, inputs, strict=True)
    ]
    with write_transaction(connection):
        lease.renew()
        insert_vectors(connection, fragment_rows, vectors, embedder.identity)
        cursor = connection.execute(
            "UPDATE documents SET embed_state = 'synced', embed_error = NULL "
            f"WHERE hash IN ({placeholders}) AND active = 1",
            list(hashes),
        )
        report.documents += cursor.rowcount
    return len(inputs)


def _record_failure(
    connection: Connection, hashes: Sequence[str], message: str, report: EmbedReport
) -> None:
    placeholders = ",".join("?" * len(hashes))
    with write_transaction(connection):
        cursor = connection.execute(
            "UPDATE documents SET embed_state = 'failed', embed_attempts = embed_attempts + 1, "
            f"embed_error = ? WHERE hash IN ({placeholders}) AND active = 1",
            [message[:500], *hashes],
        )
        report.failed_documents += cursor.rowcount


def _fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
