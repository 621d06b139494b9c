"""Acceptance: every model service failing in every way, through the Vault facade.

A loopback fake server answers the three OpenAI-compatible endpoints; for each endpoint and
fault the read methods either raise one clear error (vsearch, the only one that needs a
model) or fail open with the stage in ``skipped``; nothing in the vault changes either way.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrove import InvalidQueryError, Vault
from memtrove.db.connection import Connection
from memtrove.errors import EmbeddingSpaceError, ModelError
from memtrove.models.http import Cooldown
from memtrove.models.openai_compat import HttpEmbedder, HttpLLM, HttpReranker
from memtrove.models.registry import Models, ModelSettings
from memtrove.retrieval import pipeline
from tests.conftest import RESULT_FIELDS, write
from tests.fakes.model_server import ModelServer, refused_url

QUERY = "sqlite readers"
FRESH = "readers of sqlite"  # same words, another text: no cached model answer applies


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "_last_warning", {})


def _open(tmp_path: Path, models: ModelSettings | Models) -> Vault:
    return Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config", models=models)


def digest(connection: Connection) -> str:
    hasher = hashlib.sha256()
    for table in ("documents", "content", "fragments", "content_vectors", "embedding_space"):
        for row in connection.execute(f"SELECT * FROM {table} ORDER BY 1, 2"):
            hasher.update(repr(tuple(row)).encode())
    for row in connection.execute("SELECT rowid, embedding FROM vectors_vec ORDER BY rowid"):
        hasher.update(repr(tuple(row)).encode())
    return hasher.hexdigest()


@pytest.fixture
def corpus(notes: Path) -> Path:
    write(notes, "wal.md", "# SQLite WAL\n\nWrite-ahead logging keeps readers going.\n")
    write(notes, "locks.md", "# Locking\n\nSQLite readers take shared locks.\n")
    write(notes, "bread.md", "# Banana bread\n\nMash bananas, add flour, bake.\n")
    for n in range(5):
        write(notes, f"garden{n}.md", f"# Garden {n}\n\nTomatoes and compost, day {n}.\n")
    return notes


@pytest.fixture
def vault(tmp_path: Path, corpus: Path, model_server: ModelServer) -> Iterator[Vault]:
    url = model_server.url
    with _open(tmp_path, ModelSettings(embed_url=url, llm_url=url, rerank_url=url)) as opened:
        opened.add_collection(corpus, name="notes")
        opened.update()
        opened.embed()
        model_server.reset()
        yield opened


FAULTS = {
    "embeddings": {
        "http500": "answered HTTP 500",
        "http503": "answered HTTP 503",
        "wrong_dimensions": "dimension 32, expected 64",
        "nan": "non-finite value (NaN)",
        "malformed_json": "malformed JSON",
        "empty_list": "empty list",
        "short_list": "empty list",
        "degenerate": "zero vector",
    },
    "chat": {
        "http500": "answered HTTP 500",
        "http503": "answered HTTP 503",
        "malformed_json": "malformed JSON",
        "empty_list": "empty list of choices",
        "degenerate": "no lex/vec/hyde line",
    },
    "rerank": {
        "http500": "answered HTTP 500",
        "http503": "answered HTTP 503",
        "nan": "non-finite score",
        "malformed_json": "malformed JSON",
        "empty_list": "empty list",
        "short_list": "missing",
        "degenerate": "degenerate",
    },
}
STAGE = {"embeddings": "vector", "chat": "expansion", "rerank": "rerank"}


@pytest.mark.parametrize(
    ("endpoint", "mode"),
    [(endpoint, mode) for endpoint, modes in FAULTS.items() for mode in modes],
)
def test_every_fault_is_a_clear_error_or_fails_open(
    vault: Vault, model_server: ModelServer, endpoint: str, mode: str
) -> None:
    expected = vault.query(QUERY, limit=3)
    assert expected.stages[-1] == "mmr" and not expected.skipped
    before = digest(vault._connection)
    model_server.set_mode(endpoint, mode)
    stage = STAGE[endpoint]
    results = vault.query(
        FRESH, intent="a fresh question"
    )  # no cached answer (expansion, rerank, query vector) to fall back on
    assert FAULTS[endpoint][mode] in results.skipped[stage]
    assert "\n" not in results.skipped[stage] and stage not in results.stages
    assert {"wal.md", "locks.md"} == {r.path for r in results[:2]}
    if endpoint == "embeddings":
        # A dimension learnt from answers is learnt again after a mismatch, so a server that
        # keeps answering another size is then reported as another embedding space.
        again = re.escape(FAULTS[endpoint][mode])
        if mode == "wrong_dimensions":
            again = f"{again}|configured embedder is http:embedding \\(32-d\\)"
        hybrid = vault.hybrid(FRESH)
        assert re.search(again, hybrid.skipped["vector"])
        assert [r.path for r in hybrid] == [r.path for r in vault.search(FRESH)]
        with pytest.raises((ModelError, EmbeddingSpaceError), match=again):
            vault.vsearch(FRESH)
    else:  # vsearch and hybrid never call the LLM or the reranker
        assert vault.hybrid(FRESH).skipped == {}
        assert len(vault.vsearch(FRESH)) == 8
    assert digest(vault._connection) == before
    model_server.set_mode(endpoint, "ok")
    assert vault.query(FRESH, intent="a fresh question").skipped == {}


def test_refused_connections_cool_every_service_down(vault: Vault, tmp_path: Path) -> None:
    cooldown = Cooldown()
    embed_url, llm_url, rerank_url = refused_url(), refused_url(), refused_url()
    models = Models(ModelSettings(embed_url=embed_url, llm_url=llm_url, rerank_url=rerank_url))
    models._embedder = HttpEmbedder(embed_url, dimensions=64, cooldown=cooldown)
    models._llm = HttpLLM(llm_url, cooldown=cooldown)
    models._reranker = HttpReranker(rerank_url, cooldown=cooldown)
    before = digest(vault._connection)
    with _open(tmp_path, models) as down:
        first = down.query(QUERY)
        assert first.stages == ["bm25", "rrf", "composite", "mmr"]
        assert all(
            "unreachable" in first.skipped[stage] or "cooling down" in first.skipped[stage]
            for stage in ("vector", "expansion", "rerank")
        )
        second = down.query(QUERY)
        assert all("cooling down" in reason for reason in second.skipped.values())
        assert [r.path for r in second] == [r.path for r in first]
        with pytest.raises(ModelError, match="cooling down"):
            down.vsearch(QUERY)
        assert "cooling down" in down.hybrid(QUERY).skipped["vector"]
        assert digest(down._connection) == before


def test_models_come_from_the_environment_when_not_given(
    tmp_path: Path, corpus: Path, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMTROVE_EMBED_URL", model_server.url)
    monkeypatch.setenv("MEMTROVE_RERANK_URL", model_server.url)
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as vault:
        vault.add_collection(corpus, name="notes")
        vault.update()
        assert vault.embed().space == "http:embedding (64-d)"
        results = vault.query(QUERY)
        assert "rerank" in results.stages and "vector" in results.stages
        assert results.skipped == {"expansion": "no LLM configured (MEMTROVE_LLM_URL)"}
        assert model_server.requests_to("rerank")


def test_results_have_the_documented_shape(vault: Vault) -> None:
    for results in (vault.vsearch(QUERY), vault.hybrid(QUERY), vault.query(QUERY)):
        data = results.to_dict()
        assert set(data) >= {"results", "stages", "skipped", "warnings"}
        assert all(set(item) == RESULT_FIELDS for item in data["results"])
    full = vault.query(QUERY, compact=False).to_dict()
    assert all(set(item) == RESULT_FIELDS | {"content"} for item in full["results"])


def test_bad_requests_are_refused_before_any_model_call(
    vault: Vault, model_server: ModelServer
) -> None:
    for call in (vault.vsearch, vault.hybrid, vault.query):
        with pytest.raises(InvalidQueryError):
            call(QUERY, limit=0)
        with pytest.raises(InvalidQueryError, match="unknown content type"):
            call(QUERY, content_types=["nonsense"])
        with pytest.raises(InvalidQueryError, match="ISO date"):
            call(QUERY, since="last week")
    with pytest.raises(InvalidQueryError):
        vault.query(QUERY, candidate_limit=0)
    assert model_server.requests == []


def test_another_process_embedding_is_seen_at_once(
    vault: Vault, tmp_path: Path, corpus: Path, model_server: ModelServer
) -> None:
    assert "new.md" not in {r.path for r in vault.vsearch(QUERY, limit=50)}
    write(corpus, "new.md", "# New\n\nSQLite readers, newly written.\n")
    with _open(tmp_path, ModelSettings(embed_url=model_server.url)) as other:
        other.update()
        assert other.embed().documents == 1
    assert "new.md" in {r.path for r in vault.vsearch(QUERY, limit=50)}
    assert "new.md" in {r.path for r in vault.hybrid(QUERY, limit=50)}


def test_a_forced_switch_by_another_process_is_seen_at_once(
    vault: Vault, tmp_path: Path, model_server: ModelServer
) -> None:
    assert len(vault.vsearch(QUERY)) == 8
    settings = ModelSettings(embed_url=model_server.url, embed_dimensions=32)
    with _open(tmp_path, settings) as other:
        other.embed(force=True)
    # This process's embedder no longer matches the vault: refused, never mixed.
    with pytest.raises(EmbeddingSpaceError, match="32-d"):
        vault.vsearch(QUERY)
    assert "memtrove embed --force" in vault.hybrid(QUERY).skipped["vector"]
