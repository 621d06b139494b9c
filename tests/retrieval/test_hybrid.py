"""hybrid: BM25 and vectors fused by score, conversation context, and no model but the embedder."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from memtrove import SearchResult, Vault
from memtrove.db.connection import Connection
from memtrove.models.http import Cooldown
from memtrove.models.openai_compat import HttpEmbedder
from memtrove.models.registry import Models, ModelSettings
from memtrove.retrieval.hybrid import FUSION_ALPHA, NEIGHBOUR_WEIGHTS
from tests.conftest import write
from tests.fakes.model_server import ModelServer, refused_url

QUERY = "sqlite write-ahead logging readers"


def note(date: str, title: str, text: str, content_type: str | None = None) -> str:
    """A markdown note whose frontmatter gives its date (and its type)."""
    kind = f"type: {content_type}\n" if content_type else ""
    return f"---\ndate: {date}\n{kind}---\n# {title}\n\n{text}\n"


CORPUS = {
    "work/wal.md": note("2026-02-01", "SQLite WAL", "Write-ahead logging keeps readers going."),
    "work/decisions/wal.md": note(
        "2026-03-05", "WAL for readers", "We decided on SQLite so readers never block.", "decision"
    ),
    "work/auth.md": note(
        "2026-03-01", "Auth tokens", "Refresh token rotation revokes the old token."
    ),
    "home/wal.md": note("2026-02-20", "Home server", "My home server logs everything."),
    "home/bread.md": note("2026-02-15", "Banana bread", "Mash bananas, add flour, bake."),
}


def _open(tmp_path: Path, models: ModelSettings | Models) -> Vault:
    return Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config", models=models)


def digest(connection: Connection) -> str:
    hasher = hashlib.sha256()
    for table in ("documents", "content_vectors", "embedding_space", "llm_cache"):
        for row in connection.execute(f"SELECT * FROM {table} ORDER BY 1"):
            hasher.update(repr(tuple(row)).encode())
    return hasher.hexdigest()


def paths(results: Sequence[SearchResult]) -> list[str]:
    return [f"{r.collection}/{r.path}" for r in results]


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    for path, text in CORPUS.items():
        write(tmp_path, path, text)
    work, home = tmp_path / "work", tmp_path / "home"
    return work, home


@pytest.fixture
def settings(model_server: ModelServer) -> ModelSettings:
    """Every model service configured: hybrid must still use the embedder only."""
    url = model_server.url
    return ModelSettings(embed_url=url, llm_url=url, rerank_url=url)


@pytest.fixture
def vault(
    tmp_path: Path, folders: tuple[Path, Path], model_server: ModelServer, settings: ModelSettings
) -> Iterator[Vault]:
    with _open(tmp_path, settings) as opened:
        opened.add_collection(folders[0], name="work")
        opened.add_collection(folders[1], name="home")
        opened.update()
        opened.embed()
        model_server.reset()
        yield opened


def test_hybrid_is_a_score_fusion_of_both_channels(vault: Vault, model_server: ModelServer) -> None:
    """Checked against a reference computed from `search` and `vsearch`."""
    results = vault.hybrid(QUERY)
    assert results.stages == ["bm25", "vector", "fusion"] and results.skipped == {}
    keyword = {r.doc_id: r.score / (1 - r.score) for r in vault.search(QUERY, limit=50)}  # |bm25|
    cosine = {r.doc_id: r.score for r in vault.vsearch(QUERY, limit=50)}
    assert len(keyword) < len(cosine) == 5  # the vector channel adds what no keyword found
    top, low, high = max(keyword.values()), min(cosine.values()), max(cosine.values())
    expected = {
        doc: (1 - FUSION_ALPHA) * keyword.get(doc, 0.0) / top
        + FUSION_ALPHA * (cosine[doc] - low) / (high - low)
        for doc in cosine
    }
    best = max(expected.values())
    assert [r.doc_id for r in results] == sorted(expected, key=lambda doc: -expected[doc])
    for result in results:
        assert result.score == pytest.approx(expected[result.doc_id] / best, abs=1e-6)
    # One query embedding per call, and nothing from the LLM or the reranker.
    assert {r.endpoint for r in model_server.requests} == {"embeddings"}


def test_hybrid_without_vectors_is_keyword_search(
    tmp_path: Path, folders: tuple[Path, Path], model_server: ModelServer, settings: ModelSettings
) -> None:
    with _open(tmp_path, settings) as vault:
        vault.add_collection(folders[0], name="work")
        vault.update()
        results = vault.hybrid(QUERY)
        assert results.stages == ["bm25", "fusion"]
        assert "run `memtrove embed`" in results.skipped["vector"]
        assert paths(results) == paths(vault.search(QUERY))
        assert results[0].score == 1.0
        assert model_server.requests == []


@pytest.mark.parametrize(
    ("mode", "error"),
    [
        ("http500", "HTTP 500"),
        ("nan", "NaN"),
        ("malformed_json", "malformed JSON"),
        ("empty_list", "empty list"),
        ("wrong_dimensions", "dimension 32, expected 64"),
    ],
)
def test_a_failing_embedder_leaves_keyword_results(
    vault: Vault, model_server: ModelServer, mode: str, error: str
) -> None:
    before = digest(vault._connection)
    model_server.set_mode("embeddings", mode)
    results = vault.hybrid(QUERY)
    assert error in results.skipped["vector"]
    assert results.stages == ["bm25", "fusion"]
    assert paths(results) == paths(vault.search(QUERY))
    assert digest(vault._connection) == before


def test_an_unreachable_embedder_is_skipped_then_cooled_down(vault: Vault, tmp_path: Path) -> None:
    models = Models(ModelSettings(embed_url="http://configured", embed_dimensions=64))
    models._embedder = HttpEmbedder(refused_url(), dimensions=64, cooldown=Cooldown())
    with _open(tmp_path, models) as down:
        assert "unreachable" in down.hybrid(QUERY).skipped["vector"]
        second = down.hybrid(QUERY)
        assert "cooling down" in second.skipped["vector"]
        assert paths(second) == paths(down.search(QUERY))


def test_another_embedder_is_skipped_with_the_fix(
    vault: Vault, tmp_path: Path, model_server: ModelServer
) -> None:
    with _open(tmp_path, ModelSettings(embed_url=model_server.url, embed_model="other")) as other:
        results = other.hybrid(QUERY)
        assert "memtrove embed --force" in results.skipped["vector"]
        assert len(results) == len(other.search(QUERY))


def test_filters_hold_for_both_channels(vault: Vault) -> None:
    everything = vault.hybrid(QUERY, limit=50)
    assert len(everything) == 5
    home = vault.hybrid(QUERY, collections=["home"])
    assert set(paths(home)) == {"home/wal.md", "home/bread.md"}
    assert paths(vault.hybrid(QUERY, content_types=["decision"])) == ["work/decisions/wal.md"]
    february = vault.hybrid(QUERY, since="2026-02-01", until="2026-02-28")
    assert set(paths(february)) == {"work/wal.md", "home/wal.md", "home/bread.md"}
    assert paths(vault.hybrid(QUERY, until="2026-02-01")) == ["work/wal.md"]


def test_deactivated_documents_are_never_returned(vault: Vault, folders: tuple[Path, Path]) -> None:
    (folders[0] / "wal.md").unlink()
    vault.update()
    assert "work/wal.md" not in paths(vault.hybrid(QUERY, limit=50))
    vault.remove_collection("home")
    assert set(paths(vault.hybrid(QUERY, limit=50))) == {"work/decisions/wal.md", "work/auth.md"}


def test_limit_and_min_score(vault: Vault) -> None:
    results = vault.hybrid(QUERY, limit=50)
    assert paths(vault.hybrid(QUERY, limit=2)) == paths(results)[:2]
    cut = (results[1].score + results[2].score) / 2
    assert paths(vault.hybrid(QUERY, min_score=cut)) == paths(results)[:2]


# -- conversation context ---------------------------------------------------------------------


def turn(folder: Path, name: str, moment: str, text: str, kind: str = "conversation") -> None:
    write(folder, f"{name}.md", f"---\ntype: {kind}\ndate: {moment}\n---\n{text}\n")


@pytest.fixture
def chats(tmp_path: Path) -> tuple[Path, Path]:
    trip, other = tmp_path / "trip", tmp_path / "other"
    turn(trip, "t1", "2026-03-01T10:00:00Z", "User: good morning")
    turn(trip, "t2", "2026-03-01T10:01:00Z", "User: where did we stay last spring")
    turn(trip, "t3", "2026-03-02T10:02:00Z", "Assistant: in Zanzibar, at Stone Town")
    turn(trip, "t4", "2026-03-02T10:03:00Z", "User: lovely, thanks")
    turn(trip, "t5", "2026-03-02T10:04:00Z", "User: and the weather then")
    turn(trip, "t6", "2026-03-02T10:05:00Z", "Assistant: sunny all week")
    # A note written between two turns, and a chat of another collection at the same time:
    # neither is a neighbour.
    turn(trip, "aside", "2026-03-02T10:02:30Z", "Shopping list: eggs, milk", kind="note")
    turn(other, "o1", "2026-03-02T10:02:30Z", "User: unrelated chat")
    return trip, other


@pytest.fixture
def chat_vault(
    tmp_path: Path, chats: tuple[Path, Path], settings: ModelSettings
) -> Iterator[Vault]:
    """Not embedded: the BM25 channel alone gives exact numbers to check."""
    with _open(tmp_path, settings) as opened:
        opened.add_collection(chats[0], name="trip")
        opened.add_collection(chats[1], name="other")
        opened.update()
        yield opened


def test_turns_next_to_a_hit_share_its_score(chat_vault: Vault) -> None:
    results = chat_vault.hybrid("zanzibar")
    assert results.stages == ["bm25", "fusion", "context"]
    scores = {r.path: r.score for r in results}
    near, far = NEIGHBOUR_WEIGHTS
    expected = {"t3.md": 1.0, "t2.md": near, "t4.md": near, "t1.md": far, "t5.md": far}
    assert scores == pytest.approx(expected)
    assert {r.content_type for r in results} == {"conversation"}


def test_context_never_crosses_a_filter(chat_vault: Vault) -> None:
    later = chat_vault.hybrid("zanzibar", since="2026-03-02")
    assert [r.path for r in later] == ["t3.md", "t4.md", "t5.md"]
    earlier = chat_vault.hybrid("stay spring", until="2026-03-01")
    assert [r.path for r in earlier] == ["t2.md", "t1.md"]
    assert [r.path for r in chat_vault.hybrid("zanzibar", collections=["other"])] == []


def test_deactivated_turns_are_skipped_over(chat_vault: Vault, chats: tuple[Path, Path]) -> None:
    (chats[0] / "t4.md").unlink()
    chat_vault.update()
    scores = {r.path: r.score for r in chat_vault.hybrid("zanzibar")}
    near, far = NEIGHBOUR_WEIGHTS
    expected = {"t3.md": 1.0, "t2.md": near, "t5.md": near, "t1.md": far, "t6.md": far}
    assert scores == pytest.approx(expected)


def test_notes_pass_no_context(chat_vault: Vault) -> None:
    results = chat_vault.hybrid("shopping eggs")
    assert [r.path for r in results] == ["aside.md"]
    assert results.stages == ["bm25", "fusion"]
