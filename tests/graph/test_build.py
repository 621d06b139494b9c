"""build_graphs: the temporal backbone and bulk semantic edges, idempotent and thresholded."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from memtrove.errors import InvalidQueryError
from memtrove.graph.build import _nearest_pairs, parse_graph_types
from memtrove.vault import Vault
from tests.conftest import write

NOTES = {
    "a.md": "# Postgres connection pool\n\nThe catalog service exhausts its Postgres pool.\n",
    "b.md": "# Postgres connection pool limits\n\nThe catalog service exhausts Postgres pools.\n",
    "c.md": "# Sourdough starter\n\nFeed the starter flour and water every morning.\n",
    "d.md": "# Tomato seedlings\n\nWater the seedlings; keep them near the window.\n",
}


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    folder = tmp_path / "notes"
    for number, (name, text) in enumerate(NOTES.items()):
        path = write(folder, name, text)
        stamp = time.time() - 1000 + number * 10  # a.md oldest, d.md newest
        os.utime(path, (stamp, stamp))
    opened = Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config")
    opened.add_collection(folder, name="notes")
    opened.update()
    return opened


def edges(vault: Vault, kind: str) -> dict[tuple[str, str], float]:
    rows = vault._connection.execute(
        "SELECT s.path, t.path, r.weight FROM memory_relations r "
        "JOIN documents s ON s.id = r.source_id JOIN documents t ON t.id = r.target_id "
        "WHERE r.relation_type = ?",
        (kind,),
    )
    return {(str(a), str(b)): float(w) for a, b, w in rows}


def test_temporal_backbone_in_time_order_and_idempotent(vault: Vault) -> None:
    report = vault.graph.build_graphs(["temporal"])
    assert (report.temporal, report.temporal_total, report.semantic) == (3, 3, None)
    assert set(edges(vault, "temporal")) == {("a.md", "b.md"), ("b.md", "c.md"), ("c.md", "d.md")}
    again = vault.graph.build_graphs("temporal")
    assert (again.temporal, again.temporal_total) == (0, 3)
    assert again.text().startswith("0 new edge(s), 3 total")
    assert again.as_dict() == {"temporal": 0, "temporalTotal": 3, "documents": 4, "notes": []}


def test_semantic_without_vectors_says_what_to_do(vault: Vault) -> None:
    report = vault.graph.build_graphs(["semantic"])
    assert report.semantic == 0
    assert "memtrove embed" in report.notes[0]


def test_semantic_edges_thresholds_and_reruns(vault: Vault) -> None:
    vault.embed()
    none = vault.graph.build_graphs(["semantic"], semantic_threshold=1.0)
    assert none.semantic == 0
    strict = vault.graph.build_graphs(["semantic"], semantic_threshold=0.9)
    found = edges(vault, "semantic")
    assert ("a.md", "b.md") in found and found[("a.md", "b.md")] >= 0.9
    assert all(weight >= 0.9 for weight in found.values())
    assert strict.semantic == len(found) == strict.semantic_total
    loose = vault.graph.build_graphs(["all"], semantic_threshold=0.0)
    assert loose.semantic_total == strict.semantic_total + loose.semantic
    assert len(edges(vault, "semantic")) == loose.semantic_total <= 6  # a pair once at most
    assert loose.temporal == 3
    assert edges(vault, "semantic")[("a.md", "b.md")] == found[("a.md", "b.md")]  # kept
    rerun = vault.graph.build_graphs(["all"], semantic_threshold=0.0)
    assert (rerun.semantic, rerun.temporal, rerun.new_edges) == (0, 0, 0)


def test_semantic_never_shadows_a_classified_edge(vault: Vault) -> None:
    vault.embed()
    vault.graph.relate("notes/b.md", "notes/a.md", "contradicts", 0.8)
    vault.graph.relate("notes/c.md", "notes/d.md", "semantic", 0.2)  # first writer wins
    vault.graph.build_graphs(["semantic"], semantic_threshold=0.0)
    found = edges(vault, "semantic")
    assert ("a.md", "b.md") not in found and ("b.md", "a.md") not in found
    assert found[("c.md", "d.md")] == 0.2 and ("d.md", "c.md") not in found
    vault.graph.relate("notes/c.md", "notes/d.md", "semantic", 0.9)
    assert edges(vault, "semantic")[("c.md", "d.md")] == 0.2


def test_inactive_documents_are_left_out(vault: Vault) -> None:
    vault.curation.forget("notes/b.md")
    vault.graph.build_graphs(["temporal"])
    assert set(edges(vault, "temporal")) == {("a.md", "c.md"), ("c.md", "d.md")}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"graph_types": ["social"]}, "unknown graph type 'social'"),
        ({"graph_types": []}, "graph_types must be a list"),
        ({"graph_types": [3]}, "unknown graph type '3'"),
        ({"semantic_threshold": 1.5}, "semantic_threshold must be between 0 and 1"),
        ({"semantic_threshold": float("nan")}, "semantic_threshold must be between 0 and 1"),
        ({"neighbours": 0}, "neighbours must be between 1 and 100"),
    ],
)
def test_bad_arguments_are_one_line(vault: Vault, arguments: dict, message: str) -> None:
    with pytest.raises(InvalidQueryError, match=message):
        vault.graph.build_graphs(**arguments)


def test_graph_types_parse() -> None:
    assert parse_graph_types(["all"]) == ("temporal", "semantic")
    assert parse_graph_types(["Semantic", "temporal"]) == ("temporal", "semantic")
    assert parse_graph_types("semantic") == ("semantic",)


def test_nearest_pairs_top_k_and_threshold_in_batches() -> None:
    rng = np.random.default_rng(7)
    matrix = rng.normal(size=(1300, 16)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    ids = list(range(100, 1400))
    pairs = list(_nearest_pairs(ids, matrix, 0.5, 3))
    full = matrix @ matrix.T
    np.fill_diagonal(full, -np.inf)
    expected = set()
    for row in range(len(ids)):
        for column in np.argsort(-full[row])[:3]:
            if full[row, column] >= 0.5:
                low, high = sorted((ids[row], ids[column]))
                expected.add((low, high))
    assert {(low, high) for low, high, _ in pairs} == expected
    assert all(low < high and 0.5 <= weight <= 1.0 for low, high, weight in pairs)
    assert list(_nearest_pairs([1], matrix[:1], 0.0, 5)) == []
