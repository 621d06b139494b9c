"""What the agent receives: injected entries and tokens per prompt, judged for usefulness.

A ranking metric scores where the useful documents land; an agent pays for every entry the
hook injects, useful or not. For each prompt run through ``--method surfacing`` this module
keeps the injected entries (each entry with the other paths of its identical copies) and the
estimated tokens, and summarises them against the judged documents:

* ``entries`` and ``tokens``: per prompt, mean and median, over all prompts and split into
  prompts with a useful document and prompts that need no memory (empty gold);
* ``precision``: useful entries / injected entries, averaged over the prompts that injected
  anything (a no-memory prompt that injected something scores 0);
* ``right_document``: the share of prompts with a useful document for which at least one
  useful document was injected;
* ``no_memory``: how many no-memory prompts injected anything, and how much.

An entry is useful when its document, or one of its identical copies, is judged useful.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memtrove.eval.metrics import mean, percentile

__all__ = ["InjectedPrompt", "injection_summary", "useful_references"]


@dataclass(frozen=True)
class InjectedPrompt:
    """One prompt's injection: its entries (``(reference, *copies)`` each) and tokens."""

    id: str
    entries: tuple[tuple[str, ...], ...]
    tokens: int
    useful: frozenset[str] = frozenset()
    session: str | None = None
    tags: tuple[str, ...] = ()

    @property
    def needs_memory(self) -> bool:
        return bool(self.useful)

    @property
    def useful_entries(self) -> int:
        return sum(1 for entry in self.entries if self.useful.intersection(entry))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "session": self.session,
            "entries": len(self.entries),
            "tokens": self.tokens,
            "useful_entries": self.useful_entries,
            "injected": [entry[0] for entry in self.entries],
            "copies": {entry[0]: list(entry[1:]) for entry in self.entries if len(entry) > 1},
            "useful": sorted(self.useful),
        }

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> InjectedPrompt:
        """The prompt back from :meth:`to_dict` (to summarise a subset of a report)."""
        copies = row.get("copies", {})
        return cls(
            id=str(row["id"]),
            entries=tuple((ref, *copies.get(ref, ())) for ref in row["injected"]),
            tokens=int(row["tokens"]),
            useful=frozenset(row["useful"]),
            session=row.get("session"),
        )


def _spread(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"mean": 0.0, "p50": 0.0, "max": 0.0}
    return {
        "mean": round(mean(values), 1),
        "p50": round(percentile(values, 0.50), 1),
        "max": float(max(values)),
    }


def _amounts(prompts: Sequence[InjectedPrompt]) -> dict[str, Any]:
    return {
        "prompts": len(prompts),
        "entries": _spread([float(len(p.entries)) for p in prompts]),
        "tokens": _spread([float(p.tokens) for p in prompts]),
    }


def injection_summary(prompts: Iterable[InjectedPrompt]) -> dict[str, Any]:
    """The figures above for ``prompts`` (see the module docstring); JSON-ready."""
    rows = list(prompts)
    answerable = [p for p in rows if p.needs_memory]
    no_memory = [p for p in rows if not p.needs_memory]
    injected = [p for p in rows if p.entries]
    precisions = [p.useful_entries / len(p.entries) for p in injected]
    right = sum(1 for p in answerable if p.useful_entries)
    return {
        **_amounts(rows),
        "precision": round(mean(precisions), 4) if precisions else 0.0,
        "prompts_injected": len(injected),
        "right_document": round(right / len(answerable), 4) if answerable else 0.0,
        "right_document_prompts": right,
        "answerable": _amounts(answerable),
        "no_memory": {
            **_amounts(no_memory),
            "prompts_injected": sum(1 for p in no_memory if p.entries),
        },
    }


def useful_references(gains: Mapping[str, float]) -> frozenset[str]:
    """The judged references that count as useful (a positive gain)."""
    return frozenset(reference for reference, gain in gains.items() if gain > 0)
