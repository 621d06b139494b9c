"""The lifecycle area (``vault.lifecycle``): archiving documents by policy and undoing it.

Contract: given the vault's database, its collection configuration (whose ``lifecycle:``
section of ``config.yaml`` is the policy) and the vault's clock. Its statements are those
of :mod:`memtrove.lifecycle` (the policy, archive, restore and purge of documents, recall
statistics from ``recall_events``), :func:`memtrove.index.stats.lifecycle_status` for the
counts and :func:`memtrove.index.watcher.wal_checkpoint`; documents are archived, restored
or purged as a whole, never edited.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from memtrove.errors import InvalidQueryError
from memtrove.retrieval.arguments import check_limit

if TYPE_CHECKING:  # the lifecycle modules load on first use: a search needs none of them
    from memtrove.config import CollectionConfig
    from memtrove.db.database import Database
    from memtrove.lifecycle.policy import LifecyclePolicy
    from memtrove.results import LifecycleStatus
    from memtrove.results.lifecycle import (
        ArchivedDocument,
        PurgeReport,
        RestoreReport,
        SweepReport,
    )
    from memtrove.vault.areas import Clock

__all__ = ["LifecycleArea"]

CANDIDATES = 5  # pin and snooze candidates in a status


class LifecycleArea:
    """Archive by policy, restore, purge; lifecycle counts and recall telemetry."""

    def __init__(self, database: Database, *, collections: CollectionConfig, clock: Clock) -> None:
        self._connection, self._lock = database.connection, database.lock
        self._collections, self._clock = collections, clock

    def policy(self) -> LifecyclePolicy:
        """The ``lifecycle:`` section of ``config.yaml`` (defaults when absent); ConfigError
        names a bad key."""
        from memtrove.lifecycle.policy import parse_policy

        config = self._collections
        return parse_policy(config.section("lifecycle"), str(config.config_file))

    def status(self) -> LifecycleStatus:
        """Documents by state (active, inactive, archived, forgotten, pinned, snoozed,
        invalidated, never accessed), pin and snooze candidates from recall telemetry, and
        the policy."""
        from memtrove.index.stats import lifecycle_status
        from memtrove.lifecycle.recall import pin_candidates, snooze_candidates

        policy = self.policy()
        with self._lock:
            now = self._clock()
            counts = lifecycle_status(self._connection, now)
            pins = pin_candidates(self._connection, CANDIDATES)
            snoozes = snooze_candidates(self._connection, now, CANDIDATES)
        return counts._replace(
            pin_candidates=pins, snooze_candidates=snoozes, policy=policy.to_dict()
        )

    def checkpoint_wal(self) -> tuple[int, int, int]:
        """``PRAGMA wal_checkpoint(PASSIVE)`` (never blocks readers or writers): (busy, WAL
        frames, frames checkpointed). ``memtrove watch`` runs it every 5 minutes."""
        from memtrove.index.watcher import wal_checkpoint

        with self._lock:
            return wal_checkpoint(self._connection)

    def recompute_recall_stats(self) -> int:
        """Rebuild ``recall_stats`` (diversity, spacing, negatives) from ``recall_events``;
        how many documents have stats."""
        from memtrove.lifecycle.recall import recompute_recall_stats

        with self._lock:
            return recompute_recall_stats(self._connection)

    def sweep(self, *, apply: bool = False) -> SweepReport:
        """The documents the policy archives now (recall statistics recomputed first); with
        ``apply`` they are archived, then archived documents past ``purge_after_days`` are
        purged. Without ``apply`` nothing is written but the statistics."""
        from memtrove.lifecycle.archive import (
            archive_documents,
            archived_ids,
            purge_documents,
            settle,
        )
        from memtrove.lifecycle.policy import sweep_candidates
        from memtrove.lifecycle.recall import recompute_recall_stats
        from memtrove.results.lifecycle import SweepReport
        from memtrove.text import to_iso

        policy = self.policy()
        archived = purged = 0
        with self._lock:
            now = self._clock()
            recompute_recall_stats(self._connection)
            candidates = sweep_candidates(self._connection, policy, now)
            if apply:
                settle(self._connection)
                archived = archive_documents(
                    self._connection, [(c.doc_id, c.reason) for c in candidates], now
                )
                if policy.purge_after_days is not None:
                    cutoff = to_iso(now - timedelta(days=policy.purge_after_days))
                    old = archived_ids(self._connection, older_than=cutoff)
                    purged = purge_documents(self._connection, old).purged
        return SweepReport(
            dry_run=not apply,
            candidates=len(candidates),
            archived=archived,
            purged=purged,
            documents=candidates,
            policy=policy.to_dict(),
        )

    def search(self, query: str, limit: int = 10) -> list[ArchivedDocument]:
        """Archived documents only, matching ``query`` (search syntax), best first."""
        from memtrove.lifecycle.archive import search_archived

        if not isinstance(query, str):
            raise InvalidQueryError("the query must be text")
        limit = check_limit(limit)
        with self._lock:
            return search_archived(self._connection, query, limit)

    def restore(
        self,
        *,
        query: str | None = None,
        collection: str | None = None,
        all: bool = False,  # the inventory's name for it
    ) -> RestoreReport:
        """Make archived documents active again: those matching ``query``, those of
        ``collection`` (both: both must hold), or with ``all`` every one. Their body,
        fragments, vectors, relations and pin are as they were."""
        from memtrove.lifecycle.archive import archived_ids, restore_documents, settle

        query, collection = _selection(query, collection, all, "restore")
        with self._lock:
            settle(self._connection)
            ids = archived_ids(self._connection, collection=collection, query=query)
            return restore_documents(self._connection, ids)

    def purge(
        self,
        *,
        confirm: bool = False,
        query: str | None = None,
        collection: str | None = None,
        older_than_days: int | None = None,
    ) -> PurgeReport:
        """Delete archived documents for good (only archived ones, and only with
        ``confirm``): all of them, or those matching ``query``, of ``collection``, or
        archived more than ``older_than_days`` ago. A file still in its folder is indexed
        again, as new, by the next ``update``."""
        from memtrove.lifecycle.archive import archived_ids, purge_documents, settle
        from memtrove.text import to_iso

        if confirm is not True:
            raise InvalidQueryError(
                "purging deletes archived documents for good: confirm it (--yes, confirm=true)"
            )
        cutoff = None
        if older_than_days is not None:
            days = check_limit(older_than_days, None, "older_than_days")
            cutoff = to_iso(self._clock() - timedelta(days=days))
        query, collection = _selection(query, collection, True, "purge")
        with self._lock:
            settle(self._connection)
            ids = archived_ids(
                self._connection, collection=collection, query=query, older_than=cutoff
            )
            return purge_documents(self._connection, ids)


def _selection(
    query: str | None, collection: str | None, every: bool, action: str
) -> tuple[str | None, str | None]:
    """The checked query and collection; one of them, or ``every``, must be given."""
    if query is not None and (not isinstance(query, str) or not query.strip()):
        raise InvalidQueryError("the query must be non-empty text")
    if collection is not None and (not isinstance(collection, str) or not collection.strip()):
        raise InvalidQueryError("the collection must be a non-empty name")
    if query is None and collection is None and every is not True:
        raise InvalidQueryError(f"say what to {action}: a query, a collection, or all")
    return query, collection
