"""The consolidation area (``vault.consolidation``): one pass of the light lane now
(``consolidate``), the light and heavy lane ticks that :class:`memtrove.vault.lanes.LaneHost`
runs, the journal, the consolidated observations, and ``reflect``.

Contract: given the vault's database, its models (the LLM of Phase 2 and Phase 3, when one
is configured), the redaction of text the phases write, the vault's clock and the enrichment
area (the light lane's A-MEM backfill). Its statements are those of
:mod:`memtrove.lifecycle` (``consolidation``, ``synthesis``, ``maintenance``, ``leases``,
``duplicates``, ``reflection``): consolidated observations, deductions, the lanes' journal
and leases, duplicate archiving.

Both lanes run under a ``worker_leases`` lease (``light-consolidation``,
``heavy-maintenance``), renewed between every model call, so two processes never run the same
lane at once; see :mod:`memtrove.lifecycle.maintenance` for the gates and the journal.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from memtrove.lifecycle.lane_reports import MAX_LISTED, ConsolidationReport, LaneTick
from memtrove.vault.areas import chosen_llm

if TYPE_CHECKING:  # loaded on first use: a search needs none of them
    from memtrove.db.database import Database
    from memtrove.lifecycle.duplicates import DuplicatesReport
    from memtrove.lifecycle.leases import Lease
    from memtrove.lifecycle.maintenance import LaneSettings, MaintenanceRun
    from memtrove.lifecycle.reflection import Reflection
    from memtrove.models.registry import Models
    from memtrove.vault.areas import Clock, Redact
    from memtrove.vault.enrichment import EnrichmentArea

__all__ = ["ConsolidationArea", "ConsolidationReport", "LaneTick"]


class _LaneLog:
    """``logging.getLogger("memtrove.lanes")``, loaded on the first message: a hook process
    opens the vault and never logs a lane (logging costs a cold start ~5 ms)."""

    def info(self, message: str, *args: object) -> None:
        _logger().info(message, *args)

    def warning(self, message: str, *args: object) -> None:
        _logger().warning(message, *args)


def _logger() -> Any:
    import logging

    return logging.getLogger("memtrove.lanes")


log = _LaneLog()


def _default_lanes() -> LaneSettings:
    from memtrove.lifecycle.maintenance import LaneSettings

    return LaneSettings()


class ConsolidationArea:
    """Consolidation lanes (see :mod:`memtrove.lifecycle.consolidation`)."""

    def __init__(
        self,
        database: Database,
        *,
        models: Models,
        redact: Redact,
        clock: Clock,
        enrichment: EnrichmentArea,
    ) -> None:
        self._connection, self._lock = database.connection, database.lock
        self.models, self.redact, self._clock, self._enrichment = models, redact, clock, enrichment

    def consolidate(
        self, *, dry_run: bool = False, use_llm: bool = True, lanes: LaneSettings | None = None
    ) -> ConsolidationReport:
        """Run every light-lane phase once, now: A-MEM backfill of the 3 newest unenriched
        documents, Phase 2 and Phase 3, under the light lane's lease (LeaseHeldError when a
        lane host is running it). ``dry_run`` writes nothing (no enrichment, no lease)."""
        from memtrove.lifecycle.consolidation import consolidated_rows
        from memtrove.lifecycle.leases import Lease
        from memtrove.lifecycle.maintenance import LIGHT_LEASE, finish_run, start_run

        lanes = lanes or _default_lanes()
        with self._lock:
            if dry_run:
                report = self._light_pass(lanes, use_llm, None, dry_run=True, every_phase=True)
            else:
                lease = Lease.acquire(self._connection, LIGHT_LEASE, lanes.lease_ttl)
                try:
                    run = start_run(self._connection, "light", "tick")
                    try:
                        report = self._light_pass(lanes, use_llm, lease, every_phase=True)
                    except BaseException:
                        finish_run(self._connection, run, "failed", reason="tick_exception")
                        raise
                    finish_run(self._connection, run, "completed", metrics=_metrics(report))
                finally:
                    _release(lease)
            observations = tuple(_by_proofs(consolidated_rows(self._connection)))
        return report._replace(observations=observations)

    def light_lane_tick(self, lanes: LaneSettings, *, use_llm: bool = True) -> LaneTick:
        """One scheduled light-lane tick: backfill every tick, Phase 2 when it last ran six
        intervals ago, Phase 3 three intervals ago (on any host); never raises."""
        from memtrove.errors import LeaseHeldError
        from memtrove.lifecycle.leases import Lease
        from memtrove.lifecycle.maintenance import LIGHT_LEASE, finish_run, record_skip, start_run

        with self._lock:
            try:
                lease = Lease.acquire(self._connection, LIGHT_LEASE, lanes.lease_ttl)
            except LeaseHeldError:
                log.info("light lane: lease held by another process; next tick")
                return _skip(
                    lambda: record_skip(self._connection, "light", "lease_unavailable"), "light"
                )
            except Exception as error:
                log.warning("light lane: cannot take the lease: %s", error)
                return LaneTick("light", "failed", "lease_error")
            try:
                run = start_run(self._connection, "light", "tick")
                try:
                    report = self._light_pass(lanes, use_llm, lease)
                except Exception as error:
                    reason = "lease_lost" if isinstance(error, LeaseHeldError) else "tick_exception"
                    log.warning("light lane tick failed: %s", error)
                    finish_run(
                        self._connection,
                        run,
                        "failed",
                        reason=reason,
                        metrics={"error": str(error)[:300]},
                    )
                    return LaneTick("light", "failed", reason)
                finish_run(self._connection, run, "completed", metrics=_metrics(report))
                return LaneTick("light", "completed", None, report)
            except Exception as error:  # the journal itself failed (a locked vault)
                log.warning("light lane tick failed: %s", error)
                return LaneTick("light", "failed", "journal_error")
            finally:
                _release(lease)

    def _light_pass(
        self,
        lanes: LaneSettings,
        use_llm: bool,
        lease: Lease | None,
        *,
        dry_run: bool = False,
        every_phase: bool = False,
    ) -> ConsolidationReport:
        from memtrove.lifecycle.consolidation import ConsolidationOptions, consolidate_observations
        from memtrove.lifecycle.maintenance import mark_phase, phase_due
        from memtrove.lifecycle.synthesis import generate_deductions

        heartbeat = lease.renew if lease is not None else (lambda: None)
        llm = chosen_llm(self.models, use_llm)
        connection, now = self._connection, datetime.now(UTC)
        enrichment = None
        if not dry_run:
            report = self._enrichment.enrich(
                limit=3, use_llm=use_llm, progress=lambda done, total: heartbeat()
            )
            enrichment = report.to_dict()
            heartbeat()
        phase2 = phase3 = None
        if every_phase or phase_due(connection, "phase2", 6 * lanes.light_interval, now):
            options = ConsolidationOptions(
                dry_run=dry_run,
                guard_dry_run=lanes.guard_dry_run,
                normal=lanes.merge_normal,
                strict=lanes.merge_strict,
                policy=lanes.contradiction_policy,
                min_confidence=lanes.contradiction_min_confidence,
            )
            phase2 = consolidate_observations(
                connection, llm=llm, redact=self.redact, options=options, heartbeat=heartbeat
            )
            if not dry_run:
                mark_phase(connection, "phase2", now)
        if every_phase or phase_due(connection, "phase3", 3 * lanes.light_interval, now):
            phase3 = generate_deductions(
                connection,
                llm=llm,
                redact=self.redact,
                dry_run=dry_run,
                min_confidence=lanes.contradiction_min_confidence,
                heartbeat=heartbeat,
            )
            if not dry_run:
                mark_phase(connection, "phase3", now)
        return ConsolidationReport(enrichment, phase2, phase3, dry_run)

    def heavy_lane_tick(
        self, lanes: LaneSettings, *, now: datetime | None = None, use_llm: bool = True
    ) -> LaneTick:
        """One heavy-lane attempt: the quiet-hour window, the query-rate gate, the lease,
        then Phase 2 (stale-first or surprisal, guarded) and Phase 3 (stale-first), each
        journaled with its outcome; never raises."""
        from memtrove.errors import LeaseHeldError
        from memtrove.lifecycle.leases import Lease
        from memtrove.lifecycle.maintenance import (
            HEAVY_LEASE,
            in_window,
            recent_context_usages,
            record_skip,
        )

        moment = now or datetime.now(UTC)
        connection = self._connection
        with self._lock:
            try:
                hour = moment.astimezone().hour
                if not in_window(hour, lanes.window_start, lanes.window_end):
                    window = {"hour": hour, "start": lanes.window_start, "end": lanes.window_end}
                    record_skip(connection, "heavy", "outside_window", window)
                    return LaneTick("heavy", "skipped", "outside_window")
                usages = recent_context_usages(connection, moment)
                if usages > lanes.max_usages:
                    rate = {"usages": usages, "max_usages": lanes.max_usages}
                    record_skip(connection, "heavy", "query_rate_high", rate)
                    return LaneTick("heavy", "skipped", "query_rate_high")
                try:
                    lease = Lease.acquire(connection, HEAVY_LEASE, lanes.lease_ttl)
                except LeaseHeldError:
                    record_skip(connection, "heavy", "lease_unavailable")
                    return LaneTick("heavy", "skipped", "lease_unavailable")
            except Exception as error:  # a locked or broken vault: try again next tick
                log.warning("heavy lane: gate failed: %s", error)
                return LaneTick("heavy", "failed", "gate_error")
            try:
                return self._heavy_phases(lanes, use_llm, lease)
            finally:
                _release(lease)

    def _heavy_phases(self, lanes: LaneSettings, use_llm: bool, lease: Lease) -> LaneTick:
        from memtrove.lifecycle.consolidation import (
            ConsolidationOptions,
            consolidate_observations,
            surprising_observations,
        )
        from memtrove.lifecycle.maintenance import finish_run, start_run
        from memtrove.lifecycle.synthesis import generate_deductions

        connection, llm = self._connection, chosen_llm(self.models, use_llm)
        try:
            selector, candidates = "stale-first", None
            if lanes.surprisal:
                found = surprising_observations(connection, lanes.observation_limit)
                selector = "surprisal" if found else "surprisal-fallback-stale"
                candidates = tuple(found) if found else None
            run = start_run(connection, "heavy", "consolidate", lanes.observation_limit)
        except Exception as error:
            log.warning("heavy lane: phase 2 could not start: %s", error)
            return LaneTick("heavy", "failed", "phase2_exception")
        try:
            options = ConsolidationOptions(
                limit=lanes.observation_limit,
                stale=True,
                guarded=True,
                candidate_ids=candidates,
                normal=lanes.merge_normal,
                strict=lanes.merge_strict,
                policy=lanes.contradiction_policy,
                min_confidence=lanes.contradiction_min_confidence,
            )
            report = consolidate_observations(
                connection, llm=llm, redact=self.redact, options=options, heartbeat=lease.renew
            )
            metrics = {"selector": selector, **report.to_dict()}
            if candidates is not None:
                metrics["candidateCount"] = len(candidates)
            finish_run(
                connection,
                run,
                "completed",
                selected=len(candidates or ()) or None,
                processed=report.selected,
                created=report.created,
                rejected=report.guard_rejections,
                metrics=metrics,
            )
        except Exception as error:
            log.warning("heavy lane phase 2 failed: %s", error)
            _finish_quietly(connection, run, "phase2_exception", error)
            return LaneTick("heavy", "failed", "phase2_exception")
        deductive: int | None = None
        try:
            lease.renew()
            deductive = start_run(connection, "heavy", "deductive", lanes.deductive_limit)
            stats = generate_deductions(
                connection,
                llm=llm,
                redact=self.redact,
                limit=lanes.deductive_limit,
                stale=True,
                min_confidence=lanes.contradiction_min_confidence,
                heartbeat=lease.renew,
            )
            finish_run(
                connection,
                deductive,
                "skipped" if stats.skipped else "completed",
                reason=stats.skipped,
                selected=stats.considered,
                processed=stats.drafted,
                created=stats.created,
                rejected=stats.rejected,
                null_calls=stats.null_calls,
                metrics=stats.to_dict(),
            )
        except Exception as error:
            log.warning("heavy lane phase 3 failed: %s", error)
            if deductive is not None:
                _finish_quietly(connection, deductive, "phase3_exception", error)
            return LaneTick("heavy", "failed", "phase3_exception")
        return LaneTick("heavy", "completed")

    def consolidate_duplicates(self, limit: int = 50, *, apply: bool = False) -> DuplicatesReport:
        """Low-confidence documents (< 0.4, the ``limit`` least confident) that duplicate
        another of their collection (title BM25 >= 0.7, body word Jaccard >= 0.4): listed,
        and with ``apply`` the weaker of each pair archived (never deleted)."""
        from memtrove.lifecycle.duplicates import archive_duplicates

        with self._lock:
            return archive_duplicates(self._connection, limit, self._clock(), apply=apply)

    def maintenance_runs(self, *, lane: str | None = None, limit: int = 20) -> list[MaintenanceRun]:
        """The lanes' journal, newest first."""
        from memtrove.lifecycle.maintenance import recent_runs

        with self._lock:
            return recent_runs(self._connection, lane=lane, limit=max(1, min(limit, 1000)))

    def consolidated_observations(self, *, include_inactive: bool = False) -> list[dict[str, Any]]:
        """The patterns Phase 2 wrote (active ones unless ``include_inactive``), oldest first."""
        from memtrove.lifecycle.consolidation import consolidated_rows

        with self._lock:
            return consolidated_rows(self._connection, active_only=not include_inactive)

    def reflect(self, days: int = 14) -> Reflection:
        """Recurring phrases of the last ``days`` (1-3650) of decisions, recent antipatterns
        and strong co-activations."""
        from memtrove.errors import InvalidQueryError
        from memtrove.lifecycle.reflection import reflect

        if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= 3650:
            raise InvalidQueryError(f"days must be a whole number from 1 to 3650, not {days!r}")
        from memtrove.lifecycle.consolidation import consolidated_rows

        with self._lock:
            reflection = reflect(self._connection, days, self._clock())
            patterns = _by_proofs(consolidated_rows(self._connection))[:MAX_LISTED]
        return reflection._replace(patterns=tuple(patterns))


def _metrics(report: ConsolidationReport) -> dict[str, Any]:
    """What a journal row keeps of a pass: its phases, not the observations listed after."""
    metrics = report.to_dict()
    metrics.pop("consolidated_observations", None)
    return metrics


def _by_proofs(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consolidated observations, the best-supported (then the newest) first."""
    return sorted(rows, key=lambda row: (-int(row["proof_count"]), -int(row["id"])))


def _skip(write: Any, lane: str) -> LaneTick:
    try:
        write()
    except Exception as error:  # journaling a skip must not fail the host
        log.warning("%s lane: cannot journal the skip: %s", lane, error)
    return LaneTick(lane, "skipped", "lease_unavailable")


def _finish_quietly(connection: Any, run: int, reason: str, error: BaseException) -> None:
    from memtrove.errors import LeaseHeldError
    from memtrove.lifecycle.maintenance import finish_run

    if isinstance(error, LeaseHeldError):
        reason = "lease_lost"
    try:
        finish_run(connection, run, "failed", reason=reason, metrics={"error": str(error)[:300]})
    except Exception as failure:
        log.warning("cannot journal the failure: %s", failure)


def _release(lease: Lease) -> None:
    try:
        lease.release()
    except Exception as error:  # the TTL frees it anyway
        log.warning("cannot release the %s lease: %s", lease.name, error)
