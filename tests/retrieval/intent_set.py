"""The judged why/entity set: questions whose answers need an edge between documents.

An invented engineering team's notes under ``tests/fixtures/intent/``:

- ``docs/**.md``: three postmortem -> decision -> follow-up chains (billing connection
  pool, refresh-token grace window, blue/green reindexing), a person named three ways in
  several notes (``Priya Raman``, ``@praman``, ``P. Raman``), a fact that changed over time
  (thumbnail jobs on Redis, then on Postgres), and unrelated notes;
- ``edges.json``: ``[source, target, type, weight]`` rows, the edges A-MEM, causal
  inference and entity resolution would write (causal along each chain, semantic and
  supporting back-links, entity edges between the notes naming the same person or
  service), written with :meth:`Vault.relate`;
- ``questions.jsonl``: gold-format questions (collection ``intent``) tagged ``why``,
  ``entity``, ``what`` or ``when``.

The cause of a decision is worded unlike the question about it ("PgBouncer" vs "invoices
stuck"), so keyword and vector search alone rank it low.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from memtrove.eval.gold import load_gold
from memtrove.eval.runner import retrieve
from memtrove.vault import Vault

__all__ = ["COLLECTION", "EDGES", "KINDS", "QUESTIONS", "build", "measure"]

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "intent"
DOCS = ROOT / "docs"
EDGES = ROOT / "edges.json"
QUESTIONS = ROOT / "questions.jsonl"
COLLECTION = "intent"
KINDS = ("why", "entity", "what", "when")


def build(folder: Path, *, embed: bool = True, edges: bool = True) -> Vault:
    """A vault over a copy of the set's documents in ``folder`` (indexed, embedded, related)."""
    notes = folder / "notes"
    shutil.copytree(DOCS, notes)
    vault = Vault.open(folder / "vault.sqlite", config_dir=folder / "config")
    vault.add_collection(notes, name=COLLECTION)
    vault.update()
    if embed:
        vault.embed()
    if edges:
        for source, target, kind, weight in json.loads(EDGES.read_text(encoding="utf-8")):
            vault.graph.relate(f"{COLLECTION}/{source}", f"{COLLECTION}/{target}", kind, weight)
    return vault


def measure(vault: Vault, methods: tuple[str, ...]) -> dict[str, dict[str, dict[str, float]]]:
    """method -> question kind -> ``{"R@5", "MRR", "n"}`` over the judged questions (MRR:
    the reciprocal rank of the first judged document in the top 10)."""
    examples = load_gold(QUESTIONS)
    table: dict[str, dict[str, dict[str, float]]] = {}
    for method in methods:
        sums: dict[str, list[float]] = {kind: [0.0, 0.0, 0.0] for kind in KINDS}
        for example in examples:
            kind = example.tags[0]
            relevant = {evidence.path for evidence in example.gold_evidence}
            found = [r.path for r in retrieve(vault, method, example.query, 10, [COLLECTION])]
            rank = next((i for i, path in enumerate(found, 1) if path in relevant), None)
            sums[kind][0] += len(relevant & set(found[:5])) / len(relevant)
            sums[kind][1] += 1.0 / rank if rank else 0.0
            sums[kind][2] += 1
        table[method] = {
            kind: {"R@5": round(r / n, 3), "MRR": round(m / n, 3), "n": int(n)}
            for kind, (r, m, n) in sums.items()
            if n
        }
    return table
