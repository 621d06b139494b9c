"""The embedding job: give every fragment of every active document a vector.

Incremental and resumable: documents carry an embed state (pending / synced / failed) and a
count of attempts; each batch of bodies commits with its vectors, so an interrupted run loses
at most one batch and the next run carries on. A batch the service answers badly is retried
body by body, so only a body that fails alone costs its documents an attempt (after three,
they are given up until their text changes); an unreachable service costs none. Bodies are
embedded once per content hash, however many documents share them. A lease (``embedding``)
keeps two processes from embedding the same vault at once.

A model other than the one that made the stored vectors is refused; ``force`` first proves
the new model answers, then clears every vector and re-embeds everything with it. Before
either, the geometry canary (:mod:`memtrove.index.geometry`) checks that the embedder still
places texts where its baseline says: a failed check writes nothing and taints the vault.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memtrove.db.connection import Connection, write_transaction
from memtrove.errors import ConfigError, ModelResponseError, ModelUnavailableError
from memtrove.lifecycle.leases import Lease
from memtrove.models.protocols import Embedder, Vectors
from memtrove.retrieval.vectors import (
    check_space,
    clear_vectors,
    format_document_input,
    insert_vectors,
    set_space,
    stored_space,
    vector_count,
)

__all__ = [
    "MAX_ATTEMPTS",
    "EmbedProgress",
    "EmbedReport",
    "embed_documents",
    "embed_fragment_rows",
    "embed_pending",
    "pending_counts",
]

MAX_ATTEMPTS = 3
BATCH_FRAGMENTS = 512
# A model service answers a batch far slower than the embedded model: smaller batches renew
# the lease (60 s) often enough and lose less when interrupted.
SERVICE_BATCH_FRAGMENTS = 64
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
    canary: dict[str, object] | None = None  # the geometry canary's run (CanaryResult)
    taint: str | None = None  # why this run left the vault's geometry tainted
    elapsed_seconds: float = 0.0
    second: dict[str, object] | None = None  # the second space's run, when it is on

    def to_dict(self) -> dict[str, object]:
        extra: dict[str, object] = {} if self.second is None else {"second": self.second}
        return {
            **extra,
            "space": self.space,
            "documents": self.documents,
            "fragments": self.fragments,
            "failed_documents": self.failed_documents,
            "skipped_documents": self.skipped_documents,
            "forced": self.forced,
            "errors": list(self.errors),
            "canary": self.canary,
            "geometry_taint": self.taint,
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
    force_geometry: bool = False,
    recalibrate_canary: bool = False,
    progress: EmbedProgress | None = None,
    batch_fragments: int = BATCH_FRAGMENTS,
) -> EmbedReport:
    """Embed what is pending (everything with ``force``); return what was done.

    The geometry canary runs first; ``force_geometry`` writes vectors although it fails
    (and taints the vault), ``recalibrate_canary`` (only with ``force``) stores a new
    baseline instead of comparing with the old one.
    """
    from memtrove.index.geometry import finish, preflight

    if recalibrate_canary and not force:
        raise ConfigError(
            "recalibrating the canary re-embeds everything: use --recalibrate-canary with --force"
        )
    started = time.monotonic()
    report = EmbedReport(forced=force)
    dimensions = embedder.dimensions
    identity = embedder.identity
    report.space = f"{identity} ({dimensions}-d)"
    if force:
        _probe(embedder, dimensions)
    elif vector_count(connection) > 0:
        check_space(connection, identity, dimensions)
    if batch_fragments == BATCH_FRAGMENTS and not hasattr(embedder, "embed_spans"):
        batch_fragments = SERVICE_BATCH_FRAGMENTS
    with Lease.acquire(connection, "embedding") as lease:
        # Under the lease: a second run while one is going is refused at once, before any
        # request to the embedder.
        canary = preflight(
            connection,
            embedder,
            dimensions,
            force_geometry=force_geometry,
            recalibrate=recalibrate_canary,
        )
        report.canary = canary.to_dict()
        lease.renew()
        with write_transaction(connection):
            # A recorded space without a single vector binds nothing: start afresh.
            if force or vector_count(connection) == 0:
                clear_vectors(connection)
            # Checked again under the lease: another process may have embedded meanwhile.
            if force or check_space(connection, identity, dimensions) is None:
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
                # The service is down, not the documents: they stay pending, with no attempt
                # counted, or a few runs while the server is off would give them up for good.
                report.errors.append(str(error))
                raise
            except ModelResponseError as error:
                embedded = _embed_singly(connection, embedder, hashes, lease, report, error)
                if embedded is None:  # not one body went through: blame the service
                    failed_batches += 1
                    if failed_batches >= _MAX_FAILED_BATCHES:
                        raise
                    continue
                count, failed_batches = embedded, 0
            done += count
            if progress:
                progress(min(done, total), total)
        report.fragments = done
        report.taint = finish(
            connection,
            embedder,
            canary,
            written=done,
            force=force,
            recalibrate=recalibrate_canary,
        )
        if report.taint:
            report.errors.append(f"geometry taint: {report.taint}")
        report.skipped_documents = int(
            connection.execute(
                "SELECT COUNT(*) FROM documents WHERE active = 1 AND embed_state = 'failed' "
                "AND embed_attempts >= ?",
                (MAX_ATTEMPTS,),
            ).fetchone()[0]
        )
    report.elapsed_seconds = time.monotonic() - started
    return report


def embed_documents(
    connection: Connection,
    embedder: Embedder,
    doc_ids: Sequence[int],
    *,
    wait_seconds: float = 2.0,
) -> int:
    """Embed ``doc_ids``' pending fragments now (what a capture just wrote, so vector search
    finds it at once); the fragments embedded. Only into the vault's existing embedding
    space: a vault without vectors, or with vectors of another model, is left to ``embed``
    (0). While another process holds the embedding lease this waits up to
    ``wait_seconds`` for it, then leaves the documents pending for the next run."""
    from memtrove.errors import LeaseHeldError

    if not doc_ids or vector_count(connection) == 0:
        return 0
    space = stored_space(connection)
    if space is None or space.identity != embedder.identity:
        return 0
    marks = ",".join("?" * len(doc_ids))
    hashes = sorted(
        {
            str(row[0])
            for row in connection.execute(
                f"SELECT hash FROM documents WHERE id IN ({marks}) AND active = 1 "
                "AND embed_state != 'synced'",
                list(doc_ids),
            )
        }
    )
    if not hashes or space.dimensions != embedder.dimensions:
        return 0
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            lease = Lease.acquire(connection, "embedding")
            break
        except LeaseHeldError:
            if time.monotonic() >= deadline:
                return 0
            time.sleep(0.1)
    with lease:
        return _embed_hashes(connection, embedder, hashes, lease, EmbedReport())


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
        "SELECT f.hash, f.seq, f.fragment_type, f.label, f.start_offset, f.end_offset, "
        "(SELECT title FROM documents d WHERE d.hash = f.hash ORDER BY d.active DESC, d.id "
        "LIMIT 1) "
        "FROM fragments f "
        f"WHERE f.hash IN ({placeholders}) AND NOT EXISTS (SELECT 1 FROM content_vectors cv "
        "WHERE cv.hash = f.hash AND cv.seq = f.seq) ORDER BY f.hash, f.seq",
        list(hashes),
    ).fetchall()
    wanted = sorted({str(r[0]) for r in rows})
    bodies: dict[str, str] = {}
    if wanted:
        marks = ",".join("?" * len(wanted))
        bodies = {
            str(h): str(doc)
            for h, doc in connection.execute(
                f"SELECT hash, doc FROM content WHERE hash IN ({marks})", wanted
            )
        }
    vectors = embed_fragment_rows(embedder, rows, bodies)
    fragment_rows = [
        (
            str(r[0]),
            int(r[1]),
            str(r[2]),
            str(r[3] or ""),
            _fingerprint(
                format_document_input(
                    embedder, str(r[3] or r[6] or ""), bodies.get(str(r[0]), "")[r[4] : r[5]]
                )
            ),
        )
        for r in rows
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
    return len(rows)


def embed_fragment_rows(embedder: Embedder, rows: Sequence[Any], bodies: dict[str, str]) -> Vectors:
    """Vectors for fragment rows (hash, seq, type, label, start, end, title), in order.

    Static embedders that pool tokens (``embed_spans``) tokenize each body once for all of its
    fragments; others embed each fragment's formatted text.
    """
    import numpy as np

    dimensions = embedder.dimensions
    if not rows:
        return np.zeros((0, dimensions), np.float32)
    embed_spans = getattr(embedder, "embed_spans", None)
    if embed_spans is not None:
        order: list[str] = []
        spans: dict[str, list[tuple[int, int, str]]] = {}
        for r in rows:
            key = str(r[0])
            if key not in spans:
                order.append(key)
                spans[key] = []
            spans[key].append((int(r[4]), int(r[5]), str(r[3] or r[6] or "")))
        arrays = embed_spans([(bodies.get(key, ""), spans[key]) for key in order])
        vectors: Vectors = (
            np.concatenate(arrays) if arrays else np.zeros((0, dimensions), np.float32)
        )
    else:
        inputs = [
            format_document_input(
                embedder, str(r[3] or r[6] or ""), bodies.get(str(r[0]), "")[r[4] : r[5]]
            )
            for r in rows
        ]
        vectors = embedder.embed_documents(inputs)
    if vectors.shape != (len(rows), dimensions):
        raise ModelResponseError(
            f"the embedder returned vectors of shape {vectors.shape}, "
            f"expected ({len(rows)}, {dimensions})"
        )
    return vectors


def _embed_singly(
    connection: Connection,
    embedder: Embedder,
    hashes: Sequence[str],
    lease: Lease,
    report: EmbedReport,
    error: ModelResponseError,
) -> int | None:
    """After a batch failed: each body alone, so one bad text does not cost the others an
    attempt. Fragments embedded, or None when none went through (the first few singles
    failing too means the service is at fault: the rest of the batch shares the failure)."""
    if len(hashes) == 1:
        _record_failure(connection, hashes, str(error), report)
        return None
    done, succeeded = 0, False
    for position, body_hash in enumerate(hashes):
        if not succeeded and position >= _MAX_FAILED_BATCHES:
            _record_failure(connection, hashes[position:], str(error), report)
            return None
        try:
            done += _embed_hashes(connection, embedder, [body_hash], lease, report)
            succeeded = True
        except ModelResponseError as single:
            _record_failure(connection, [body_hash], str(single), report)
    return done if succeeded else None


def _record_failure(
    connection: Connection, hashes: Sequence[str], message: str, report: EmbedReport
) -> None:
    if message not in report.errors:
        report.errors.append(message)
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
