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

from tests.retrieval.intent_set import KINDS, build, measure

METHODS = ("query", "hybrid", "intent", "plan")


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        vault = build(Path(folder))
        try:
            table = measure(vault, METHODS)
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
