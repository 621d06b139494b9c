"""The project's judged sets, end to end: what agents receive never ranks below the simpler
paths, and the composite signals decide the cases they should (README, "Composite
scoring"). The Go design documents are read from ../shared/bench at test time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.eval.gold import GoldExample, load_gold, run_gold
from memtrove.eval.runner import TimedRetriever
from tests.benchmarks import composite_set

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
GO_DOCS = Path(__file__).resolve().parents[3] / "shared" / "bench" / "prose" / "go-proposals"
AGENT_PATHS = ("query", "surfacing")


@pytest.fixture(scope="module")
def composite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vault]:
    vault = composite_set.open_vault(tmp_path_factory.mktemp("composite"), embed=True)
    yield vault
    vault.close()


def _first(vault: Vault, examples: list[GoldExample], method: str) -> dict[str, bool]:
    """Each example: is a weight-2 document ranked first?"""
    out: dict[str, bool] = {}
    for example in examples:
        report = run_gold(vault, [example], method=method)
        out[example.id] = report.metrics["MRR"] == 1.0
    return out


# One snoozed case is a lexical near-tie once the snoozed best match is out of the way:
# cs-16 ("how do I purge an image from the CDN?": a decision explaining the purge design
# against a how-to note, 0.65 / 0.60 in query). The snooze itself holds: the snoozed
# document is never first.
NEAR_TIES = {"query": {"cs-16"}, "surfacing": {"cs-16"}}


@pytest.mark.parametrize("method", AGENT_PATHS)
def test_composite_signals_decide_their_cases(composite: Vault, method: str) -> None:
    examples = load_gold(composite_set.QUESTIONS)
    first = _first(composite, examples, method)
    missed = {e.id: e.tags for e in examples if not first[e.id]}
    assert set(missed) <= NEAR_TIES[method], missed
    snoozed = {f"composite/{path}" for path in composite_set.load_setup().snooze}
    top = TimedRetriever(composite, method)
    for example in examples:
        if "snoozed" in example.tags:
            results = top(example.query, 1, ["composite"])
            assert results and f"{results[0].collection}/{results[0].path}" not in snoozed


def test_composite_set_keeps_the_order_of_paths(composite: Vault) -> None:
    examples = load_gold(composite_set.QUESTIONS)
    scores = {m: run_gold(composite, examples, method=m).metrics for m in ("bm25", "hybrid")}
    for method in AGENT_PATHS:
        scores[method] = run_gold(composite, examples, method=method).metrics
    for metric in ("nDCG@10", "R@10"):
        assert scores["hybrid"][metric] >= scores["bm25"][metric]
        assert scores["query"][metric] >= scores["hybrid"][metric] - 0.005
        assert scores["surfacing"][metric] >= scores["bm25"][metric]


@pytest.fixture(scope="module")
def go(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vault]:
    if not GO_DOCS.is_dir():
        pytest.skip(f"{GO_DOCS} is not here")
    root = tmp_path_factory.mktemp("go")
    vault = Vault.open(root / "vault.sqlite", config_dir=root / "config")
    vault.add_collection(GO_DOCS, name="go")
    vault.update()
    vault.embed()
    yield vault
    vault.close()


@pytest.mark.slow
def test_go_proposals_agent_paths_rank_at_least_as_well(go: Vault) -> None:
    examples = load_gold(BENCHMARKS / "go_proposals.jsonl")
    scores = {m: run_gold(go, examples, method=m).metrics for m in ("bm25", "hybrid", *AGENT_PATHS)}
    assert scores["hybrid"]["nDCG@10"] >= scores["bm25"]["nDCG@10"]
    # R@10: one weight-1 document at BM25 rank 9 of a four-document question (go-27)
    # leaves hybrid's top 10, which costs .006.
    assert scores["hybrid"]["R@10"] >= scores["bm25"]["R@10"] - 0.01
    for metric in ("nDCG@10", "R@10"):
        assert scores["query"][metric] >= scores["hybrid"][metric] - 0.005, metric
    assert scores["query"]["nDCG@10"] >= scores["bm25"]["nDCG@10"]
    assert scores["query"]["hit@3"] >= scores["bm25"]["hit@3"]
    # The hook injects only what leads (profiles.LEAD_RATIO), so lists judged at ten are
    # not its measure: the right record among the first three it gives, and first, is.
    assert scores["surfacing"]["hit@3"] >= scores["query"]["hit@3"]
    assert scores["surfacing"]["MRR"] >= scores["query"]["MRR"]


@pytest.mark.slow
@pytest.mark.parametrize("file", ["go_proposals.jsonl", "go_proposals_sessions.jsonl"])
def test_one_session_loses_at_most_two_top_three_hits(go: Vault, file: str) -> None:
    examples = load_gold(BENCHMARKS / file)
    fresh = run_gold(go, examples, method="surfacing")
    session = run_gold(go, examples, method="surfacing", session=True)
    lost = (fresh.metrics["hit@3"] - session.metrics["hit@3"]) * fresh.n
    assert lost <= 2 + 1e-9, (fresh.metrics, session.metrics)
