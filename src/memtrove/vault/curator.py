"""What ``memtrove curate`` finds beyond the upkeep counts (ClawMem's curator report):

- **orphaned collections**: documents of a collection ``config.yaml`` no longer names (not
  internal, not mined: its ``collection remove`` left them searchable), and configured
  collections whose folder is gone;
- **sweep candidates**: what ``lifecycle sweep --apply`` would archive under the policy now;
- **duplicate candidates**: low-confidence documents that duplicate another of their
  collection, as ``consolidate --dry-run`` lists them;
- **a BM25 sanity probe**: the query ``architecture decision``; when documents match it,
  the best keyword score should clear :data:`PROBE_FLOOR` (scores near zero mean the text
  index's statistics are off, and every keyword ranking with them).

Nothing is changed here but what those reports already write (recall statistics).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memtrove.lifecycle.duplicates import DuplicatesReport
    from memtrove.results.lifecycle import SweepReport
    from memtrove.vault.core import Vault

__all__ = ["PROBE_FLOOR", "PROBE_QUERY", "CuratorFindings", "curator_findings"]

PROBE_QUERY = "architecture decision"
PROBE_FLOOR = 0.3
LISTED = 5  # documents named per finding in the report
DUPLICATES_CHECKED = 50


@dataclass(frozen=True)
class CuratorFindings:
    """The findings and the actions they suggest (:meth:`actions`)."""

    orphaned: list[dict[str, Any]] = field(default_factory=list)
    sweep: dict[str, Any] = field(default_factory=dict)
    duplicates: dict[str, Any] = field(default_factory=dict)
    probe: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "orphaned_collections": self.orphaned,
            "sweep_candidates": self.sweep,
            "duplicate_candidates": self.duplicates,
            "bm25_probe": self.probe,
        }

    def actions(self) -> list[str]:
        actions: list[str] = []
        for orphan in self.orphaned:
            if orphan["reason"] == "not configured":
                actions.append(
                    f"collection {orphan['name']} is not in config.yaml but keeps "
                    f"{orphan['documents']} searchable documents: add it back with "
                    "`memtrove collection add`, or forget them"
                )
            else:
                actions.append(
                    f"the folder of collection {orphan['name']} is missing: restore it, or "
                    f"`memtrove collection remove {orphan['name']}`"
                )
        if self.sweep.get("count"):
            actions.append(
                f"{self.sweep['count']} documents are unused past the lifecycle policy: review "
                "`memtrove lifecycle sweep`, then --apply archives them"
            )
        if self.duplicates.get("count"):
            actions.append(
                f"{self.duplicates['count']} low-confidence documents duplicate another: review "
                "`memtrove consolidate --dry-run`"
            )
        if self.probe.get("verdict") == "weak":
            actions.append(
                f"the BM25 probe {PROBE_QUERY!r} scored {self.probe['top_score']:.2f} at best "
                f"(expected > {PROBE_FLOOR}): keyword scores look degenerate; run "
                "`memtrove doctor`, then `memtrove reindex`"
            )
        return actions


def _orphaned(vault: Vault) -> list[dict[str, Any]]:
    from memtrove.index.documents import collection_counts
    from memtrove.mine.runs import mined_collections

    configured = vault.collections()
    with vault.database.lock:
        counts = collection_counts(vault.database.connection)
        mined = {name for name, _ in mined_collections(vault.database.connection)}
    names = {collection.name for collection in configured}
    found = [
        {"name": name, "documents": count, "reason": "not configured"}
        for name, count in sorted(counts.items())
        if name not in names and name not in mined and not name.startswith("_")
    ]
    found += [
        {"name": c.name, "documents": counts.get(c.name, 0), "reason": "folder missing",
         "path": str(c.path)}
        for c in configured
        if not c.path.is_dir()
    ]  # fmt: skip
    return found


def _sweep(report: SweepReport) -> dict[str, Any]:
    return {
        "count": report.candidates,
        "documents": [f"{c.collection}/{c.path} ({c.reason})" for c in report.documents[:LISTED]],
    }


def _duplicates(report: DuplicatesReport) -> dict[str, Any]:
    return {
        "checked": report.checked,
        "count": len(report.pairs),
        "pairs": [
            {"duplicate": pair.archived, "of": pair.kept, "score": round(pair.score, 3)}
            for pair in report.pairs[:LISTED]
        ],
    }


def _probe(vault: Vault) -> dict[str, Any]:
    results = vault.search(PROBE_QUERY, limit=1)
    if not results:
        return {"query": PROBE_QUERY, "verdict": "no match", "top_score": None, "top": None}
    top = results[0]
    verdict = "ok" if top.score > PROBE_FLOOR else "weak"
    return {
        "query": PROBE_QUERY,
        "verdict": verdict,
        "top_score": round(top.score, 4),
        "top": f"{top.collection}/{top.path}",
    }


def curator_findings(vault: Vault) -> CuratorFindings:
    """Every finding of ``vault`` (see the module docstring)."""
    return CuratorFindings(
        orphaned=_orphaned(vault),
        sweep=_sweep(vault.lifecycle.sweep(apply=False)),
        duplicates=_duplicates(vault.consolidation.consolidate_duplicates(DUPLICATES_CHECKED)),
        probe=_probe(vault),
    )
