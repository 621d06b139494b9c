"""What recall the exchange as a unit allows: the per-turn ranking read as exchanges.

``eval locomo --mined`` retrieves exchanges (a user turn and its replies). At equal text (the
first ten turns of the exchanges retrieved) the vector methods score below the per-turn
eval. This asks how much of that is the unit rather than the import: each LoCoMo dev
conversation is indexed one document per turn (as ``eval locomo`` does), and every
question's per-turn ranking (the first 30 turns) is read as the exchanges its turns belong
to, in the order their first turn ranks, each standing for all its turns. The exchanges are
the ones ``mine`` cuts from the Claude Code sessions the eval writes
(``memtrove.eval.locomo_mined``). Reported per method:

per_turn
    R@10 of the per-turn ranking (``eval locomo``'s figure).
as_exchanges_equal_text
    R@10 over the first ten turns of that ranking read as exchanges: what a mined
    collection ranking its exchanges exactly as the per-turn search ranks turns would score
    at equal text.
as_exchanges_ten
    recall over every turn of the first ten such exchanges.

No timing; the figures move by about .001 from run to run (recency counts from the moment
of the run). Run from the repository root::

    .venv/bin/python benchmarks/bench_mined_recall.py [--methods bm25,hybrid] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from memtrove.eval.locomo import (
    COLLECTION,
    conversation_turns,
    index_turns,
    load_locomo,
    normalise_evidence,
    parse_session_date,
    question_metrics,
)
from memtrove.eval.locomo_mined import exchange_turns, write_sessions
from memtrove.eval.metrics import coverage, recall_at_k
from memtrove.eval.runner import TimedRetriever, retrieved_paths, scratch_vault

ROOT = Path(__file__).resolve().parent.parent
LOCOMO = ROOT.parent / "shared" / "bench" / "locomo" / "locomo-dev.json"
DEPTH = 30


def measure(method: str, path: Path) -> dict[str, float]:
    per_turn: list[float] = []
    equal_text: list[float] = []
    ten: list[float] = []
    for sample in load_locomo(path):
        turns = conversation_turns(sample)
        with tempfile.TemporaryDirectory() as folder:
            write_sessions(sample, turns, Path(folder), parse_session_date)
            groups = list(exchange_turns(Path(folder)).values())
        exchange_of = {dia_id: index for index, held in enumerate(groups) for dia_id in held}
        with scratch_vault() as (vault, docs):
            held = index_turns(vault, turns, docs, method, [])
            paths = {path: dia_ids[0] for path, dia_ids in held.items()}
            retriever = TimedRetriever(vault, method)
            known = [turn.dia_id for turn in turns]
            for qa in sample.get("qa", []):
                evidence, _ = normalise_evidence(qa.get("evidence", []), known)
                if not evidence:
                    continue
                results = retriever(str(qa.get("question", "")), DEPTH)
                ranking = [paths[p] for p in retrieved_paths(results, COLLECTION) if p in paths]
                per_turn.append(question_metrics(ranking[:10], evidence)["R@10"])
                order: list[int] = []
                for dia_id in ranking:
                    index = exchange_of.get(dia_id)
                    if index is not None and index not in order:
                        order.append(index)
                as_turns = [dia_id for index in order for dia_id in groups[index]]
                equal_text.append(recall_at_k(as_turns, evidence, 10))
                ten.append(coverage([d for i in order[:10] for d in groups[i]], evidence))
    return {
        "per_turn": round(sum(per_turn) / len(per_turn), 3),
        "as_exchanges_equal_text": round(sum(equal_text) / len(equal_text), 3),
        "as_exchanges_ten": round(sum(ten) / len(ten), 3),
        "questions": len(per_turn),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--methods", default="bm25,hybrid")
    parser.add_argument("--locomo", type=Path, default=LOCOMO)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not args.locomo.is_file():
        print(f"bench_mined_recall: no LoCoMo file at {args.locomo}", file=sys.stderr)
        return 2
    report = {method: measure(method, args.locomo) for method in args.methods.split(",")}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for method, figures in report.items():
            print(
                f"{method:8} per turn R@10 {figures['per_turn']:.3f}  as exchanges: first ten "
                f"turns {figures['as_exchanges_equal_text']:.3f}, ten exchanges "
                f"{figures['as_exchanges_ten']:.3f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
