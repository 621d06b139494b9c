"""Facts: the 13 canonical predicates, literal objects, ambiguity-safe type inheritance,
validity windows, and kg_query (as_of, direction)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtrove.errors import InvalidQueryError
from memtrove.graph.triples import PREDICATES
from memtrove.vault import Vault
from tests.conftest import write


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    opened = Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config")
    opened._clock = lambda: datetime(2026, 6, 1, tzinfo=UTC)
    yield opened
    opened.close()


def lines(vault: Vault, entity: str, **options: str) -> list[str]:
    return [fact.line() for fact in vault.knowledge.kg_query(entity, **options).facts]


def test_the_canonical_predicates() -> None:
    assert len(PREDICATES) == 13
    assert set(PREDICATES) == {
        "adopted", "migrated_to", "deployed_to", "runs_on", "replaced", "depends_on",
        "integrates_with", "uses", "prefers", "avoids", "caused_by", "resolved_by", "owned_by",
    }  # fmt: skip


def test_unknown_predicates_are_refused_and_spellings_forgiven(vault: Vault) -> None:
    with pytest.raises(InvalidQueryError, match="unknown predicate 'likes'"):
        vault.knowledge.add_triple("Catalog", "likes", "Postgres")
    with pytest.raises(InvalidQueryError, match="unknown predicate"):
        vault.graph.add_fact("Catalog", "runs on; DROP TABLE entity_triples", "Postgres")
    vault.knowledge.add_triple("Catalog", "Depends-On", "Postgres")
    assert lines(vault, "Catalog") == ["Catalog depends_on Postgres"]


def test_prefers_and_avoids_keep_literal_objects(vault: Vault) -> None:
    vault.knowledge.add_triple("Ana", "prefers", "tabs over spaces", subject_type="person")
    vault.knowledge.add_triple("Ana", "avoids", "Friday deploys")
    vault.graph.add_fact("Ana", "uses", object_literal="Neovim")  # an entity predicate
    facts = {fact.predicate: fact for fact in vault.knowledge.kg_query("Ana").facts}
    assert facts["prefers"].object_id is None and facts["prefers"].object == "tabs over spaces"
    assert facts["avoids"].object_id is None
    assert facts["uses"].object_id == "default:concept:neovim"
    assert vault.knowledge.kg_query("tabs over spaces").entity_id is None  # a literal is no entity


def test_literal_objects_are_redacted(vault: Vault) -> None:
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    vault.knowledge.add_triple("Ci", "prefers", f"the token {secret}")
    stored = vault.knowledge.kg_query("Ci").facts[0].object
    assert secret not in stored and "REDACTED" in stored
    vault.knowledge.add_triple("Deploy", "uses", f"key {secret}")
    named = vault.knowledge.kg_query("Deploy").facts[0].object
    assert secret not in named and "REDACTED" in named


def test_types_are_inherited_only_from_an_unambiguous_exact_name(vault: Vault) -> None:
    vault.knowledge.add_triple(
        "Andrea Rossi", "owned_by", "Platform", subject_type="person", object_type="org"
    )
    vault.knowledge.add_triple("Billing", "owned_by", "Andrea Rossi")  # inherits person
    owner = next(f for f in vault.knowledge.kg_query("Billing").facts if f.predicate == "owned_by")
    assert owner.object_id == "default:person:andrea-rossi"
    vault.knowledge.add_triple("Mercury", "runs_on", "Linux", subject_type="project")
    # another one
    vault.knowledge.add_triple("Mercury", "owned_by", "Platform", subject_type="location")
    vault.knowledge.add_triple("Search", "depends_on", "Mercury")  # ambiguous: a concept
    depends = vault.knowledge.kg_query("Search").facts[0]
    # Ambiguous by exact name, so typed a concept: resolved within the tech bucket, never
    # to the location.
    assert depends.object_id == "default:project:mercury"


def test_a_new_value_closes_the_previous_window(vault: Vault) -> None:
    vault.knowledge.add_triple("Catalog", "runs_on", "MySQL", valid_from="2024-01-01")
    vault.knowledge.add_triple("Catalog", "runs_on", "PostgreSQL", valid_from="2025-03-15")
    vault.knowledge.add_triple("Catalog", "uses", "Redis", valid_from="2024-06-01")
    # uses: many at once
    vault.knowledge.add_triple("Catalog", "uses", "Kafka", valid_from="2025-06-01")
    assert lines(vault, "Catalog", as_of="2024-12-31") == [
        "Catalog runs_on MySQL", "Catalog uses Redis",
    ]  # fmt: skip
    assert lines(vault, "Catalog", as_of="2025-03-15") == [
        "Catalog runs_on PostgreSQL", "Catalog uses Redis",
    ]  # fmt: skip
    assert lines(vault, "Catalog", as_of="2023-01-01") == []
    history = vault.knowledge.kg_query("Catalog").facts
    mysql = next(f for f in history if f.object == "MySQL")
    assert mysql.valid_to == "2025-03-15T00:00:00Z" and not mysql.current
    assert next(f for f in history if f.object == "PostgreSQL").current


def test_a_late_record_of_an_earlier_value_ends_where_the_next_begins(vault: Vault) -> None:
    vault.knowledge.add_triple("Auth", "owned_by", "Team Blue", valid_from="2025-01-01")
    # told later
    vault.knowledge.add_triple("Auth", "owned_by", "Team Red", valid_from="2024-01-01")
    assert lines(vault, "Auth", as_of="2024-06-01") == ["Auth owned_by Team Red"]
    assert lines(vault, "Auth", as_of="2025-06-01") == ["Auth owned_by Team Blue"]


def test_restating_a_fact_does_not_duplicate_it(vault: Vault) -> None:
    first = vault.knowledge.add_triple("Catalog", "runs_on", "PostgreSQL")
    assert vault.knowledge.add_triple("Catalog", "runs_on", "postgresql") == first
    assert len(vault.knowledge.kg_query("Catalog").facts) == 1


def test_directions_and_references(vault: Vault) -> None:
    vault.knowledge.add_triple("Catalog", "runs_on", "PostgreSQL", object_type="tool")
    vault.knowledge.add_triple("PostgreSQL", "deployed_to", "eu-west-1", object_type="location")
    assert lines(vault, "PostgreSQL", direction="outgoing") == ["PostgreSQL deployed_to eu-west-1"]
    assert lines(vault, "postgres", direction="incoming") == ["Catalog runs_on PostgreSQL"]
    both = vault.knowledge.kg_query("default:tool:postgresql")
    assert {f.direction for f in both.facts} == {"outgoing", "incoming"}
    data = both.to_dict()
    assert data["entity_id"] == "default:tool:postgresql" and data["count"] == 2
    assert set(data["facts"][0]) >= {"subject", "predicate", "object", "valid_from", "current"}


def test_an_unknown_entity_answers_empty(vault: Vault) -> None:
    result = vault.knowledge.kg_query("nothing here")
    assert result.entity_id is None and result.facts == []
    assert "No entity matches" in result.text()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"entity": ""}, "entity must not be empty"),
        ({"entity": "x" * 501}, "at most 500"),
        ({"entity": "A", "direction": "sideways"}, "direction must be one of"),
        ({"entity": "A", "as_of": "yesterday"}, "as_of must be a date"),
        ({"entity": "A", "as_of": "2026-13-45"}, "as_of must be a date"),
        ({"entity": "A", "as_of": "9999-99-99"}, "as_of must be a date .*, got '9999-99-99'$"),
    ],
)
def test_bad_queries_are_one_line_errors(
    vault: Vault, arguments: dict[str, str], message: str
) -> None:
    with pytest.raises(InvalidQueryError, match=message):
        vault.knowledge.kg_query(**arguments)


def test_a_bare_date_means_the_end_of_that_day_in_either_form() -> None:
    from memtrove.graph.triples import check_as_of

    assert check_as_of("2026-06-30") == check_as_of("20260630") == "2026-06-30T23:59:59Z"
    assert check_as_of("2026-06-30T10:00:00Z") == "2026-06-30T10:00:00Z"


def test_bad_facts_are_refused(vault: Vault) -> None:
    with pytest.raises(InvalidQueryError, match="valid_from must be an ISO date"):
        vault.knowledge.add_triple("A", "uses", "B", valid_from="soon")
    with pytest.raises(InvalidQueryError, match="valid_to must be after valid_from"):
        vault.knowledge.add_triple("A", "uses", "B", valid_from="2026-01-02", valid_to="2026-01-01")
    with pytest.raises(InvalidQueryError, match="object must not be empty"):
        vault.knowledge.add_triple("A", "uses", "   ")
    with pytest.raises(InvalidQueryError, match="at most 200"):
        vault.knowledge.add_triple("A" * 201, "uses", "B")
    assert vault._connection.execute("SELECT COUNT(*) FROM entity_triples").fetchone() == (0,)


def test_facts_name_their_source_document(vault: Vault, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    write(folder, "adr.md", "# ADR 7\n\nCatalog moves to PostgreSQL.\n")
    vault.add_collection(folder, name="notes")
    vault.update()
    vault.knowledge.add_triple("Catalog", "migrated_to", "PostgreSQL", source="notes/adr.md")
    assert (
        vault.knowledge.kg_query("Catalog").facts[0].source_doc_id
        == vault.get("notes/adr.md").doc_id
    )
