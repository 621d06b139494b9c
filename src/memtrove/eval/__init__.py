"""Retrieval-quality evaluation: ``memtrove eval locomo|beir|gold|run``.

Each task drives the public :class:`~memtrove.Vault` API exactly as a user would (index
files, then call one retrieval method per query) and reports mean metrics and per-query
latency. The package sits above the facade, next to the interfaces; the CLI in
:mod:`memtrove.cli.evaluate` only parses arguments and prints what these functions return.

- :func:`run_locomo`: LoCoMo dialogue-turn recall (R@5, R@10, SessR@5, SessR@10, MRR);
- :func:`run_beir`: any BEIR-format folder (nDCG@10, R@10, R@100, MRR);
- :func:`run_gold`: hand-judged JSONL gold sets against an existing vault (:func:`load_gold`);
- ``eval run``: the same gold sets replayed through ``query`` with ClawMem's trust gate
  (:mod:`memtrove.eval.replay`), its ``run.json`` and ``report.md`` written by
  :mod:`memtrove.eval.run_files`.
"""

from memtrove.eval.beir import RANKING_METRICS, run_beir
from memtrove.eval.gold import MODE_METHODS, GoldEvidence, GoldExample, load_gold, run_gold
from memtrove.eval.locomo import LOCOMO_METRICS, LocomoReport, run_locomo, turn_document
from memtrove.eval.runner import (
    DEFAULT_METHOD,
    METHODS,
    ProgressCallback,
    RankingReport,
    check_method,
    retrieve,
)

__all__ = [
    "DEFAULT_METHOD",
    "LOCOMO_METRICS",
    "METHODS",
    "MODE_METHODS",
    "RANKING_METRICS",
    "GoldEvidence",
    "GoldExample",
    "LocomoReport",
    "ProgressCallback",
    "RankingReport",
    "check_method",
    "load_gold",
    "retrieve",
    "run_beir",
    "run_gold",
    "run_locomo",
    "turn_document",
]
