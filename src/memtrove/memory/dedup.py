"""Near-duplicate entries: pairs above a cosine threshold, grouped into clusters, and the
verdicts that stop a reviewed pair from coming back.

Verdicts (``duplicate``, ``supplement``, ``contradiction``, ``unrelated``) are stored with
the two slugs sorted; overwriting or forgetting either entry clears them (see
:mod:`.entries`), so a merge that creates a new similarity is flagged again.
"""

from __future__ import annotations

from memtrove.db.connection import Connection, write_transaction
from memtrove.errors import InvalidQueryError
from memtrove.memory.entries import get_entry, stored_vectors
from memtrove.memory.slugs import store_name
from memtrove.memory.vectors import unit_matrix
from memtrove.results import DuplicatePair, DuplicateReport

__all__ = ["DEFAULT_THRESHOLD", "VERDICTS", "find_duplicates", "mark_checked"]

DEFAULT_THRESHOLD = 0.85
VERDICTS = ("duplicate", "supplement", "contradiction", "unrelated")
_BLOCK = 1024  # rows compared at a time: 1024 x 10k floats is 40 MB


def find_duplicates(
    connection: Connection, store: str, model: str, threshold: float = DEFAULT_THRESHOLD
) -> DuplicateReport:
    """Unjudged pairs of live entries of ``store`` with cosine >= ``threshold``."""
    import numpy as np

    if not 0.0 < threshold <= 1.0:
        raise InvalidQueryError(f"threshold must be above 0 and at most 1, got {threshold}")
    store = store_name(store)
    rows = stored_vectors(connection, [store], model)
    matrix = unit_matrix([row[4] for row in rows])
    if matrix is None or len(rows) < 2:
        return DuplicateReport(store, threshold, [])
    checked = {
        (str(a), str(b))
        for a, b in connection.execute(
            "SELECT slug_a, slug_b FROM dedup_pairs WHERE store = ?", (store,)
        ).fetchall()
    }
    pairs: list[DuplicatePair] = []
    for start in range(0, len(rows), _BLOCK):
        block = matrix[start : start + _BLOCK] @ matrix.T
        for offset, column in zip(*np.nonzero(block >= threshold - 1e-6), strict=True):
            first, second = start + int(offset), int(column)
            if second <= first:
                continue
            a, b = rows[first], rows[second]
            (slug_a, label_a), (slug_b, label_b) = sorted(((a[2], a[3]), (b[2], b[3])))
            if (slug_a, slug_b) in checked:
                continue
            score = min(1.0, float(block[offset, column]))
            pairs.append(DuplicatePair(store, slug_a, slug_b, label_a, label_b, score))
    return DuplicateReport(store, threshold, _clusters(pairs))


def _clusters(pairs: list[DuplicatePair]) -> list[list[DuplicatePair]]:
    """Connected components of the pairs' graph; largest (then strongest) first."""
    parent: dict[str, str] = {}

    def root(slug: str) -> str:
        parent.setdefault(slug, slug)
        while parent[slug] != slug:
            parent[slug] = parent[parent[slug]]
            slug = parent[slug]
        return slug

    for pair in pairs:
        parent[root(pair.slug_a)] = root(pair.slug_b)
    groups: dict[str, list[DuplicatePair]] = {}
    for pair in pairs:
        groups.setdefault(root(pair.slug_a), []).append(pair)
    clusters = [
        sorted(group, key=lambda p: (-p.score, p.slug_a, p.slug_b)) for group in groups.values()
    ]

    def size(cluster: list[DuplicatePair]) -> int:
        return len({p.slug_a for p in cluster} | {p.slug_b for p in cluster})

    clusters.sort(key=lambda cluster: (-size(cluster), -cluster[0].score, cluster[0].slug_a))
    return clusters


def mark_checked(
    connection: Connection, store: str, label_a: str, label_b: str, status: str, now: str
) -> tuple[str, str]:
    """Record a verdict on two entries (both must exist); returns the sorted slugs."""
    if status not in VERDICTS:
        raise InvalidQueryError(f"status must be one of {', '.join(VERDICTS)}, not {status!r}")
    store = store_name(store)
    first, second = get_entry(connection, store, label_a), get_entry(connection, store, label_b)
    if first.slug == second.slug:
        raise InvalidQueryError("a pair needs two different entries")
    slug_a, slug_b = sorted((first.slug, second.slug))
    with write_transaction(connection):
        connection.execute(
            "INSERT INTO dedup_pairs (store, slug_a, slug_b, status, checked_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (store, slug_a, slug_b) "
            "DO UPDATE SET status = excluded.status, checked_at = excluded.checked_at",
            (store, slug_a, slug_b, status, now),
        )
    return slug_a, slug_b
