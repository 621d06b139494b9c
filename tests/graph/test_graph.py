"""Relations between documents and facts about entities, through the Vault."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtrove.errors import DocumentNotFoundError, InvalidQueryError
from memtrove.graph.triples import entity_id, slug
from memtrove.vault import Vault
from tests.conftest import write

A, B, C = "notes/a.md", "notes/b.md", "notes/c.md"


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    folder = tmp_path / "notes"
    write(folder, "a.md", "# Adopt Postgres\n\nWe chose Postgres for the catalog service.\n")
    write(folder, "b.md", "# Catalog latency\n\nQueries got slow after the migration.\n")
    write(folder, "c.md", "# Unrelated\n\nGardening notes for the spring.\n")
    opened = Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config")
    opened.add_collection(folder, name="notes")
    opened.update()
    return opened


def ids(vault: Vault, *refs: str) -> list[int]:
    return [vault.get(ref).doc_id for ref in refs]


def test_relations_among_surfaced_documents(vault: Vault) -> None:
    vault.graph.relate(A, B, "causal", 0.8)
    vault.graph.relate(B, C, "semantic", 0.9)
    found = vault.graph.relations_among(ids(vault, A, B))
    assert [(r.source_title, r.relation_type, r.target_title) for r in found] == [
        ("Adopt Postgres", "causal", "Catalog latency")
    ]
    assert found[0].line() == "- Adopt Postgres --[causal]--> Catalog latency"
    everything = vault.graph.relations_among(ids(vault, A, B, C))
    assert [r.relation_type for r in everything] == ["semantic", "causal"]  # strongest first
    assert vault.graph.relations_among(ids(vault, A)) == []
    assert len(vault.graph.relations_among(ids(vault, A, B, C), limit=1)) == 1


def test_weights_only_grow(vault: Vault) -> None:
    vault.graph.relate(A, B, "supporting", 0.5)
    vault.graph.relate(A, B, "supporting", 0.3)
    assert vault.graph.relations_among(ids(vault, A, B))[0].weight == 0.5
    vault.graph.relate(A, B, "supporting", 0.7)
    assert vault.graph.relations_among(ids(vault, A, B))[0].weight == 0.7


def test_bad_relations_are_refused(vault: Vault) -> None:
    with pytest.raises(InvalidQueryError, match="unknown relation type 'likes'"):
        vault.graph.relate(A, B, "likes")
    with pytest.raises(InvalidQueryError, match="itself"):
        vault.graph.relate(A, A, "causal")
    with pytest.raises(InvalidQueryError, match="between 0 and 1"):
        vault.graph.relate(A, B, "causal", 1.5)
    with pytest.raises(DocumentNotFoundError):
        vault.graph.relate(A, "notes/nope.md", "causal")


def test_inactive_documents_leave_the_relations(vault: Vault, tmp_path: Path) -> None:
    vault.graph.relate(A, B, "causal")
    both = ids(vault, A, B)
    assert len(vault.graph.relations_among(both)) == 1
    (tmp_path / "notes" / "b.md").unlink()
    vault.update()
    assert vault.graph.relations_among(both) == []


def test_facts_about_entities_named_in_text(vault: Vault) -> None:
    vault.graph.add_fact("Catalog service", "runs_on", "Postgres")
    vault.graph.add_fact("Catalog service", "owned_by", object_literal="team Atlas", confidence=0.7)
    vault.graph.add_fact("Billing", "uses", "Stripe")
    lines = [fact.line() for fact in vault.graph.facts_about("Why is the catalog service slow?")]
    assert lines == ["Catalog service runs_on Postgres", "Catalog service owned_by team Atlas"]
    # The object side seeds too; whole words only.
    assert [f.line() for f in vault.graph.facts_about("postgres tuning")] == [
        "Catalog service runs_on Postgres"
    ]
    assert vault.graph.facts_about("postgresql") == []
    assert vault.graph.facts_about("") == []


def test_facts_respect_their_validity_window(vault: Vault) -> None:
    vault.graph.add_fact("Catalog", "runs_on", "MySQL", valid_to="2026-01-01")
    vault.graph.add_fact("Catalog", "runs_on", "Postgres", valid_from="2026-01-01")
    vault.graph.add_fact("Catalog", "migrated_to", "CockroachDB", valid_from="2099-01-01")
    vault._clock = lambda: datetime(2026, 6, 1, tzinfo=UTC)
    assert [f.line() for f in vault.graph.facts_about("catalog")] == ["Catalog runs_on Postgres"]
    vault._clock = lambda: datetime(2025, 6, 1, tzinfo=UTC)
    assert [f.line() for f in vault.graph.facts_about("catalog")] == ["Catalog runs_on MySQL"]


def test_bad_facts_are_refused(vault: Vault) -> None:
    with pytest.raises(InvalidQueryError, match="exactly one"):
        vault.graph.add_fact("A", "uses")
    with pytest.raises(InvalidQueryError, match="exactly one"):
        vault.graph.add_fact("A", "uses", "B", object_literal="C")
    with pytest.raises(InvalidQueryError, match="subject and a predicate"):
        vault.graph.add_fact(" ", "uses", "B")


def test_entity_ids_keep_unicode() -> None:
    assert slug("Café Müller 2") == "café-müller-2"
    assert entity_id("Zürich office", "place") == "default:place:zürich-office"
    assert slug("!!!") == "entity"


def test_fact_names_are_stored_redacted(vault: Vault) -> None:
    key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    vault.graph.add_fact(f"token {key}", "uses", f"service {key}")
    stored = vault._connection.execute(
        "SELECT group_concat(name, ' ') || ' ' || group_concat(entity_id, ' ') FROM entity_nodes"
    ).fetchone()[0]
    assert key not in stored and "[REDACTED:" in stored
