"""The conditional channels of ``query`` on real vaults: temporal constraint and proximity,
the entity graph; each runs only when its trigger fires."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.models.registry import ModelSettings
from memtrove.retrieval.entity_channel import named_entities
from memtrove.retrieval.temporal_channels import blend_channels
from tests.conftest import write
from tests.fakes.model_server import ModelServer

CHANNEL_STAGES = {"temporal", "proximity", "entities"}


def dated(day: str, title: str, body: str) -> str:
    return f"---\ndate: {day}\n---\n# {title}\n\n{body}\n"


@pytest.fixture
def corpus(notes: Path) -> Path:
    for month, what in (
        (1, "disk pressure"),
        (3, "an expired certificate"),
        (5, "a queue backlog"),
    ):
        write(
            notes,
            f"reports/2026-0{month}-report.md",
            dated(f"2026-0{month}-14", "Weekly on-call report", f"Paged for {what} this week."),
        )
    write(notes, "design.md", dated("2025-10-01", "Session storage", "Sessions live in Memcached."))
    write(notes, "migration.md", dated("2026-02-10", "Session migration", "Moved sessions to SQL."))
    write(notes, "after.md", dated("2026-03-02", "Sessions table", "Sessions in a SQL table now."))
    write(
        notes,
        "infra/upgrade.md",
        dated("2026-01-12", "Control plane", "Upgraded the k8s control plane."),
    )
    write(
        notes,
        "infra/pool.md",
        dated("2026-02-03", "Spot pool", "A spot node pool for the k8s cluster."),
    )
    write(
        notes, "infra/setup.md", dated("2025-12-01", "Laptop", "What changed in the laptop setup.")
    )
    write(
        notes,
        "ledger/overview.md",
        dated("2025-12-10", "Accounting journal", "`ledgerd` partitions with `pg_partman`."),
    )
    write(
        notes,
        "ledger/premake.md",
        dated("2026-01-05", "Premake", "`pg_partman` premake job; inserts fail."),
    )
    return notes


@pytest.fixture
def vault(tmp_path: Path, corpus: Path) -> Iterator[Vault]:
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as opened:
        opened.add_collection(corpus, name="notes")
        opened.update()
        opened.embed()
        opened.knowledge.enrich_entities(use_llm=False)
        yield opened


def paths(results: object) -> list[str]:
    return [r.path for r in results]  # type: ignore[attr-defined]


def test_an_ordinary_question_runs_no_channel(vault: Vault) -> None:
    results = vault.query("where do sessions live?")
    assert not CHANNEL_STAGES & set(results.stages)
    assert "temporal" not in results.skipped
    assert results.stages == ["bm25", "vector", "fusion", "composite", "mmr"]


def test_a_named_month_ranks_that_months_report_first(vault: Vault) -> None:
    results = vault.query("what paged the on-call in March 2026?")
    assert {"temporal", "proximity"} <= set(results.stages)
    assert paths(results)[0] == "reports/2026-03-report.md"
    # a month without a year: the latest January that dates a document
    assert paths(vault.query("on-call report in January"))[0] == "reports/2026-01-report.md"


def test_before_an_event_prefers_what_came_before_it(vault: Vault) -> None:
    results = vault.query("where did sessions live before the migration?")
    assert "temporal" in results.stages
    order = paths(results)
    assert order.index("design.md") < order.index("after.md")


def test_a_window_no_document_is_in_adds_nothing(vault: Vault) -> None:
    results = vault.query("what paged the on-call in 1999?")
    assert results.skipped["temporal"] == "no document dated 'in 1999'"
    assert not CHANNEL_STAGES & set(results.stages)


def test_a_named_entity_finds_documents_that_call_it_otherwise(vault: Vault) -> None:
    results = vault.query("what changed in our Kubernetes setup?")
    assert "entities" in results.stages and "bypass" not in results.stages
    assert {"infra/upgrade.md", "infra/pool.md"} <= set(paths(results)[:3])


def test_the_walk_follows_entity_edges_one_hop(vault: Vault) -> None:
    results = vault.query("what can go wrong with ledgerd?")
    assert "entities" in results.stages
    assert {"ledger/overview.md", "ledger/premake.md"} == set(paths(results)[:2])


def test_channels_keep_the_filters(vault: Vault, notes: Path) -> None:
    write(notes, "other/k8s.md", dated("2026-03-01", "Other", "k8s in the other collection."))
    vault.add_collection(notes / "other", name="other")
    vault.update()
    vault.knowledge.enrich_entities(use_llm=False)
    results = vault.query("Kubernetes", collections=["notes"])
    assert all(result.collection == "notes" for result in results)
    dated_results = vault.query("Kubernetes", since="2026-02-01")
    assert "infra/upgrade.md" not in paths(dated_results)


def test_removed_documents_leave_the_entity_channel(vault: Vault, corpus: Path) -> None:
    (corpus / "infra" / "pool.md").unlink()
    vault.update()
    assert "infra/pool.md" not in paths(vault.query("Kubernetes batch nodes"))


def test_entities_are_matched_whole_and_only_when_specific(vault: Vault, notes: Path) -> None:
    connection = vault._connection
    assert [e.name for e in named_entities(connection, "is KUBERNETES healthy?")] == ["Kubernetes"]
    assert named_entities(connection, "kuber netes") == []
    assert named_entities(connection, "the a of") == []


def test_blend_adds_each_list_with_a_decaying_share() -> None:
    fused = [(1, 1.0), (2, 0.9), (3, 0.2)]
    assert blend_channels(fused, []) == fused
    blended = dict(blend_channels(fused, [([3, 4], 1.0)], share=0.25, k=10))
    assert blended[3] == pytest.approx(0.45)
    assert blended[4] == pytest.approx(0.25 * 11 / 12)
    assert [key for key, _ in blend_channels(fused, [([3], 1.0)], share=1.0)] == [3, 1, 2]


def test_with_an_llm_the_channels_join_rank_fusion(
    tmp_path: Path, corpus: Path, model_server: ModelServer
) -> None:
    settings = ModelSettings(embed_url=model_server.url, llm_url=model_server.url)
    with Vault.open(tmp_path / "llm.sqlite", config_dir=tmp_path / "c", models=settings) as vault:
        vault.add_collection(corpus, name="notes")
        vault.update()
        vault.embed()
        vault.knowledge.enrich_entities(use_llm=False)
        results = vault.query("what paged the on-call in March 2026?")
        stages = results.stages
        assert stages.index("temporal") < stages.index("rrf")
        assert paths(results)[0] == "reports/2026-03-report.md"
        plain = vault.query("where do sessions live?")
        assert not CHANNEL_STAGES & set(plain.stages)
