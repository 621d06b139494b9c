"""The geometry gate of ``Vault.embed`` beyond what the CLI tests show: a server changing
while the run writes, a refusal that writes nothing, the taint's merging, the baseline kept
by healthy runs; on SQLite and PostgreSQL with the fake embedding service."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.db.connection import write_transaction
from memtrove.errors import ConfigError, EmbeddingSpaceError, ModelUnavailableError
from memtrove.index.canary import load_baseline, profile_key
from memtrove.index.vault_flags import TAINT_FLAG, read_taint
from memtrove.models.http import Cooldown
from memtrove.models.openai_compat import HttpEmbedder
from memtrove.models.registry import ModelSettings
from memtrove.retrieval.vectors import vector_count
from tests.conftest import ENGINES, write
from tests.fakes.model_server import ModelServer, refused_url
from tests.postgres_server import vault_schema

PROFILE = profile_key("http:embedding", 64)


@pytest.fixture(params=ENGINES)
def served(
    request: pytest.FixtureRequest, tmp_path: Path, model_server: ModelServer
) -> Iterator[Vault]:
    """A vault of 8 notes (a batch each), indexed with the fake service as its embedder."""
    notes = tmp_path / "notes"
    for n in range(8):
        write(notes, f"note{n}.md", f"# Note {n}\n\nThe heron number {n} stood by the canal.\n")
    settings = ModelSettings(embed_url=model_server.url)

    def opened(location: str | Path) -> Vault:
        vault = Vault.open(location, config_dir=tmp_path / "config", models=settings)
        vault.add_collection(notes, name="notes")
        vault.update()
        return vault

    if request.param == "sqlite":
        with opened(tmp_path / "vault.sqlite") as vault:
            yield vault
        return
    with vault_schema() as location, opened(location) as vault:
        yield vault


def test_a_server_changing_mid_run_taints_the_written_vectors(
    served: Vault, model_server: ModelServer
) -> None:
    def change(done: int, total: int) -> None:
        if done:  # after the first batch committed
            model_server.geometry = "hot-swapped"

    from memtrove.index.embedding import embed_pending

    report = embed_pending(
        served._connection, served.models.embedder, progress=change, batch_fragments=1
    )
    assert report.fragments > 0 and report.taint is not None
    assert "changed during the run" in report.taint and "--force" in report.taint
    assert any(error.startswith("geometry taint: ") for error in report.errors)
    taint = read_taint(served._connection)
    assert taint is not None and taint.vectors_written
    # No baseline was stored from a run that could not be verified.
    assert load_baseline(served._connection, PROFILE) is None
    # A healthy incremental run does not clear a taint under which vectors were written...
    model_server.geometry = ""
    assert served.embed().errors == []
    assert read_taint(served._connection) is not None
    # ... a verified full re-embed does.
    assert served.embed(force=True).errors == []
    assert read_taint(served._connection) is None


def test_healthy_runs_keep_the_first_baseline(served: Vault, model_server: ModelServer) -> None:
    served.embed()
    first = load_baseline(served._connection, PROFILE)
    assert first is not None
    served.embed(force=True)
    again = load_baseline(served._connection, PROFILE)
    assert again is not None and again.embedded_at == first.embedded_at
    # Not even a forced run replaces it without --recalibrate-canary: a changed server is
    # refused before anything is cleared.
    model_server.geometry = "another build"
    vectors = vector_count(served._connection)
    with pytest.raises(EmbeddingSpaceError, match="--force-geometry") as caught:
        served.embed(force=True)
    assert "\n" not in str(caught.value)
    assert vector_count(served._connection) == vectors
    with pytest.raises(ConfigError, match="with --force"):
        served.embed(recalibrate_canary=True)
    served.embed(force=True, recalibrate_canary=True)
    replaced = load_baseline(served._connection, PROFILE)
    assert replaced is not None and replaced.embedded_at >= first.embedded_at
    assert replaced.vectors["unrelated"].tolist() != first.vectors["unrelated"].tolist()


def test_an_unreachable_service_writes_and_taints_nothing(served: Vault) -> None:
    from memtrove.index.embedding import embed_pending

    served.embed()
    vectors = vector_count(served._connection)
    down = HttpEmbedder(refused_url(), dimensions=64, cooldown=Cooldown())
    with pytest.raises(ModelUnavailableError):
        embed_pending(served._connection, down, force=True)
    assert read_taint(served._connection) is None
    assert vector_count(served._connection) == vectors


def test_a_taint_written_by_another_tool_is_trusted_for_nothing(served: Vault) -> None:
    served.embed()
    with write_transaction(served._connection):
        served._connection.execute(
            "INSERT INTO vault_flags (flag, value, updated_at) VALUES (?, ?, ?)",
            (TAINT_FLAG, "set by hand", "2026-01-01T00:00:00Z"),
        )
    taint = read_taint(served._connection)
    assert taint is not None and taint.reason == "set by hand" and taint.vectors_written
    assert served.status().geometry_taint is not None
    served.embed()  # a passing incremental run cannot vouch for the vectors
    assert read_taint(served._connection) is not None
    served.embed(force=True)
    assert read_taint(served._connection) is None and served.status().geometry_taint is None
