"""Vault-wide counts: the status summary, index health, and lifecycle states."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from memtrove.db.connection import Connection
from memtrove.db.migrations import applied_migrations
from memtrove.index.documents import collection_counts, content_type_counts
from memtrove.index.staleness import DEFAULT_STALE_AFTER_DAYS, count_stale
from memtrove.locations import is_server_url, shown_location
from memtrove.results import (
    Collection,
    CollectionStatus,
    IndexStats,
    LifecycleStatus,
    VaultStatus,
)
from memtrove.retrieval.vectors import stored_space, vector_count
from memtrove.text import to_iso

__all__ = ["STALE_AFTER_DAYS", "index_stats", "lifecycle_status", "vault_status"]

STALE_AFTER_DAYS = DEFAULT_STALE_AFTER_DAYS  # the default; collections may set their own


def vault_status(
    connection: Connection,
    location: Path | str,
    collections: Sequence[Collection],
    second: str | None = None,
) -> VaultStatus:
    """File, schema, document, fragment and vector counts (with the active documents not yet
    fully embedded), logged sessions, each configured collection, and the state of the
    second vector space (``second``: its setting). A vault on a server
    (``location`` a URL) is shown without its password, its size as 0 (the server's)."""
    from memtrove.retrieval.second_space import second_state

    counts = collection_counts(connection)
    types = content_type_counts(connection)
    active, inactive, last, unembedded = connection.execute(
        "SELECT COALESCE(SUM(active), 0), COALESCE(SUM(1 - active), 0), MAX(modified_at), "
        "COALESCE(SUM(CASE WHEN active <> 0 AND embed_state <> 'synced' THEN 1 ELSE 0 END), 0) "
        "FROM documents"
    ).fetchone()
    sessions = connection.execute("SELECT COUNT(*) FROM session_log").fetchone()[0]
    # IN (a primary-key search per distinct body) reads 10k notes' fragments in 60 % of the
    # time the join over DISTINCT hashes took
    fragments = connection.execute(
        "SELECT COUNT(*) FROM fragments WHERE hash IN (SELECT hash FROM documents WHERE active = 1)"
    ).fetchone()[0]
    files = () if is_server_url(location) else (Path(location), Path(f"{location}-wal"))
    size = sum(candidate.stat().st_size for candidate in files if candidate.exists())
    space = stored_space(connection)
    from memtrove.index.vault_flags import read_taint

    taint = read_taint(connection)
    return VaultStatus(
        geometry_taint=taint.describe() if taint is not None else None,
        vectors=vector_count(connection),
        embedding_space=str(space) if space is not None else None,
        second_channel=second_state(connection, second),
        path=shown_location(location),
        size_bytes=size,
        schema=applied_migrations(connection),
        documents=int(active),
        inactive_documents=int(inactive),
        fragments=int(fragments),
        collections=[
            CollectionStatus(
                name=c.name,
                path=str(c.path),
                pattern=c.pattern,
                documents=counts.get(c.name, 0),
                path_exists=c.path.is_dir(),
            )
            for c in collections
        ],
        content_types=types,
        last_modified_at=last,
        unembedded=int(unembedded),
        sessions=int(sessions),
    )


def index_stats(
    connection: Connection, now: datetime, collections: Sequence[Collection] = ()
) -> IndexStats:
    """Content types, embedding coverage and staleness of the active documents.

    ``stale_documents`` counts the active documents that are stale by their collection's
    rule (``collections``: the configured ones; see :mod:`memtrove.index.staleness`);
    ``embedded_documents``, ``pending_embeds`` and ``failed_embeds`` split the active
    documents by embed state.
    """
    row = connection.execute(
        "SELECT COALESCE(SUM(active), 0), COALESCE(SUM(1 - active), 0), "
        "COALESCE(SUM(CASE WHEN active <> 0 AND embed_state = 'synced' THEN 1 ELSE 0 END), 0), "
        "COALESCE(SUM(CASE WHEN active <> 0 AND embed_state = 'pending' THEN 1 ELSE 0 END), 0), "
        "COALESCE(SUM(CASE WHEN active <> 0 AND embed_state = 'failed' THEN 1 ELSE 0 END), 0), "
        "MIN(CASE WHEN active <> 0 THEN COALESCE(authored_at, modified_at) END), "
        "MAX(CASE WHEN active <> 0 THEN COALESCE(authored_at, modified_at) END) "
        "FROM documents"
    ).fetchone()
    space = stored_space(connection)
    return IndexStats(
        documents=int(row[0]),
        inactive_documents=int(row[1]),
        content_types=content_type_counts(connection),
        embedded_documents=int(row[2]),
        pending_embeds=int(row[3]),
        failed_embeds=int(row[4]),
        stale_documents=count_stale(connection, collections, now),
        oldest=row[5],
        newest=row[6],
        vectors=vector_count(connection),
        embedding_space=str(space) if space is not None else None,
    )


def lifecycle_status(connection: Connection, now: datetime) -> LifecycleStatus:
    """Documents by state; ``pinned``, ``snoozed`` and ``never_accessed`` count active
    documents only; ``inactive`` leaves out the archived ones, ``forgotten`` counts the
    inactive ones whose body was forgotten (not archived)."""
    row = connection.execute(
        "SELECT COALESCE(SUM(active), 0), "
        "COALESCE(SUM(CASE WHEN active = 0 AND archived_at IS NULL THEN 1 ELSE 0 END), 0), "
        "COALESCE(SUM(CASE WHEN active <> 0 AND pinned <> 0 THEN 1 ELSE 0 END), 0), "
        "COALESCE(SUM(CASE WHEN active <> 0 AND snoozed_until > ? THEN 1 ELSE 0 END), 0), "
        "COALESCE(SUM(CASE WHEN invalidated_at IS NOT NULL THEN 1 ELSE 0 END), 0), "
        "COALESCE(SUM(CASE WHEN active = 0 AND archived_at IS NOT NULL THEN 1 ELSE 0 END), 0), "
        "COALESCE(SUM(CASE WHEN active = 0 AND archived_at IS NULL "
        "AND forgotten_hash IS NOT NULL THEN 1 ELSE 0 END), 0), "
        "COALESCE(SUM(CASE WHEN active <> 0 AND access_count = 0 "
        "AND last_accessed_at IS NULL THEN 1 ELSE 0 END), 0) "
        "FROM documents",
        (to_iso(now),),
    ).fetchone()
    return LifecycleStatus(
        active=int(row[0]),
        inactive=int(row[1]),
        pinned=int(row[2]),
        snoozed=int(row[3]),
        invalidated=int(row[4]),
        archived=int(row[5]),
        forgotten=int(row[6]),
        never_accessed=int(row[7]),
    )
