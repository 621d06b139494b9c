"""Scores of archived documents that say how well each matches, as if it were still indexed.

Archived documents have a text index of their own (``archived``), and it is small: a sweep
archives a few documents that are alike (old notes of one kind). BM25's IDF there,
``ln((N - n + 0.5) / (n + 0.5))``, is negative for any term found in more than half of
them, and the engine then clamps it to 1e-6: ``lifecycle search`` ranked its hits by term
frequency alone and printed every score as ``0.00``. The ranking was right (the clamp is
shared), the scores meaningless.

:func:`vault_scores` keeps the index's term-frequency part of BM25 and gives each query
part the IDF it has in the whole vault (active and archived documents: what ClawMem, which
keeps archived rows in its one index, reports), in the form that is never negative,
``ln(1 + (N - n + 0.5) / (n + 0.5))``. For one query part the index's score is ``IDF x
tf part``, with the index's own IDF known from its counts, so the tf part is recovered
exactly, one search per part.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from memtrove.db.connection import Connection
from memtrove.db.text_query import ParsedQuery

__all__ = ["MAX_PARTS", "vault_scores"]

MAX_PARTS = 12  # query parts scored one by one; a longer query keeps its first ones
_ARCHIVED_ROWS = ("d.active = 0", "d.archived_at IS NOT NULL")
_CLAMPED_IDF = 1e-6  # what the engines use in place of an IDF that is not positive


def _parts(parsed: ParsedQuery) -> list[tuple[ParsedQuery, str | None]]:
    """Each term, phrase and prefix as a query of its own, with its word when it is one
    plain word (whose document frequency the main index can tell)."""
    parts: list[tuple[ParsedQuery, str | None]] = []
    for term in dict.fromkeys(parsed.terms):
        parts.append((ParsedQuery(terms=(term,)), None if " " in term else term))
    for phrase in dict.fromkeys(parsed.phrases):
        parts.append((ParsedQuery(phrases=(phrase,)), None))
    for prefix in dict.fromkeys(parsed.prefixes):
        parts.append((ParsedQuery(prefixes=(prefix,)), None))
    return parts[:MAX_PARTS]


def _index_idf(rows: int, holding: int) -> float:
    """The IDF the text index used (FTS5's, which the PostgreSQL index mirrors)."""
    idf = math.log((rows - holding + 0.5) / (holding + 0.5))
    return idf if idf > 0 else _CLAMPED_IDF


def _positive_idf(rows: int, holding: int) -> float:
    return math.log(1.0 + (rows - holding + 0.5) / (holding + 0.5))


def vault_scores(
    connection: Connection, parsed: ParsedQuery, doc_ids: Iterable[int]
) -> dict[int, float]:
    """BM25 magnitude of each archived document in ``doc_ids`` for ``parsed``, with the
    vault-wide IDF of each query part (see the module docstring); documents that match no
    part score 0."""
    from memtrove.retrieval.fts import document_frequencies

    wanted = set(doc_ids)
    scores = dict.fromkeys(wanted, 0.0)
    if not wanted:
        return scores
    connection.text.settle_totals(("archived",))  # N below must be the index's row count
    archived = int(
        connection.execute(
            "SELECT COUNT(*) FROM documents WHERE active = 0 AND archived_at IS NOT NULL"
        ).fetchone()[0]
    )
    parts = _parts(parsed)
    words = [word for _, word in parts if word is not None]
    active, active_counts = document_frequencies(connection, words) if words else (0, {})
    if not words:
        active = connection.text.document_count()
    for part, word in parts:
        rows: Sequence[tuple[int, float]] = connection.text.search(
            part, None, index="archived", conditions=_ARCHIVED_ROWS
        )
        holding = len(rows)
        if not holding:
            continue
        index_idf = _index_idf(archived, holding)
        in_vault = holding + (active_counts.get(word, 0) if word is not None else 0)
        idf = _positive_idf(archived + active, in_vault)
        for doc_id, rank in rows:
            if doc_id in scores:
                scores[doc_id] += abs(float(rank)) / index_idf * idf
    return scores
