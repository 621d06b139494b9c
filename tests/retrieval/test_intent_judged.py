"""The judged why/entity set: intent_search beats query where the answer needs an edge."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.retrieval.intent_set import build, measure


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, dict[str, float]]]:
    vault = build(tmp_path_factory.mktemp("intent-set"))
    try:
        return measure(vault, ("query", "intent"))
    finally:
        vault.close()


@pytest.mark.parametrize("kind", ["why", "entity"])
def test_intent_search_beats_query_on_why_and_entity(
    table: dict[str, dict[str, dict[str, float]]], kind: str
) -> None:
    intent, query = table["intent"][kind], table["query"][kind]
    assert intent["R@5"] > query["R@5"] and intent["MRR"] > query["MRR"], (intent, query)


@pytest.mark.parametrize("kind", ["what", "when"])
def test_and_is_no_worse_on_plain_questions(
    table: dict[str, dict[str, dict[str, float]]], kind: str
) -> None:
    intent, query = table["intent"][kind], table["query"][kind]
    assert intent["R@5"] >= query["R@5"] and intent["MRR"] >= query["MRR"], (intent, query)


def test_without_the_edges_the_advantage_goes(tmp_path: Path) -> None:
    """The gain comes from the graph: the same set without edges ranks no better on WHY."""
    with_edges = build(tmp_path / "edges")
    try:
        linked = measure(with_edges, ("intent",))["intent"]["why"]
    finally:
        with_edges.close()
    vault = build(tmp_path / "plain", edges=False)
    try:
        plain = measure(vault, ("intent",))["intent"]["why"]
    finally:
        vault.close()
    assert plain["MRR"] < linked["MRR"] - 0.05 and plain["R@5"] < linked["R@5"], (plain, linked)
