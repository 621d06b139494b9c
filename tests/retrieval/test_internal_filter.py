"""Internal collections left out inside every channel's query, and ``degraded`` when a leg
fails: a vault where memtrove's own notes match the question better than the user's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.capture.turns import Turn
from memtrove.models.registry import ModelSettings
from tests.conftest import write
from tests.fakes.model_server import ModelServer

LIMIT = 3
QUERY = "grace window renewal"


@pytest.fixture
def crowded(tmp_path: Path, model_server: ModelServer) -> Iterator[Vault]:
    notes = tmp_path / "notes"
    for index in range(6):
        write(
            notes,
            f"billing/rule-{index}.md",
            f"---\ndate: 2026-03-0{index + 1}\n---\n# Renewal rule {index}\n\nThe renewal "
            f"grace window is {index + 2} days; invoices, ledgers and retries.\n",
        )
    settings = ModelSettings(embed_url=model_server.url, embed_dimensions=64)
    vault = Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "config", models=settings)
    vault.add_collection(notes, "notes")
    vault.update()
    for index in range(40):
        turns = [Turn(f"grace window renewal {index}?", ("grace window renewal. " * 3,), ())]
        vault.capture.write_handoff(f"s-{index:02d}", turns, use_llm=False)
    vault.embed()
    try:
        yield vault
    finally:
        vault.close()


def collections(results: list[object]) -> list[str]:
    return [r.collection for r in results]  # type: ignore[attr-defined]


def test_the_internal_notes_lead_when_nothing_is_left_out(crowded: Vault) -> None:
    assert collections(crowded.search(QUERY, LIMIT)) == ["_memtrove"] * LIMIT
    assert collections(crowded.vsearch(QUERY, LIMIT)) == ["_memtrove"] * LIMIT


@pytest.mark.parametrize(
    "method", ["search", "vsearch", "hybrid", "query", "intent_search", "query_plan"]
)
def test_every_method_fills_the_limit_without_them(crowded: Vault, method: str) -> None:
    area = crowded.intent if method in ("intent_search", "query_plan") else crowded
    results = getattr(area, method)(QUERY, LIMIT, include_internal=False)
    assert collections(results) == ["notes"] * LIMIT, method
    assert not results.degraded, results.degraded_reason


@pytest.mark.parametrize(
    "mode", ["keyword", "semantic", "hybrid", "causal", "discovery", "complex", "timeline"]
)
def test_every_retrieve_mode_leaves_them_out(crowded: Vault, mode: str) -> None:
    _, results = crowded.intent.retrieve(f"why the {QUERY}", mode, LIMIT, include_internal=False)
    assert results and "_memtrove" not in collections(results), mode


def test_naming_an_internal_collection_brings_it_back(crowded: Vault) -> None:
    named = crowded.search(QUERY, LIMIT, ["_memtrove"], include_internal=False)
    assert collections(named) == ["_memtrove"] * LIMIT
    recent = crowded.retrieval.recent(LIMIT, ("handoff", "note"), include_internal=False)
    assert "_memtrove" not in collections(recent)


def test_kept_prefixes_stay_in(crowded: Vault) -> None:
    kept = crowded.search(QUERY, 50, include_internal=False, kept_internal=("_memtrove/",))
    assert "_memtrove" in collections(kept)
    odd = crowded.search(QUERY, 50, include_internal=False, kept_internal=("_memtrove/zz%_*",))
    assert "_memtrove" not in collections(odd)  # a prefix is text, never a pattern


def test_find_similar_of_a_user_note_fills_the_limit(crowded: Vault) -> None:
    found = crowded.retrieval.find_similar("notes/billing/rule-0.md", LIMIT, include_internal=False)
    assert collections(found) == ["notes"] * LIMIT
    internal = crowded.search(QUERY, 1, ["_memtrove"])[0]
    like = crowded.retrieval.find_similar(f"#{internal.docid}", LIMIT, include_internal=False)
    assert "_memtrove" in collections(like)  # an internal note brings its like along


@pytest.mark.parametrize("mode", ["http500", "nan", "malformed_json"])
def test_a_failed_vector_leg_is_degraded(
    crowded: Vault, model_server: ModelServer, mode: str
) -> None:
    model_server.set_mode("embeddings", mode)
    for results in (crowded.hybrid(QUERY, LIMIT), crowded.query(QUERY, LIMIT)):
        assert results.degraded and "leg-failed" in (results.degraded_reason or "")
        assert results.degraded_legs == ["vector"]
        data = results.to_dict()
        assert data["degraded"] is True and data["degradedLegs"] == ["vector"]
    _, semantic = crowded.intent.retrieve(QUERY, "semantic", LIMIT)
    assert semantic and semantic.degraded and semantic.degraded_legs == ["vector"]
    model_server.set_mode("embeddings", "ok")
    assert not crowded.hybrid(QUERY, LIMIT).degraded
