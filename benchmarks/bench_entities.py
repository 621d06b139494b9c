"""How well the heuristic entity extractor does without an LLM: precision and recall
against hand-labelled Go proposals.

The labels (document file name -> the entities it names) were written by reading each
document: ``tests/graph/entity_labels.json``, the 15 documents the heuristic was tuned on,
and ``tests/graph/entity_labels_heldout.json``, 10 other documents labelled afterwards and
never tuned on (both are measured; ``--heldout`` prints the held-out sample's misses with
``--verbose``). The documents themselves are read at run time from
``../shared/bench/prose/go-proposals/`` (``--folder``) and never copied. Each
document's title is its first ``#`` heading. Names are compared normalised (lowercase,
quotes, backticks, ``()``, ``/...``, a leading ``@``/``$``/``,``/``//`` dropped).
Precision and recall are micro-averaged over every (document, entity) pair; the
per-document figures and the misses are printed with ``--verbose``. Also times the
extractor on those documents (documents per second, extraction and filters, no database),
and ``Vault.knowledge.enrich_entities`` without an LLM over the generated corpus of ``--corpus``
notes (default 1,000 of ~2 KB, ``corpus.py``): extraction, resolution, mentions,
co-occurrences and entity edges, first run and re-run (``everything=True``).

Run from the repository root::

    .venv/bin/python benchmarks/bench_entities.py [--folder PATH] [--verbose] [--heldout] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LABELS = ROOT / "tests" / "graph" / "entity_labels.json"
HELDOUT = ROOT / "tests" / "graph" / "entity_labels_heldout.json"
DEFAULT_FOLDER = ROOT.parent / "shared" / "bench" / "prose" / "go-proposals"
_STRIP = re.compile(r"[`\"'*“”‘’]")


def normalise(name: str) -> str:
    text = _STRIP.sub("", name).strip().lower()
    text = text.removesuffix("()").removesuffix("/...").removesuffix("/…")
    text = text.lstrip("@$,").removeprefix("//")
    return " ".join(text.split()).strip(" .:")


def title_of(body: str, fallback: str) -> str:
    for line in body.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return fallback


def measure(folder: Path, labels: dict[str, list[str]]) -> dict[str, Any]:
    """Micro precision and recall of the heuristic over the labelled documents."""
    from memtrove.graph.entities import filter_entities, heuristic_entities

    found_total = expected_total = hits_total = 0
    documents: dict[str, Any] = {}
    elapsed = 0.0
    for name, expected_names in sorted(labels.items()):
        body = (folder / name).read_text(encoding="utf-8")
        title = title_of(body, name)
        started = time.perf_counter()
        kept, _ = filter_entities(heuristic_entities(title, body), title)
        elapsed += time.perf_counter() - started
        found = {normalise(entity.name) for entity in kept}
        expected = {normalise(entity) for entity in expected_names}
        hits = found & expected
        found_total += len(found)
        expected_total += len(expected)
        hits_total += len(hits)
        documents[name] = {
            "precision": len(hits) / len(found) if found else 1.0,
            "recall": len(hits) / len(expected) if expected else 1.0,
            "missed": sorted(expected - found),
            "extra": sorted(found - expected),
        }
    return {
        "documents": len(labels),
        "precision": hits_total / found_total if found_total else 1.0,
        "recall": hits_total / expected_total if expected_total else 1.0,
        "found": found_total,
        "expected": expected_total,
        "documents_per_second": len(labels) / elapsed if elapsed else float("inf"),
        "per_document": documents,
    }


def measure_vault(count: int) -> dict[str, Any]:
    """``enrich_entities`` (no LLM) over ``count`` generated notes: documents per second."""
    import tempfile

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from corpus import generate_corpus
    from memtrove import Vault

    with tempfile.TemporaryDirectory(prefix="bench-entities-") as folder:
        root = Path(folder)
        generate_corpus(root / "corpus", count)
        with Vault.open(root / "vault.sqlite", config_dir=root / "config") as vault:
            vault.add_collection(root / "corpus", name="corpus")
            vault.update()
            started = time.perf_counter()
            first = vault.knowledge.enrich_entities(use_llm=False)
            first_seconds = time.perf_counter() - started
            started = time.perf_counter()
            vault.knowledge.enrich_entities(everything=True, use_llm=False)
            again_seconds = time.perf_counter() - started
    return {
        "notes": count,
        "entities": first["entities"],
        "entity_edges": first["entity_edges"],
        "first_run_per_second": count / first_seconds,
        "rerun_per_second": count / again_seconds,
    }


def load_labels(path: Path = LABELS) -> dict[str, list[str]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {key: value for key, value in data.items() if not key.startswith("_")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument(
        "--heldout", action="store_true", help="--verbose lists the held-out sample's documents"
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--corpus", type=int, default=1000, help="notes for the vault run (0: skip)"
    )
    arguments = parser.parse_args()
    if not arguments.folder.is_dir():
        print(f"bench_entities: no folder {arguments.folder}", file=sys.stderr)
        return 1
    result = measure(arguments.folder, load_labels())
    result["heldout"] = measure(arguments.folder, load_labels(HELDOUT))
    if arguments.corpus > 0:
        result["vault"] = measure_vault(arguments.corpus)
    if arguments.json:
        print(json.dumps(result, indent=2))
        return 0
    for label, figures in (("tuning", result), ("held-out", result["heldout"])):
        print(
            f"heuristic entities on {figures['documents']} labelled go-proposals ({label}): "
            f"precision {figures['precision']:.3f}, recall {figures['recall']:.3f} "
            f"({figures['found']} found, {figures['expected']} expected), "
            f"{figures['documents_per_second']:.0f} documents/s"
        )
    if "vault" in result:
        vault = result["vault"]
        print(
            f"enrich_entities without an LLM on {vault['notes']} generated notes: "
            f"{vault['first_run_per_second']:.0f} documents/s first run, "
            f"{vault['rerun_per_second']:.0f} documents/s re-run "
            f"({vault['entities']} mentions, {vault['entity_edges']} entity links)"
        )
    if arguments.verbose:
        shown = result["heldout"] if arguments.heldout else result
        for name, figures in shown["per_document"].items():
            print(
                f"  {name}: P {figures['precision']:.2f} R {figures['recall']:.2f}"
                f"  missed {figures['missed']}  extra {figures['extra']}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
