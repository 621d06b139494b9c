"""What a consolidation pass and a lane tick report (:mod:`memtrove.vault.consolidation`).

Annotations are evaluated (no postponed evaluation) except the two report types of other
modules: a record whose annotations are all strings costs every process that imports the
vault ~1 ms to build, compiling each one.
"""

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from memtrove.lifecycle.consolidation import Phase2Report
    from memtrove.lifecycle.synthesis import DeductiveSynthesisStats

__all__ = ["MAX_LISTED", "ConsolidationReport", "LaneTick"]

MAX_LISTED = 10  # consolidated observations a report or reflection lists in text


class ConsolidationReport(NamedTuple):
    """One light-lane pass: enrichment (None when it did not run), Phase 2 and Phase 3
    (None when not due)."""

    enrichment: dict[str, Any] | None
    phase2: "Phase2Report | None"
    phase3: "DeductiveSynthesisStats | None"
    dry_run: bool = False
    observations: tuple[dict[str, Any], ...] = ()  # active consolidated observations, after

    def text(self) -> str:
        lines = ["dry run: nothing written"] if self.dry_run else []
        if self.enrichment is not None:
            lines.append(f"enrichment: {self.enrichment.get('documents', 0)} document(s)")
        lines.append(self.phase2.text() if self.phase2 else "phase 2: not due")
        lines.append(self.phase3.text() if self.phase3 else "phase 3: not due")
        lines.append(f"consolidated observations: {len(self.observations)} active")
        lines += [
            f"  {row['proof_count']:>3}x {row['observation']}  ({row['trend']})"
            for row in self.observations[:MAX_LISTED]
        ]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "enrichment": self.enrichment,
            "phase2": None if self.phase2 is None else self.phase2.to_dict(),
            "phase3": None if self.phase3 is None else self.phase3.to_dict(),
            "consolidated_observations": list(self.observations),
        }


class LaneTick(NamedTuple):
    """What one lane tick did: ``status`` completed, skipped or failed, with the reason."""

    lane: str
    status: str
    reason: str | None = None
    report: "ConsolidationReport | None" = None
