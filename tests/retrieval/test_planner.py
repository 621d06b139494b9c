"""query_plan: decomposition (heuristic, LLM), running the clauses, provenance."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtrove.models.registry import ModelSettings
from memtrove.retrieval.planner import MAX_CLAUSES, decompose_heuristic, parse_plan
from memtrove.vault import Vault
from tests.conftest import write
from tests.fakes.model_server import ModelServer


@pytest.mark.parametrize(
    ("query", "clauses"),
    [
        (
            "How do we deploy? What is the on-call handover day?",
            ["How do we deploy", "What is the on-call handover day"],
        ),
        ("compare libvips and Pillow for thumbnails", ["libvips", "Pillow for thumbnails"]),
        ("arq vs celery", ["arq", "celery"]),
        (
            "backup schedule; feature flag cleanup and also the review rules",
            ["backup schedule", "feature flag cleanup", "the review rules"],
        ),
        ("refresh token rotation", []),
    ],
)
def test_the_heuristic_split(query: str, clauses: list[str]) -> None:
    found = decompose_heuristic(query)
    assert found[0].source == "question" and found[0].query == " ".join(query.split())
    assert [clause.query for clause in found[1:]] == clauses
    assert all(clause.priority == 2 and clause.type == "graph" for clause in found[1:])


def test_a_long_list_is_capped() -> None:
    found = decompose_heuristic("; ".join(f"topic number {n}" for n in range(20)))
    assert len(found) == MAX_CLAUSES


@pytest.mark.parametrize(
    ("answer", "queries"),
    [
        ('[{"query": "deploys", "type": "bm25", "priority": 1}]', ["deploys"]),
        ('```json\n[{"query": "a b", "type": "odd", "priority": 9}]\n```', ["a b"]),
        ('[{"query": "x"}, {"query": ""}, 3, {"type": "bm25"}]', ["x"]),
        ('[{"query": "deploys", "type": "bm2', []),
        ("no plan here", []),
        ('{"query": "not a list"}', []),
    ],
)
def test_parsing_the_llm_plan(answer: str, queries: list[str]) -> None:
    found = parse_plan(answer)
    assert [clause.query for clause in found] == queries
    assert all(clause.type in ("bm25", "vector", "graph") for clause in found)
    assert all(1 <= clause.priority <= 5 for clause in found)


@pytest.fixture
def notes(notes: Path) -> Path:
    write(notes, "deploy.md", "# How we deploy\n\nCanary first, then the fleet.\n")
    write(notes, "oncall.md", "# On-call\n\nHandover on Mondays at ten.\n")
    write(notes, "garden.md", "# Garden\n\nTomatoes and compost.\n")
    return notes


def opened(tmp_path: Path, notes: Path, models: ModelSettings | None = None) -> Vault:
    vault = Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "c", models=models)
    vault.add_collection(notes, name="notes")
    vault.update()
    vault.embed()
    return vault


def test_without_an_llm_the_plan_finds_each_topic_with_provenance(
    tmp_path: Path, notes: Path
) -> None:
    with opened(tmp_path, notes) as vault:
        found = vault.intent.query_plan("how do we deploy; when is the on-call handover")
        assert {r.path for r in found[:2]} == {"deploy.md", "oncall.md"}
        assert [clause.source for clause in found.clauses] == ["question", "heuristic", "heuristic"]
        assert "llm decomposition" in found.skipped
        data = found.to_dict()
        by_path = {item["path"]: item["clauses"] for item in data["results"]}
        assert 1 in by_path["deploy.md"] and 2 in by_path["oncall.md"]
        assert len(data["clauses"]) == 3


def test_the_llm_plan_runs_and_a_bad_one_falls_back(
    tmp_path: Path, notes: Path, model_server: ModelServer
) -> None:
    model_server.set_chat_reply(
        '[{"query": "canary fleet", "type": "bm25", "priority": 1},'
        ' {"query": "Mondays handover", "type": "vector", "priority": 2}]'
    )
    with opened(tmp_path, notes, ModelSettings(llm_url=model_server.url)) as vault:
        found = vault.intent.query_plan("release process and rota")
        assert [clause.source for clause in found.clauses] == ["question", "llm", "llm"]
        assert found.clauses[1].type == "bm25" and found[0].path == "deploy.md"
        assert "oncall.md" in {r.path for r in found}
        vault.intent.query_plan("release process and rota")  # cached: no second call
        assert len(model_server.requests_to("chat")) == 1
        model_server.set_chat_reply('[{"query": "canary", "ty')
        broken = vault.intent.query_plan("deploy process; on-call handover")
        assert [clause.source for clause in broken.clauses] == [
            "question",
            "heuristic",
            "heuristic",
        ]
        assert broken.warnings and broken
        model_server.set_mode("chat", "http500")
        failed = vault.intent.query_plan("deploys, and also the on-call handover")
        assert failed.warnings and failed


@pytest.mark.parametrize("query", ["", "?;?;", "\x00", "and " * 3000])
def test_hostile_questions(tmp_path: Path, notes: Path, query: str) -> None:
    with opened(tmp_path, notes) as vault:
        found = vault.intent.query_plan(query)
        assert len(found.clauses) <= MAX_CLAUSES
        found.to_dict()
