"""The judged temporal/entity set: questions the query pipeline's conditional channels answer.

An invented team's dated notes under ``tests/fixtures/channels/``:

- ``docs/**.md``: weekly on-call reports that read alike but page for different things
  (only the month tells them apart), a session store before and after its migration, a
  launch with an incident on each side of it, build and search-cluster changes in
  different years, two retry decisions (one last week, dated relative to today: the
  ``{{last_week}}`` and ``{{days_ago N}}`` placeholders), infrastructure notes that say
  ``k8s`` and ``postgres`` where the questions say Kubernetes and PostgreSQL, and a service
  whose failure mode is written in a note that never names it (linked by a shared entity);
- ``questions.jsonl``: gold-format questions (collection ``channels``) tagged ``temporal``,
  ``entity`` or ``control`` (no time, no known entity: ranked exactly as before).

Entities come from the heuristic extractor (:meth:`Vault.knowledge.enrich_entities` without an LLM),
as ``memtrove entities`` writes them.
"""

from __future__ import annotations

import re
import shutil
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from memtrove.eval.gold import load_gold
from memtrove.eval.runner import retrieve
from memtrove.vault import Vault

__all__ = ["COLLECTION", "KINDS", "QUESTIONS", "build", "measure"]

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "channels"
DOCS = ROOT / "docs"
QUESTIONS = ROOT / "questions.jsonl"
COLLECTION = "channels"
KINDS = ("temporal", "entity", "control")
_PLACEHOLDER = re.compile(r"\{\{(last_week|days_ago (\d+))\}\}")


def _dated(text: str, today: date) -> str:
    def replace(match: re.Match[str]) -> str:
        if match[2]:
            return (today - timedelta(days=int(match[2]))).isoformat()
        monday = today - timedelta(days=today.weekday())
        return (monday - timedelta(days=5)).isoformat()  # Wednesday of last week

    return _PLACEHOLDER.sub(replace, text)


def build(folder: Path, *, embed: bool = True, entities: bool = True) -> Vault:
    """A vault over a copy of the set's notes in ``folder`` (indexed, embedded, and with
    entities extracted unless ``entities=False``)."""
    notes = folder / "notes"
    shutil.copytree(DOCS, notes)
    today = datetime.now(UTC).date()
    for path in notes.rglob("*.md"):
        text = path.read_text(encoding="utf-8")
        if "{{" in text:
            path.write_text(_dated(text, today), encoding="utf-8")
    vault = Vault.open(folder / "vault.sqlite", config_dir=folder / "config")
    vault.add_collection(notes, name=COLLECTION)
    vault.update()
    if embed:
        vault.embed()
    if entities:
        vault.knowledge.enrich_entities(use_llm=False)
    return vault


def measure(vault: Vault, method: str = "query") -> dict[str, dict[str, float]]:
    """Question kind -> ``{"R@5", "MRR", "n"}`` (MRR: reciprocal rank of the first judged
    document in the top 10)."""
    sums: dict[str, list[float]] = {kind: [0.0, 0.0, 0.0] for kind in KINDS}
    for example in load_gold(QUESTIONS):
        kind = example.tags[0]
        relevant = {evidence.path for evidence in example.gold_evidence}
        found = [r.path for r in retrieve(vault, method, example.query, 10, [COLLECTION])]
        rank = next((i for i, path in enumerate(found, 1) if path in relevant), None)
        sums[kind][0] += len(relevant & set(found[:5])) / len(relevant)
        sums[kind][1] += 1.0 / rank if rank else 0.0
        sums[kind][2] += 1
    return {
        kind: {"R@5": round(r / n, 3), "MRR": round(m / n, 3), "n": int(n)}
        for kind, (r, m, n) in sums.items()
        if n
    }
