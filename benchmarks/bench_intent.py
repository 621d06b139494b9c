"""intent_search against query (and hybrid, query_plan) on the judged why/entity set.

Prints R@5 and MRR per question kind (why, entity, what, when) for each method, built on
a scratch copy of ``tests/fixtures/intent`` (see ``tests/retrieval/intent_set.py``)::

    .venv/bin/python benchmarks/bench_intent.py [--json]
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.retrieval.intent_set import COLLECTION, QUESTIONS, build

from memtrove.eval.gold import load_gold
from memtrove.eval.runner import retrieve
from memtrove.vault import Vault

METHODS = ("query", "hybrid", "intent", "plan")
KINDS = ("why", "entity", "what", "when")


def measure(
    vault: Vault, methods: tuple[str, ...] = METHODS
) -> dict[str, dict[str, dict[str, float]]]:
    """method -> kind -> {"R@5", "MRR", "n"} over the judged questions."""
    examples = load_gold(QUESTIONS)
    table: dict[str, dict[str, dict[str, float]]] = {}
    for method in methods:
        sums: dict[str, list[float]] = {kind: [0.0, 0.0, 0.0] for kind in KINDS}
        for example in examples:
            kind = example.tags[0]
            relevant = {evidence.path for evidence in example.gold_evidence}
            found = [r.path for r in retrieve(vault, method, example.query, 10, [COLLECTION])]
            recall = len(relevant & set(found[:5])) / len(relevant)
            rank = next((i for i, path in enumerate(found, 1) if path in relevant), None)
            sums[kind][0] += recall
            sums[kind][1] += 1.0 / rank if rank else 0.0
            sums[kind][2] += 1
        table[method] = {
            kind: {"R@5": round(r / n, 3), "MRR": round(m / n, 3), "n": int(n)}
            for kind, (r, m, n) in sums.items()
            if n
        }
    return table


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        vault = build(Path(folder))
        try:
            table = measure(vault)
        finally:
            vault.close()
    if "--json" in sys.argv:
        print(json.dumps(table, indent=2))
        return
    print(f"{'method':8} " + " ".join(f"{kind + ' R@5':>11} {kind + ' MRR':>11}" for kind in KINDS))
    for method, kinds in table.items():
        cells = " ".join(f"{kinds[k]['R@5']:>11.3f} {kinds[k]['MRR']:>11.3f}" for k in KINDS)
        print(f"{method:8} {cells}")


if __name__ == "__main__":
    main()
