"""Adaptive beam traversal of memory_relations, and causal chains, on a real vault."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtrove.errors import InvalidQueryError
from memtrove.graph.traversal import adaptive_traversal, causal_links
from memtrove.vault import Vault
from tests.conftest import write

NAMES = ("a", "b", "c", "d", "e", "f", "g")


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    folder = tmp_path / "notes"
    for name in NAMES:
        write(folder, f"{name}.md", f"# Note {name}\n\nAbout topic {name}.\n")
    for index in range(12):
        write(folder, f"fan/{index:02d}.md", f"# Fan {index}\n\nLeaf {index}.\n")
    opened = Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config")
    opened.add_collection(folder, name="notes")
    opened.update()
    return opened


def doc(vault: Vault, name: str) -> int:
    return vault.get(f"notes/{name}.md").doc_id


def walk(vault: Vault, *anchors: str, **options: object) -> dict[int, float]:
    found = adaptive_traversal(
        vault._connection,  # the graph module's own function, on the vault's connection
        [doc(vault, name) for name in anchors],
        **options,  # type: ignore[arg-type]
    )
    return {item.doc_id: item.score for item in found}


def test_outbound_every_type_inbound_only_semantic_and_entity(vault: Vault) -> None:
    vault.graph.relate("notes/a.md", "notes/b.md", "causal", 0.9)
    vault.graph.relate("notes/a.md", "notes/c.md", "temporal", 0.9)
    vault.graph.relate("notes/d.md", "notes/a.md", "causal", 0.9)  # inbound causal: not followed
    vault.graph.relate(
        "notes/e.md", "notes/a.md", "temporal", 0.9
    )  # inbound temporal: not followed
    vault.graph.relate("notes/f.md", "notes/a.md", "entity", 0.9)  # inbound entity: followed
    found = walk(vault, "a")
    assert set(found) == {doc(vault, "b"), doc(vault, "c"), doc(vault, "f")}
    assert max(found.values()) == 1.0 and all(0.0 <= score <= 1.0 for score in found.values())
    with_causes = walk(vault, "a", inbound_types=("semantic", "entity", "causal"))
    assert doc(vault, "d") in with_causes and doc(vault, "e") not in with_causes


def test_depth_decay_weight_and_anchor_relevance_order_the_discoveries(vault: Vault) -> None:
    vault.graph.relate("notes/a.md", "notes/b.md", "supporting", 1.0)
    vault.graph.relate("notes/b.md", "notes/c.md", "supporting", 1.0)  # two hops
    vault.graph.relate("notes/c.md", "notes/d.md", "supporting", 1.0)  # three hops: past depth 2
    vault.graph.relate("notes/a.md", "notes/e.md", "supporting", 0.5)
    found = walk(vault, "a")
    # b: 1.0 x 0.5 (no vectors: neutral similarity) x 0.8; e: half of that; c: b's score again
    # x 0.5 x 0.8 (the decay compounds)
    assert list(found) == [doc(vault, "b"), doc(vault, "e"), doc(vault, "c")]
    assert found[doc(vault, "e")] == pytest.approx(0.5)
    assert found[doc(vault, "c")] == pytest.approx(0.4)
    assert doc(vault, "d") not in found
    assert doc(vault, "d") in walk(vault, "a", depth=3)
    # a path from the stronger anchor wins
    vault.graph.relate("notes/f.md", "notes/g.md", "supporting", 1.0)
    strong = adaptive_traversal(vault._connection, {doc(vault, "f"): 1.0, doc(vault, "a"): 0.2})
    assert strong[0].doc_id == doc(vault, "g") and strong[0].anchor == doc(vault, "f")


def test_beam_and_budget_cap_the_walk(vault: Vault) -> None:
    for index in range(12):
        vault.graph.relate("notes/a.md", f"notes/fan/{index:02d}.md", "semantic", 0.5 + index / 100)
    assert len(walk(vault, "a")) == 5  # the beam
    assert len(walk(vault, "a", beam=20, budget=7)) == 7
    assert walk(vault, "a", budget=0) == {} and walk(vault, "a", depth=0) == {}
    # the strongest edges win the beam
    kept = walk(vault, "a")
    assert {vault.get(f"notes/fan/{index:02d}.md").doc_id for index in range(7, 12)} == set(kept)


def test_an_anchor_reached_from_another_is_listed_but_not_expanded_again(vault: Vault) -> None:
    vault.graph.relate("notes/a.md", "notes/b.md", "causal", 0.9)
    vault.graph.relate("notes/b.md", "notes/c.md", "causal", 0.9)
    found = walk(vault, "a", "b")
    assert doc(vault, "b") in found and doc(vault, "a") not in found


def test_inactive_documents_are_never_visited(vault: Vault) -> None:
    vault.graph.relate("notes/a.md", "notes/b.md", "causal", 0.9)
    vault.graph.relate("notes/b.md", "notes/c.md", "causal", 0.9)
    vault.curation.forget("notes/b.md")
    assert walk(vault, "a") == {}


def test_similarity_scales_candidates(vault: Vault) -> None:
    vault.graph.relate("notes/a.md", "notes/b.md", "semantic", 0.9)
    vault.graph.relate("notes/a.md", "notes/c.md", "semantic", 0.9)
    close, far = doc(vault, "b"), doc(vault, "c")
    found = walk(vault, "a", similarity=lambda ids: {close: 0.9, far: 0.1})
    assert list(found) == [close, far] and found[far] < found[close]


def test_causal_links_follow_the_direction_asked_for(vault: Vault) -> None:
    vault.graph.relate("notes/a.md", "notes/b.md", "causal", 0.9)
    vault.graph.relate("notes/b.md", "notes/c.md", "causal", 0.8)
    vault.graph.relate("notes/c.md", "notes/a.md", "causal", 0.7)  # a cycle: each edge once
    vault.graph.relate("notes/b.md", "notes/d.md", "semantic", 0.9)  # not causal
    b = doc(vault, "b")
    causes = causal_links(vault._connection, b, "causes", 5)
    assert [(link.source_id, link.target_id, link.hop) for link in causes] == [
        (b, doc(vault, "c"), 1),
        (doc(vault, "c"), doc(vault, "a"), 2),
    ]
    assert [link.source_id for link in causal_links(vault._connection, b, "caused_by", 1)] == [
        doc(vault, "a")
    ]
    chain = vault.intent.find_causal_links("notes/b.md", "both", 2)
    assert chain.to_dict()["count"] == 4 and chain.docid == vault.get("notes/b.md").docid
    assert {link.direction for link in chain} == {"causes", "caused_by"}


@pytest.mark.parametrize(
    ("direction", "depth", "message"),
    [
        ("up", 5, "direction must be one of causes, caused_by, both"),
        ("both", 0, "depth must be a whole number from 1 to 10"),
        ("both", 11, "depth must be a whole number from 1 to 10"),
    ],
)
def test_bad_arguments_are_one_line_errors(
    vault: Vault, direction: str, depth: int, message: str
) -> None:
    with pytest.raises(InvalidQueryError, match=message):
        vault.intent.find_causal_links("notes/a.md", direction, depth)
