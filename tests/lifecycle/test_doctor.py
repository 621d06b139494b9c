"""The doctor's checks on real vaults put into known bad states, and the rerank probe."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.errors import (
    ConfigError,
    MemtroveError,
    SchemaTooNewError,
    VaultBusyError,
    VaultOpenError,
)
from memtrove.lifecycle.doctor import rerank_health, run_doctor, unopened_report
from memtrove.lifecycle.probes import GOLDEN_PAIRS, rerank_verdict
from memtrove.models.http import COOLDOWN
from memtrove.models.registry import Models, ModelSettings
from memtrove.results import Check, DoctorReport, RerankPair
from tests.fakes.model_server import ModelServer, fake_rerank_score


def by_name(report: DoctorReport) -> dict[str, Check]:
    return {check.name: check for check in report.checks}


@pytest.fixture
def demo(tmp_path: Path, example_copy: Path) -> Iterator[Vault]:
    """The example notes, indexed and embedded by the bundled embedder."""
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as vault:
        vault.add_collection(example_copy, name="demo")
        vault.update()
        vault.embed()
        yield vault


def sql(vault: Vault, statement: str, *parameters: object) -> None:
    connection = vault._connection
    connection.execute(statement, parameters)


def test_a_sound_vault_passes_every_check(demo: Vault) -> None:
    report = demo.doctor()
    assert report.ok and report.summary == "all 19 checks passed"
    assert [check.name for check in report.checks] == [
        "vault", "schema", "engine", "collection demo", "fragments", "vectors", "embeddings", "second space",
        "enrichment",
        "consolidation", "capture", "secrets", "embedding space", "embedder", "llm", "reranker",
        "geometry taint", "geometry canary", "stored vectors",
    ]  # fmt: skip
    checks = by_name(report)
    engine = checks["engine"].detail
    assert engine.startswith("SQLite 3.") if demo.path else engine.startswith("PostgreSQL ")
    assert "310 vectors of wordllama:l2_supercat (256-d), consistent" in checks["vectors"].detail
    assert checks["reranker"].detail.startswith("not configured (stage skipped)")
    assert report.to_dict()["checks"][0] == {
        "name": "vault", "status": "ok", "detail": checks["vault"].detail, "fix": ""
    }  # fmt: skip


def test_a_vector_missing_from_the_index_fails(demo: Vault) -> None:
    sql(demo, "DELETE FROM vectors_vec WHERE rowid = (SELECT MIN(id) FROM content_vectors)")
    check = by_name(demo.doctor())["vectors"]
    assert check.status == "fail" and "1 fragment vectors are missing" in check.detail
    assert "memtrove embed --force" in check.fix


def test_vectors_without_a_fragment_row_and_documents_lacking_vectors_fail(demo: Vault) -> None:
    sql(demo, "DELETE FROM content_vectors WHERE id = (SELECT MIN(id) FROM content_vectors)")
    check = by_name(demo.doctor())["vectors"]
    assert check.status == "fail"
    assert "1 vectors belong to no fragment row" in check.detail
    assert "1 documents marked embedded lack fragment vectors" in check.detail


def test_mixed_models_fail(demo: Vault) -> None:
    sql(demo, "UPDATE content_vectors SET model = 'http:other' WHERE id % 2 = 0")
    check = by_name(demo.doctor())["vectors"]
    assert check.status == "fail" and "several models are mixed" in check.detail


def test_orphan_vectors_are_a_warning(demo: Vault, example_copy: Path) -> None:
    (example_copy / "index.md").unlink()
    demo.update()
    report = demo.doctor()
    check = by_name(report)["orphan vectors"]
    assert check.status == "warn" and "of 1 bodies no active document uses" in check.detail
    assert report.ok


def test_documents_without_fragments_fail_until_update(demo: Vault) -> None:
    sql(demo, "DELETE FROM fragments WHERE hash = (SELECT hash FROM documents LIMIT 1)")
    check = by_name(demo.doctor())["fragments"]
    assert check.status == "fail" and "1 of 30 active documents have no fragments" in check.detail
    assert check.fix == "`memtrove update` builds the missing fragments"
    demo.update()
    assert by_name(demo.doctor())["fragments"].status == "ok"


def test_pending_and_failed_embeddings(demo: Vault) -> None:
    sql(demo, "UPDATE documents SET embed_state = 'pending' WHERE path LIKE 'decisions/%'")
    check = by_name(demo.doctor())["embeddings"]
    assert check.status == "warn" and "documents (0 fragments) wait for vectors" in check.detail
    assert check.fix == "`memtrove embed`"
    sql(
        demo,
        "UPDATE documents SET embed_state = 'failed', embed_attempts = 1, "
        "embed_error = 'embedding service answered HTTP 500' WHERE path = 'index.md'",
    )
    check = by_name(demo.doctor())["embeddings"]
    assert "1 after a failure: embedding service answered HTTP 500" in check.detail
    sql(demo, "UPDATE documents SET embed_attempts = 3 WHERE path = 'index.md'")
    check = by_name(demo.doctor())["embeddings"]
    assert check.status == "warn"
    assert "1 documents failed 3 times and are skipped: demo/index.md (embedding service" in (
        check.detail
    )
    assert "memtrove embed --force" in check.fix


def test_a_different_embedding_space_fails(demo: Vault) -> None:
    sql(demo, "UPDATE embedding_space SET identity = 'http:bge-m3', dimensions = 1024")
    report = demo.doctor()
    check = by_name(report)["embedding space"]
    assert check.status == "fail" and not report.ok
    assert "come from http:bge-m3 (1024-d)" in check.detail
    assert "wordllama:l2_supercat (256-d)" in check.detail
    assert check.fix.startswith("`memtrove embed --force` re-embeds everything")


def test_collection_problems(demo: Vault, tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    demo.add_collection(gone, name="gone")
    empty = tmp_path / "empty"
    empty.mkdir()
    demo.add_collection(empty, name="empty")
    gone.rmdir()
    checks = by_name(demo.doctor())
    assert checks["collection gone"].status == "fail"
    assert "`memtrove collection remove gone`" in checks["collection gone"].fix
    assert checks["collection empty"].status == "warn"
    assert checks["collection demo"].status == "ok"


def test_no_collections_and_a_broken_config(vault: Vault) -> None:
    assert by_name(vault.doctor())["collections"].status == "warn"
    vault.config_file.parent.mkdir(parents=True, exist_ok=True)
    vault.config_file.write_text("collections: [unclosed\n", encoding="utf-8")
    check = by_name(vault.doctor())["config"]
    assert check.status == "fail" and "config.yaml" in check.detail


def test_services_are_probed_outside_the_vault_lock(demo: Vault, model_server: ModelServer) -> None:
    model_server.slow_seconds = 1.5
    model_server.set_mode("embeddings", "slow")
    models = Models(ModelSettings(embed_url=model_server.url))
    lock = threading.Lock()
    thread = threading.Thread(
        target=run_doctor,
        args=(demo._connection, models, demo.collections),
        kwargs={"vault_path": demo.path, "lock": lock},
    )
    thread.start()
    time.sleep(0.5)  # the vault checks take milliseconds; the embedder answers after 1.5 s
    assert lock.acquire(timeout=1.0)
    lock.release()
    thread.join()


# -- rerank health --------------------------------------------------------------------------------


def test_the_golden_pairs_discriminate_under_the_fake_scorer() -> None:
    assert len(GOLDEN_PAIRS) == 8
    for query, relevant, irrelevant in GOLDEN_PAIRS:
        assert fake_rerank_score(query, relevant) >= 0.5, query
        assert fake_rerank_score(query, irrelevant) == 0.0, query


def pairs(*scores: tuple[float, float]) -> list[RerankPair]:
    return [RerankPair(f"q{n}", good, bad) for n, (good, bad) in enumerate(scores)]


@pytest.mark.parametrize(
    ("scores", "verdict"),
    [
        ([(0.9, 0.1)] * 8, "healthy"),
        ([(0.9, 0.1)] * 5 + [(0.1, 0.9)] * 3, "healthy"),
        ([(0.0, 0.0)] * 8, "degenerate"),
        ([(0.0001, 0.0)] * 8, "degenerate"),
        ([(0.1, 0.9)] * 6 + [(0.9, 0.1)] * 2, "inverted"),
        ([(0.5, 0.5)] * 8, "not discriminating"),
        ([(0.9, 0.1)] * 4 + [(0.5, 0.5)] * 4, "not discriminating"),
        ([], "not discriminating"),
    ],
)
def test_rerank_verdict(scores: list[tuple[float, float]], verdict: str) -> None:
    assert rerank_verdict(pairs(*scores))[0] == verdict


def test_rerank_health_not_configured() -> None:
    health = rerank_health(Models())
    assert not health.configured and not health.healthy
    assert health.detail == "no reranker configured: set MEMTROVE_RERANK_URL"


def test_rerank_health_is_live_despite_the_process_cooldown(model_server: ModelServer) -> None:
    COOLDOWN.mark_down(model_server.url, "an earlier failure")
    try:
        health = rerank_health(Models(ModelSettings(rerank_url=model_server.url)))
    finally:
        COOLDOWN.clear(model_server.url)
    assert health.healthy and len(health.pairs) == 8
    assert health.reranker == f"http:reranker at {model_server.url}"
    assert len(model_server.requests_to("rerank")) == 8
    assert health.to_dict()["pairs"][0]["discriminates"] is True


def test_rerank_health_reports_pairs_scored_before_a_failure(model_server: ModelServer) -> None:
    model_server.set_mode("rerank", "ok", count=3)
    model_server.set_mode("rerank", "http500")
    health = rerank_health(Models(ModelSettings(rerank_url=model_server.url)))
    assert health.verdict == "error" and "HTTP 500" in health.detail and health.fix


# -- a vault that cannot be opened ----------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "name", "fix"),
    [
        (None, "vault", "memtrove bootstrap"),
        (VaultOpenError("cannot open vault x: file is not a database"), "vault", "move the file"),
        (SchemaTooNewError("written by a newer memtrove"), "vault", "upgrade memtrove"),
        (VaultBusyError("vault x stayed locked"), "vault", "another process"),
        (ConfigError("MEMTROVE_EMBED_DIMENSIONS must be a whole number"), "config", "setting"),
    ],
)
def test_unopened_report(tmp_path: Path, error: MemtroveError | None, name: str, fix: str) -> None:
    report = unopened_report(tmp_path / "v.sqlite", error, Models())
    assert not report.ok
    assert report.checks[0].name == name and fix in report.checks[0].fix
    assert [check.name for check in report.checks[1:]] == ["embedder", "llm", "reranker"]


def test_unopened_report_with_unreadable_model_settings(tmp_path: Path) -> None:
    report = unopened_report(tmp_path / "v.sqlite", None, ConfigError("MEMTROVE_X is bad"))
    assert [(check.name, check.status) for check in report.checks] == [
        ("vault", "fail"),
        ("config", "fail"),
    ]
