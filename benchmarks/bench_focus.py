"""What a session focus topic does to context-surfacing on LoCoMo.

``eval locomo`` sets no focus (its hook sessions have no focus file), so the focus boost
cannot move its figures. This asks what it does when a topic is set: every question of the
LoCoMo dev conversations goes through the context-surfacing hook (gates off, as ``eval
locomo --method surfacing``) four times:

none
    no focus (``eval locomo -m surfacing``'s figures);
asked
    the focus is the conversation's speaker the question names ("What did Caroline
    research?" -> ``caroline``): a user steering towards the person they ask about;
other
    the focus is the *other* speaker: a topic set for something else;
unmatched
    a topic no turn contains (``zanzibar``): must change nothing.

Questions naming neither speaker (or both) keep no focus in every run. Reported: R@10, MRR
and hit@3 over all scored questions and over those with a focus. Run from the repository
root::

    .venv/bin/python benchmarks/bench_focus.py PATH/locomo-dev.json [--json]
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from memtrove.eval.locomo import (
    COLLECTION,
    RETRIEVE_LIMIT,
    conversation_turns,
    index_turns,
    load_locomo,
    normalise_evidence,
    question_metrics,
)
from memtrove.eval.runner import MetricTable, retrieved_paths, scratch_vault
from memtrove.eval.surfacing import Surfacer
from memtrove.hooks import context_surfacing
from memtrove.hooks.events import HookEvent
from memtrove.results import SearchResult, SearchResults

RUNS = ("none", "asked", "other", "unmatched")
METRICS = ("R@10", "MRR", "hit@3")


def _topic(question: str, speakers: list[str], run: str) -> str:
    named = [s for s in speakers if re.search(rf"\b{re.escape(s)}\b", question, re.I)]
    if run == "none" or len(named) != 1:
        return ""
    if run == "asked":
        return named[0]
    if run == "other":
        return next(s for s in speakers if s != named[0])
    return "zanzibar"


def _ask(surfacing: Surfacer, question: str, topic: str) -> SearchResults:
    settings = surfacing._settings._replace(session_focus=topic)
    event = HookEvent(
        hook_event_name=context_surfacing.EVENT_NAME, session_id="bench-focus", prompt=question
    )
    result = context_surfacing.run(event, settings, lambda: surfacing.vault, surfacing._log)
    results = SearchResults(stages=["surfacing"])
    for rank, key in enumerate(result.surfaced[:RETRIEVE_LIMIT]):
        collection, _, path = key.partition("/")
        results.append(SearchResult("", collection, path, "", 1.0 / (rank + 1), "", "", ""))
    return results


def run(path: Path) -> dict[str, Any]:
    tables = {(run, part): MetricTable(METRICS) for run in RUNS for part in ("all", "focused")}
    for sample in load_locomo(path):
        turns = conversation_turns(sample)
        speakers = sorted({turn.speaker for turn in turns})
        with scratch_vault() as (vault, folder):
            turns_of = index_turns(vault, turns, folder, "surfacing", [])
            surfacing = Surfacer(vault)
            known = [turn.dia_id for turn in turns]
            for qa in sample.get("qa", []):
                evidence, _ = normalise_evidence(qa.get("evidence", []), known)
                if not evidence:
                    continue
                question = str(qa.get("question", ""))
                for name in RUNS:
                    topic = _topic(question, speakers, name)
                    found = _ask(surfacing, question, topic)
                    paths = retrieved_paths(found, COLLECTION)
                    ranking = [dia for p in paths for dia in turns_of.get(p, [])]
                    values = question_metrics(ranking, evidence)
                    tables[(name, "all")].add(values)
                    if _topic(question, speakers, "asked"):
                        tables[(name, "focused")].add(values)
    return {
        f"{name}/{part}": {**table.means(), "n": len(table)}
        for (name, part), table in tables.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--json", action="store_true")
    arguments = parser.parse_args()
    figures = run(arguments.path)
    if arguments.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"{'run':22} {'n':>5} " + " ".join(f"{m:>7}" for m in METRICS))
    for key, values in figures.items():
        row = " ".join(f"{values[m]:7.3f}" for m in METRICS)
        print(f"{key:22} {values['n']:5d} {row}")


if __name__ == "__main__":
    main()
