"""Meta-path forward push (MPFP) over memory_relations on a real vault: typed steps,
directions, several meta-paths agreeing, anchors left out, scores in [0, 1]."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrove.graph.traversal import mpfp_traversal
from memtrove.vault import Vault
from tests.conftest import write

NAMES = ("a", "b", "c", "d", "e", "f", "g", "h")


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    folder = tmp_path / "notes"
    for name in NAMES:
        write(folder, f"{name}.md", f"# Note {name}\n\nAbout topic {name}.\n")
    opened = Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config")
    opened.add_collection(folder, name="notes")
    opened.update()
    yield opened
    opened.close()


def doc(vault: Vault, name: str) -> int:
    return vault.get(f"notes/{name}.md").doc_id


def names(vault: Vault, found: dict[int, float]) -> dict[str, float]:
    ids = {doc(vault, name): name for name in NAMES}
    return {ids[doc_id]: score for doc_id, score in found.items()}


def push(vault: Vault, patterns: tuple[tuple[str, ...], ...], *anchors: str) -> dict[str, float]:
    found = mpfp_traversal(
        vault._connection,  # the graph module's own function, on the vault's connection
        {doc(vault, name): 1.0 for name in anchors},
        patterns,
    )
    return names(vault, {item.doc_id: item.score for item in found})


def test_each_step_follows_only_its_edge_type_and_direction(vault: Vault) -> None:
    vault.graph.relate("notes/a.md", "notes/b.md", "semantic", 1.0)
    vault.graph.relate("notes/c.md", "notes/b.md", "semantic", 1.0)  # walked against its arrow
    vault.graph.relate("notes/a.md", "notes/d.md", "temporal", 1.0)
    vault.graph.relate("notes/e.md", "notes/a.md", "causal", 1.0)  # e caused a
    vault.graph.relate("notes/a.md", "notes/f.md", "causal", 1.0)  # a caused f
    assert set(push(vault, (("semantic", "semantic"),), "a")) == {"b", "c"}
    assert set(push(vault, (("caused_by",),), "a")) == {"e"}
    assert set(push(vault, (("causes",),), "a")) == {"f"}
    assert set(push(vault, (("temporal",),), "a")) == {"d"}
    assert push(vault, (("entity", "semantic"),), "a") == {}


def test_documents_several_meta_paths_reach_rank_first(vault: Vault) -> None:
    vault.graph.relate("notes/a.md", "notes/b.md", "entity", 1.0)
    vault.graph.relate("notes/a.md", "notes/c.md", "semantic", 1.0)
    vault.graph.relate("notes/b.md", "notes/d.md", "semantic", 1.0)  # entity, semantic
    vault.graph.relate("notes/c.md", "notes/d.md", "semantic", 1.0)  # semantic, semantic
    vault.graph.relate("notes/c.md", "notes/g.md", "semantic", 1.0)  # semantic, semantic only
    found = push(vault, (("semantic", "semantic"), ("entity", "semantic")), "a")
    assert found["d"] == 1.0 and found["d"] > found["g"]
    assert "a" not in found and all(0.0 < score <= 1.0 for score in found.values())


def test_an_anchor_is_never_listed_and_no_edges_find_nothing(vault: Vault) -> None:
    vault.graph.relate("notes/a.md", "notes/b.md", "semantic", 1.0)
    assert push(vault, (("semantic",),), "a", "b") == {}
    assert push(vault, (("semantic", "semantic"),), "h") == {}
    assert mpfp_traversal(vault._connection, {}) == []


def test_similarity_and_depth_weigh_the_finds(vault: Vault) -> None:
    vault.graph.relate("notes/a.md", "notes/b.md", "semantic", 1.0)
    vault.graph.relate("notes/a.md", "notes/c.md", "semantic", 1.0)
    b, c = doc(vault, "b"), doc(vault, "c")
    found = mpfp_traversal(
        vault._connection,
        {doc(vault, "a"): 1.0},
        (("semantic",),),
        similarity=lambda ids: {b: 1.0, c: 0.0},
    )
    scores = {item.doc_id: item.score for item in found}
    assert scores[b] == pytest.approx(0.8) and scores[c] < scores[b]
