"""The embed run's geometry gate: the canary before anything is written, a check after.

Before an ``embed`` run writes a vector, :func:`preflight` embeds the canary probes
(:mod:`memtrove.index.canary`) and compares them with the profile's baseline. A failed
check refuses the run, with nothing written, and sets the geometry taint
(:mod:`memtrove.index.vault_flags`): the embedder no longer makes the vectors the vault
holds, so its query vectors do not match them either. ``force_geometry`` accepts the
failure (the run goes on, and the taint, set before the first vector, records that vectors
were written under it);
``recalibrate`` (with a full re-embed) judges the probes on their own margins and stores
them as the new baseline.

After the run, :func:`finish` embeds one probe again: a server that changed while the run
wrote vectors leaves them mixed, and taints the vault. A sound run stores the profile's first
baseline (or the recalibrated one) and clears a taint it proves stale: any taint after a
full re-embed (``force``), otherwise one under which no vector was written.
"""

from __future__ import annotations

from memtrove.db.connection import Connection, write_transaction
from memtrove.errors import EmbeddingSpaceError
from memtrove.index.canary import (
    DRIFT_FLOOR,
    PROBES,
    CanaryResult,
    cosine,
    load_baseline,
    measure,
    profile_key,
    save_baseline,
)
from memtrove.index.vault_flags import clear_taint, read_taint, set_taint
from memtrove.models.protocols import Embedder
from memtrove.retrieval.vectors import format_document_input

__all__ = ["ACCEPT_FIX", "RECALIBRATE_FIX", "finish", "preflight"]

ACCEPT_FIX = "`memtrove embed --force-geometry` accepts it"
RECALIBRATE_FIX = (
    "`memtrove embed --force --recalibrate-canary` re-embeds everything and stores a new baseline"
)
_END_PROBE = "paraphrase_a"


def preflight(
    connection: Connection,
    embedder: Embedder,
    dimensions: int,
    *,
    force_geometry: bool = False,
    recalibrate: bool = False,
) -> CanaryResult:
    """Run the canary; raise :class:`EmbeddingSpaceError` (and taint the vault) when it
    fails, unless ``force_geometry``. Model errors propagate: nothing is written then."""
    profile = profile_key(embedder.identity, dimensions)
    baseline = None if recalibrate else load_baseline(connection, profile)
    result = measure(embedder, dimensions, baseline, profile)
    if result.passed:
        return result
    if force_geometry:  # tainted before the first vector: a run cut short stays tainted
        reason = f"vectors written under --force-geometry although the canary {result.summary()}"
        with write_transaction(connection):
            set_taint(connection, reason, vectors_written=True)
        return result
    with write_transaction(connection):
        set_taint(connection, f"the canary of {profile} {result.summary()}", vectors_written=False)
    raise EmbeddingSpaceError(
        f"the embedder's geometry changed: canary {result.summary()}; nothing was written. "
        f"If the change is intended, {ACCEPT_FIX}, or {RECALIBRATE_FIX}"
    )


def finish(
    connection: Connection,
    embedder: Embedder,
    result: CanaryResult,
    *,
    written: int,
    force: bool,
    recalibrate: bool,
) -> str | None:
    """Close the gate after a run that wrote ``written`` fragment vectors; the taint's
    one-line reason when the run leaves the vault tainted, else None."""
    if not result.passed:  # accepted with force_geometry: preflight set the taint
        return (
            f"vectors written under --force-geometry although the canary {result.summary()}; "
            f"{RECALIBRATE_FIX}"
        )
    if written:
        text = format_document_input(embedder, "", PROBES[_END_PROBE][1])
        fresh = embedder.embed_documents([text])[0]
        similarity = cosine(result.vectors[_END_PROBE], fresh)
        if similarity < DRIFT_FLOOR:
            reason = (
                f"the embedder changed during the run (probe cos {similarity:.4f} < "
                f"{DRIFT_FLOOR} against the run's start); its {written} new vectors may mix "
                "two geometries"
            )
            with write_transaction(connection):
                set_taint(connection, reason, vectors_written=True)
            return f"{reason}; `memtrove embed --force` re-embeds everything"
    with write_transaction(connection):
        save_baseline(connection, result, replace=recalibrate)
        taint = read_taint(connection)
        if taint is not None and (force or not taint.vectors_written):
            clear_taint(connection)
    return None
