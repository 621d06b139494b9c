"""``doctor``'s embedding-safety checks: the geometry taint, the canary, stored vectors.

- ``geometry taint``: fails while ``vault_flags.embed_geometry_taint`` is set (see
  :mod:`memtrove.index.vault_flags`), with the reason and the run that clears it.
- ``geometry canary``: the probes embedded now against the baseline of the embedder's
  profile (:mod:`memtrove.index.canary`), without storing anything.
- ``stored vectors``: up to :data:`SAMPLE` stored fragment vectors, drawn at random, are
  re-embedded from their fragment's text, exactly as ``embed`` built it; each must have a
  cosine of at least :data:`COSINE_FLOOR` with the stored one. A fragment whose input
  changed since (its fingerprint differs: a renamed title) is stale, not corrupt, and only
  counted. A lower cosine means the stored vector is damaged or the embedder changed.

The vault is read under ``lock``; the embedder is asked outside it.
"""

from __future__ import annotations

import contextlib
from contextlib import AbstractContextManager
from typing import Any

from memtrove.db.connection import Connection
from memtrove.errors import MemtroveError
from memtrove.index.canary import cosine, load_baseline, measure, profile_key
from memtrove.index.embedding import _fingerprint, embed_fragment_rows
from memtrove.index.geometry import ACCEPT_FIX, RECALIBRATE_FIX
from memtrove.index.vault_flags import read_taint
from memtrove.models.protocols import Embedder
from memtrove.models.registry import Models
from memtrove.results import Check
from memtrove.retrieval.vectors import format_document_input, stored_space

__all__ = ["COSINE_FLOOR", "SAMPLE", "geometry_checks"]

SAMPLE = 16
COSINE_FLOOR = 0.98
_REBUILD = "`memtrove embed --force` re-embeds everything"


def geometry_checks(
    connection: Connection,
    models: Models | None,
    *,
    lock: AbstractContextManager[object] | None = None,
) -> list[Check]:
    """The taint, canary and stored-vector checks; ``models`` is None when the embedder
    could not be built or did not answer (then only the taint is checked)."""
    embedder = models.embedder if models is not None else None
    with lock or contextlib.nullcontext():
        taint = _taint_check(connection)
        space = stored_space(connection)
        sample = _sample(connection) if space is not None else []
        baseline = None
        if embedder is not None and space is not None:
            baseline = load_baseline(connection, profile_key(space.identity, space.dimensions))
    if embedder is None:
        skipped = "not checked: the embedder did not answer (see the embedder check)"
        return [
            taint,
            Check("geometry canary", "warn", skipped),
            Check("stored vectors", "warn", skipped),
        ]
    if space is None:
        return [
            taint,
            Check("geometry canary", "ok", "no vectors yet: `memtrove embed` calibrates it"),
            Check("stored vectors", "ok", "no stored vectors to re-validate"),
        ]
    try:
        if embedder.identity != space.identity or embedder.dimensions != space.dimensions:
            skipped = "not checked: the embedder is not the one that made the vectors"
            fix = "see the embedding space check"
            return [
                taint,
                Check("geometry canary", "warn", skipped, fix),
                Check("stored vectors", "warn", skipped, fix),
            ]
        canary = _canary_check(embedder, space.dimensions, baseline, space.identity)
        vectors = _vector_check(embedder, sample)
    except MemtroveError as error:
        failed = f"not checked: the embedder failed ({error})"
        return [
            taint,
            Check("geometry canary", "warn", failed),
            Check("stored vectors", "warn", failed),
        ]
    return [taint, canary, vectors]


def _taint_check(connection: Connection) -> Check:
    taint = read_taint(connection)
    if taint is None:
        return Check("geometry taint", "ok", "not tainted: every embed run passed its canary")
    fix = _REBUILD if taint.vectors_written else "`memtrove embed` once the embedder is restored"
    return Check("geometry taint", "fail", taint.describe(), f"{fix}; or {RECALIBRATE_FIX}")


def _canary_check(embedder: Embedder, dimensions: int, baseline: Any, identity: str) -> Check:
    profile = profile_key(identity, dimensions)
    result = measure(embedder, dimensions, baseline, profile)
    if not result.passed:
        detail = f"{profile}: {result.summary()}"
        return Check("geometry canary", "fail", detail, f"{ACCEPT_FIX}, or {RECALIBRATE_FIX}")
    if baseline is None:
        detail = f"{profile}: {result.summary()}; no baseline stored yet"
        return Check("geometry canary", "warn", detail, "`memtrove embed` stores it")
    return Check("geometry canary", "ok", f"{profile}: {result.summary()}")


def _sample(connection: Connection) -> list[dict[str, Any]]:
    """Up to SAMPLE stored vectors of active, embedded documents, with their fragment's
    text as ``embed`` built it and the stored vector."""
    rows = connection.execute(
        "SELECT cv.id, cv.hash, cv.seq, cv.embed_input_fp, f.fragment_type, f.label, "
        "f.start_offset, f.end_offset, "
        "(SELECT title FROM documents d WHERE d.hash = f.hash ORDER BY d.active DESC, d.id "
        "LIMIT 1), "
        "(SELECT collection || '/' || path FROM documents d WHERE d.hash = f.hash "
        "AND d.active = 1 ORDER BY d.id LIMIT 1) "
        "FROM content_vectors cv JOIN fragments f ON f.hash = cv.hash AND f.seq = cv.seq "
        "WHERE EXISTS (SELECT 1 FROM documents d WHERE d.hash = cv.hash AND d.active = 1 "
        "AND d.embed_state = 'synced') ORDER BY random() LIMIT ?",
        (SAMPLE,),
    ).fetchall()
    if not rows:
        return []
    hashes = sorted({str(row[1]) for row in rows})
    marks = ",".join("?" * len(hashes))
    bodies = {
        str(h): str(doc)
        for h, doc in connection.execute(
            f"SELECT hash, doc FROM content WHERE hash IN ({marks})", hashes
        )
    }
    stored = dict(connection.vectors.embeddings([int(row[0]) for row in rows]))
    return [
        {
            "row": (row[1], row[2], row[4], row[5], row[6], row[7], row[8]),
            "fingerprint": row[3],
            "ref": f"{row[9]}#{row[2]}",
            "body": bodies.get(str(row[1]), ""),
            "vector": stored.get(int(row[0])),
        }
        for row in rows
    ]


def _vector_check(embedder: Embedder, sample: list[dict[str, Any]]) -> Check:
    import numpy as np

    name = "stored vectors"
    if not sample:
        return Check(name, "ok", "no stored vectors to re-validate")
    stale, checked = 0, []
    for item in sample:
        _, _, _, label, start, end, title = item["row"]
        text = format_document_input(embedder, str(label or title or ""), item["body"][start:end])
        if item["vector"] is None or (
            item["fingerprint"] and item["fingerprint"] != _fingerprint(text)
        ):
            stale += 1
        else:
            checked.append(item)
    checked.sort(key=lambda item: (str(item["row"][0]), int(item["row"][1])))  # body by body
    if not checked:
        detail = f"all {stale} sampled vectors are stale (their input changed since embedding)"
        return Check(name, "warn", detail, _REBUILD)
    fresh = embed_fragment_rows(
        embedder, [item["row"] for item in checked], {str(i["row"][0]): i["body"] for i in checked}
    )
    scores = [
        (cosine(np.frombuffer(bytes(item["vector"]), dtype=np.float32), fresh[n]), item["ref"])
        for n, item in enumerate(checked)
    ]
    bad = sorted(score for score in scores if score[0] < COSINE_FLOOR)
    lowest = min(score for score, _ in scores)
    stale_note = f"; {stale} stale (input changed since embedding)" if stale else ""
    if bad:
        shown = ", ".join(f"{ref} (cos {score:.4f})" for score, ref in bad[:3])
        detail = (
            f"{len(bad)} of {len(scores)} sampled vectors differ from a fresh embedding "
            f"(cos < {COSINE_FLOOR}): {shown}{stale_note}"
        )
        return Check(
            name,
            "fail",
            detail,
            f"{_REBUILD}; the geometry canary check says whether the embedder changed",
        )
    detail = f"{len(scores)} sampled vectors re-embedded, cos >= {lowest:.4f}{stale_note}"
    return Check(name, "ok", detail)
