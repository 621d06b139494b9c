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

from memtrove.vault import Vault

__all__ = ["COLLECTION", "EDGES", "QUESTIONS", "build"]

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "intent"
DOCS = ROOT / "docs"
EDGES = ROOT / "edges.json"
QUESTIONS = ROOT / "questions.jsonl"
COLLECTION = "intent"


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
            vault.relate(f"{COLLECTION}/{source}", f"{COLLECTION}/{target}", kind, weight)
    return vault
