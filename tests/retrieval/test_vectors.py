"""vsearch against the fake model server: ranking, filters, deactivation, one space, failures."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.db.connection import Connection
from memtrove.errors import EmbeddingSpaceError, ModelError
from memtrove.models.http import Cooldown
from memtrove.models.openai_compat import HttpEmbedder
from memtrove.models.registry import Models, ModelSettings
from tests.conftest import RESULT_FIELDS, write
from tests.fakes.model_server import ModelServer, refused_url

WAL_QUERY = "sqlite write-ahead logging readers"


def note(date: str, title: str, text: str, content_type: str | None = None) -> str:
    """A markdown note whose frontmatter gives its date (and its type)."""
    kind = f"type: {content_type}\n" if content_type else ""
    return f"---\ndate: {date}\n{kind}---\n# {title}\n\n{text}\n"


CORPUS = {
    "work/wal.md": note("2026-02-01", "SQLite WAL", "Write-ahead logging keeps readers going."),
    "work/decisions/wal.md": note(
        "2026-03-05",
        "WAL for readers",
        "We decided on SQLite write-ahead logging so readers never block.",
        "decision",
    ),
    "work/auth.md": note(
        "2026-03-01", "Auth tokens", "Refresh token rotation revokes the old token."
    ),
    "home/wal.md": note(
        "2026-02-20",
        "WAL at home",
        "My home server runs SQLite with write-ahead logging for readers.",
    ),
    "home/bread.md": note("2026-02-15", "Banana bread", "Mash bananas, add flour, bake."),
}


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    for path, text in CORPUS.items():
        write(tmp_path, path, text)
    work, home = tmp_path / "work", tmp_path / "home"
    return work, home


def _open(tmp_path: Path, models: ModelSettings | Models) -> Vault:
    return Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config", models=models)


@pytest.fixture
def vault(tmp_path: Path, folders: tuple[Path, Path], model_server: ModelServer) -> Iterator[Vault]:
    """Two collections, indexed and embedded by the fake server."""
    with _open(tmp_path, ModelSettings(embed_url=model_server.url)) as opened:
        opened.add_collection(folders[0], name="work")
        opened.add_collection(folders[1], name="home")
        opened.update()
        opened.embed()
        model_server.reset()
        yield opened


def digest(connection: Connection) -> str:
    hasher = hashlib.sha256()
    for table in ("documents", "content_vectors", "embedding_space", "llm_cache"):
        for row in connection.execute(f"SELECT * FROM {table} ORDER BY 1"):
            hasher.update(repr(tuple(row)).encode())
    return hasher.hexdigest()


def paths(results: list[object]) -> list[str]:
    return [f"{r.collection}/{r.path}" for r in results]  # type: ignore[attr-defined]


def test_vsearch_ranks_by_cosine_similarity(vault: Vault, model_server: ModelServer) -> None:
    results = vault.vsearch(WAL_QUERY)
    assert results.stages == ["vector"] and results.skipped == {}
    assert len(results) == 5
    assert paths(results)[-1] == "home/bread.md"
    assert set(paths(results)[:3]) == {"work/wal.md", "work/decisions/wal.md", "home/wal.md"}
    scores = [result.score for result in results]
    assert scores == sorted(scores, reverse=True) and all(0.0 <= s <= 1.0 for s in scores)
    assert set(results[0].to_dict()) == RESULT_FIELDS
    # One query embedding, in the prompt shape of the spec; nothing else was asked.
    (request,) = model_server.requests
    assert request.body["input"] == [f"task: search result | query: {WAL_QUERY}"]
    assert [r.path for r in vault.vsearch(WAL_QUERY, limit=2)] == [r.path for r in results[:2]]


def test_min_score_and_empty_queries(vault: Vault, model_server: ModelServer) -> None:
    results = vault.vsearch(WAL_QUERY)
    cut = (results[2].score + results[3].score) / 2
    assert paths(vault.vsearch(WAL_QUERY, min_score=cut)) == paths(results)[:3]
    assert list(vault.vsearch("   ")) == []


def test_the_best_fragment_gives_the_score(tmp_path: Path, model_server: ModelServer) -> None:
    """A long note matches through its section, though the whole note is mostly unrelated."""
    notes = tmp_path / "notes"
    filler = " ".join(f"garden{n} weeds{n} compost{n}" for n in range(60))
    storage = "## Storage\n\nSQLite write-ahead logging keeps readers going, say the readers.\n"
    write(notes, "long.md", f"# Garden\n\n{filler}\n\n{storage}")
    write(notes, "other.md", "# Other\n\nSomething about readers only.\n")
    with _open(tmp_path, ModelSettings(embed_url=model_server.url)) as vault:
        vault.add_collection(notes, name="notes")
        vault.update()
        vault.embed()
        results = vault.vsearch(WAL_QUERY)
        assert results[0].path == "long.md"
        assert "write-ahead" in results[0].snippet


def test_vsearch_without_vectors_says_how_to_fix_it(
    tmp_path: Path, folders: tuple[Path, Path], model_server: ModelServer
) -> None:
    with _open(tmp_path, ModelSettings(embed_url=model_server.url)) as vault:
        vault.add_collection(folders[0], name="work")
        vault.update()
        with pytest.raises(EmbeddingSpaceError, match="run `memtrove embed`") as caught:
            vault.vsearch(WAL_QUERY)
        assert caught.value.status == 409
        assert model_server.requests == []  # refused before any model call


@pytest.mark.parametrize(
    "settings",
    [{"embed_model": "other-model"}, {"embed_dimensions": 32}],
    ids=["another-model", "another-dimension"],
)
def test_another_embedder_is_refused_not_mixed(
    vault: Vault, tmp_path: Path, model_server: ModelServer, settings: dict[str, object]
) -> None:
    switched = ModelSettings(embed_url=model_server.url, **settings)  # type: ignore[arg-type]
    with _open(tmp_path, switched) as other:
        with pytest.raises(EmbeddingSpaceError) as caught:
            other.vsearch(WAL_QUERY)
        message = str(caught.value)
        assert "http:embedding (64-d)" in message and "`memtrove embed --force`" in message


def test_the_embedded_model_answers_when_the_configured_one_is_down(
    tmp_path: Path, folders: tuple[Path, Path]
) -> None:
    """Vectors made by the bundled model; a configured server that is off: queries fall back."""
    with _open(tmp_path, ModelSettings()) as vault:
        vault.add_collection(folders[0], name="work")
        vault.update()
        vault.embed()
    models = Models(ModelSettings(embed_url="http://configured"))
    models._embedder = HttpEmbedder(refused_url(), cooldown=Cooldown())
    with _open(tmp_path, models) as vault:
        results = vault.vsearch(WAL_QUERY)
        assert results[0].path in {"wal.md", "decisions/wal.md"}


@pytest.mark.parametrize(
    ("mode", "error"),
    [
        ("http500", "answered HTTP 500"),
        ("http503", "answered HTTP 503"),
        ("nan", "non-finite value (NaN)"),
        ("malformed_json", "malformed JSON"),
        ("empty_list", "empty list"),
        ("short_list", "empty list for 1 texts"),
        ("wrong_dimensions", "dimension 32, expected 64"),
        ("degenerate", "zero vector"),
    ],
)
def test_a_failing_server_is_a_clear_error_and_changes_nothing(
    vault: Vault, model_server: ModelServer, mode: str, error: str
) -> None:
    before = digest(vault._connection)
    model_server.set_mode("embeddings", mode)
    with pytest.raises(ModelError) as caught:
        vault.vsearch(WAL_QUERY)
    message = str(caught.value)
    assert error in message and "\n" not in message
    assert message.startswith(f"embedding service at {model_server.url}")
    assert digest(vault._connection) == before
    model_server.set_mode("embeddings", "ok")
    assert len(vault.vsearch(WAL_QUERY)) == 5


def test_a_fresh_process_meeting_a_wrong_dimension_is_refused(
    vault: Vault, tmp_path: Path, model_server: ModelServer
) -> None:
    model_server.set_mode("embeddings", "wrong_dimensions")
    with (
        _open(tmp_path, ModelSettings(embed_url=model_server.url)) as fresh,
        pytest.raises(EmbeddingSpaceError, match=r"http:embedding \(32-d\)"),
    ):
        fresh.vsearch(WAL_QUERY)


def test_an_unreachable_server_cools_down(vault: Vault, tmp_path: Path) -> None:
    models = Models(ModelSettings(embed_url="http://configured", embed_dimensions=64))
    models._embedder = HttpEmbedder(refused_url(), dimensions=64, cooldown=Cooldown())
    with _open(tmp_path, models) as down:
        with pytest.raises(ModelError, match="unreachable"):
            down.vsearch(WAL_QUERY)
        with pytest.raises(ModelError, match="cooling down for 60s"):
            down.vsearch(WAL_QUERY)


# -- deactivation -----------------------------------------------------------------------------


def test_deleted_files_are_never_returned(vault: Vault, folders: tuple[Path, Path]) -> None:
    (folders[0] / "wal.md").unlink()
    vault.update()
    assert "work/wal.md" not in paths(vault.vsearch(WAL_QUERY))
    assert len(vault.vsearch(WAL_QUERY, limit=50)) == 4


def test_a_removed_collection_is_never_returned(vault: Vault) -> None:
    vault.remove_collection("home")
    found = paths(vault.vsearch(WAL_QUERY, limit=50))
    assert found and all(path.startswith("work/") for path in found)


def test_a_deleted_copy_does_not_hide_the_live_one(
    vault: Vault, folders: tuple[Path, Path], model_server: ModelServer
) -> None:
    """Identical bodies share vectors; deleting one copy keeps the other searchable."""
    work = folders[0]
    write(work, "copy.md", (work / "auth.md").read_text())
    vault.update()
    vault.embed()
    found = vault.vsearch("refresh token rotation")  # the copies collapse into one result
    (shown,) = [r for r in found if r.path in ("auth.md", "copy.md")]
    assert {*paths([shown]), *shown.also_at} == {"work/auth.md", "work/copy.md"}
    (work / "auth.md").unlink()
    vault.update()
    found = paths(vault.vsearch("refresh token rotation", limit=50))
    assert "work/copy.md" in found and "work/auth.md" not in found


# -- filters ----------------------------------------------------------------------------------


def test_collection_filter(vault: Vault) -> None:
    home = vault.vsearch(WAL_QUERY, collections=["home"])
    assert set(paths(home)) == {"home/wal.md", "home/bread.md"}
    assert len(vault.vsearch(WAL_QUERY, collections=["home", "work"])) == 5


def test_content_type_filter(vault: Vault) -> None:
    assert paths(vault.vsearch(WAL_QUERY, content_types=["decision"])) == ["work/decisions/wal.md"]


def test_date_filters(vault: Vault) -> None:
    february = vault.vsearch(WAL_QUERY, since="2026-02-01", until="2026-02-28")
    assert set(paths(february)) == {"work/wal.md", "home/wal.md", "home/bread.md"}
    assert paths(vault.vsearch(WAL_QUERY, since="2026-03-02")) == ["work/decisions/wal.md"]
    assert paths(vault.vsearch(WAL_QUERY, until="2026-02-01")) == ["work/wal.md"]


def test_a_filter_reaching_past_the_first_candidates(
    tmp_path: Path, model_server: ModelServer
) -> None:
    """The nearest fragments all belong to another collection: the search keeps widening."""
    crowd, few = tmp_path / "crowd", tmp_path / "few"
    for n in range(80):
        write(crowd, f"wal{n}.md", f"# WAL {n}\n\nSQLite write-ahead logging readers {n}.\n")
    write(few, "a.md", "# Cooking\n\nBanana bread with flour.\n")
    write(few, "b.md", "# Travel\n\nTrains across the alps.\n")
    with _open(tmp_path, ModelSettings(embed_url=model_server.url)) as vault:
        vault.add_collection(crowd, name="crowd")
        vault.add_collection(few, name="few")
        vault.update()
        vault.embed()
        assert [r.collection for r in vault.vsearch(WAL_QUERY, limit=5)] == ["crowd"] * 5
        found = vault.vsearch(WAL_QUERY, limit=5, collections=["few"])
        assert sorted(r.path for r in found) == ["a.md", "b.md"]
