"""The embed job against the fake model server: incremental, resumable, leased, model-bound."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.db.connection import Connection, open_connection, write_transaction
from memtrove.errors import (
    EmbeddingSpaceError,
    LeaseHeldError,
    ModelError,
    ModelResponseError,
    ModelUnavailableError,
)
from memtrove.index.canary import PROBES
from memtrove.index.embedding import MAX_ATTEMPTS, embed_pending
from memtrove.lifecycle.leases import Lease
from memtrove.models.http import Cooldown, RetryPolicy
from memtrove.models.openai_compat import HttpEmbedder
from memtrove.models.registry import Models, ModelSettings
from tests.conftest import write
from tests.fakes.model_server import ModelServer, refused_url

PROBE_TEXT = "memtrove dimension probe"
BREAD_QUERY = "banana bread: mash bananas, add flour, bake"
LONG_NOTE = """# Deployment runbook

## Build

Run the build with the release flag, then check that the artifacts carry the version
number. The build takes about four minutes on the shared runners and caches wheels.

## Rollout

Roll out to the canary hosts first and watch the error rate for ten minutes before
promoting the release to every region; a rollback is one command away.

## Checklist

- tag the commit
- publish the wheels
- announce the release in the team channel
"""


class Sleeps(list[float]):
    """Records the waits a backend asks for instead of sleeping."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def _open(tmp_path: Path, models: ModelSettings | Models) -> Vault:
    return Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config", models=models)


@pytest.fixture
def corpus(notes: Path) -> Path:
    write(notes, "wal.md", "# SQLite WAL\n\nWrite-ahead logging keeps readers going.\n")
    write(notes, "auth.md", "# Auth tokens\n\nRefresh token rotation revokes the old token.\n")
    write(notes, "bread.md", "# Banana bread\n\nMash bananas, add flour, bake for an hour.\n")
    write(notes, "runbook.md", LONG_NOTE)
    return notes


@pytest.fixture
def served(tmp_path: Path, corpus: Path, model_server: ModelServer) -> Iterator[Vault]:
    """An indexed vault whose embedder is the fake server (not yet embedded)."""
    with _open(tmp_path, ModelSettings(embed_url=model_server.url)) as vault:
        vault.add_collection(corpus, name="notes")
        vault.update()
        yield vault


CANARY_TEXTS = tuple(text for _, text in PROBES.values())
CANARY_CALLS = 2  # the canary's requests before any fragment: the documents, the query


def fragment_requests(server: ModelServer) -> list[object]:
    """The embedding requests of fragments (not the canary's probes, nor its end check)."""
    return [
        request
        for request in server.requests_to("embeddings")
        if not any(text.endswith(CANARY_TEXTS) for text in request.body["input"])
    ]


def embedded_texts(server: ModelServer) -> list[str]:
    """Every text the server was asked to embed, the dimension probe and the geometry
    canary's probes left out."""
    return [
        text
        for request in server.requests_to("embeddings")
        for text in request.body["input"]
        if text != PROBE_TEXT and not text.endswith(CANARY_TEXTS)
    ]


def digest(connection: Connection) -> str:
    """A fingerprint of the documents, vectors and embedding space."""
    hasher = hashlib.sha256()
    for table in ("documents", "content_vectors", "embedding_space", "worker_leases"):
        for row in connection.execute(f"SELECT * FROM {table} ORDER BY 1"):
            hasher.update(repr(tuple(row)).encode())
    if connection.execute("SELECT 1 FROM sqlite_master WHERE name = 'vectors_vec'").fetchone():
        for row in connection.execute("SELECT rowid, embedding FROM vectors_vec ORDER BY rowid"):
            hasher.update(repr(tuple(row)).encode())
    return hasher.hexdigest()


def states(vault: Vault) -> dict[str, tuple[str, int, str | None]]:
    rows = vault._connection.execute(
        "SELECT path, embed_state, embed_attempts, embed_error FROM documents WHERE active = 1"
    ).fetchall()
    return {str(r[0]): (str(r[1]), int(r[2]), r[3]) for r in rows}


def fragment_count(vault: Vault, path: str | None = None) -> int:
    sql = "SELECT COUNT(*) FROM fragments f WHERE f.hash IN (SELECT hash FROM documents"
    sql += " WHERE active = 1 AND path = ?)" if path else " WHERE active = 1)"
    return int(vault._connection.execute(sql, (path,) if path else ()).fetchone()[0])


def vector_count(vault: Vault) -> int:
    return int(vault._connection.execute("SELECT COUNT(*) FROM content_vectors").fetchone()[0])


# -- incremental ------------------------------------------------------------------------------


def test_embed_gives_every_fragment_a_vector(served: Vault, model_server: ModelServer) -> None:
    fragments = fragment_count(served)
    assert fragment_count(served, "runbook.md") > 1  # sections and a list, besides `full`
    seen: list[tuple[int, int]] = []
    report = served.embed(progress=lambda done, total: seen.append((done, total)))
    assert (report.documents, report.fragments, report.failed_documents) == (4, fragments, 0)
    assert report.space == "http:embedding (64-d)" and not report.forced and not report.errors
    assert seen[0] == (0, fragments) and seen[-1] == (fragments, fragments)
    assert vector_count(served) == fragments == len(embedded_texts(model_server))
    assert set(states(served).values()) == {("synced", 0, None)}
    space = served._connection.execute("SELECT identity, dimensions FROM embedding_space")
    assert tuple(space.fetchone()) == ("http:embedding", 64)
    # Documents are embedded as `title: <label or title> | text: <fragment>`.
    assert "title: Rollout | text: ## Rollout" in "\n".join(embedded_texts(model_server))
    assert served._connection.execute("SELECT COUNT(*) FROM worker_leases").fetchone()[0] == 0


def test_a_second_embed_does_nothing(served: Vault, model_server: ModelServer) -> None:
    served.embed()
    before = digest(served._connection)
    model_server.reset()
    report = served.embed()
    assert (report.documents, report.fragments, report.failed_documents) == (0, 0, 0)
    assert embedded_texts(model_server) == []
    assert digest(served._connection) == before


def test_editing_a_note_re_embeds_only_its_fragments(
    served: Vault, corpus: Path, model_server: ModelServer
) -> None:
    served.embed()
    write(corpus, "runbook.md", LONG_NOTE.replace("four minutes", "six minutes"))
    served.update()
    assert states(served)["runbook.md"] == ("pending", 0, None)
    model_server.reset()
    report = served.embed()
    sent = embedded_texts(model_server)
    assert report.documents == 1
    assert len(sent) == report.fragments == fragment_count(served, "runbook.md")
    # Fragments whose text did not change were new rows of a new body all the same; the
    # other notes were not touched at all.
    assert not any("bananas" in text or "Refresh token" in text for text in sent)
    assert set(states(served).values()) == {("synced", 0, None)}


# -- resumable --------------------------------------------------------------------------------


def test_an_interrupted_run_keeps_its_committed_batches(
    served: Vault, model_server: ModelServer
) -> None:
    calls: list[int] = []

    def interrupt(done: int, total: int) -> None:
        calls.append(done)
        if len(calls) == 3:  # (0, total), then two committed batches
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        embed_pending(
            served._connection, served.models.embedder, progress=interrupt, batch_fragments=1
        )
    synced = [path for path, state in states(served).items() if state[0] == "synced"]
    assert len(synced) == 2
    assert vector_count(served) == sum(fragment_count(served, path) for path in synced)
    assert served._connection.execute("SELECT COUNT(*) FROM worker_leases").fetchone()[0] == 0
    model_server.reset()
    report = served.embed()
    assert report.documents == 2
    assert len(embedded_texts(model_server)) == report.fragments
    assert vector_count(served) == fragment_count(served)
    assert set(states(served).values()) == {("synced", 0, None)}


def test_a_server_going_down_mid_run_leaves_the_rest_pending(
    served: Vault, model_server: ModelServer
) -> None:
    assert served.models.embedder.dimensions == 64  # learnt while the server is up
    batches: list[int] = []

    def go_down(done: int, total: int) -> None:
        batches.append(done)
        if len(batches) == 2:  # after the first committed batch
            model_server.set_mode("embeddings", "http503")

    with pytest.raises(ModelUnavailableError, match="HTTP 503"):
        embed_pending(
            served._connection, served.models.embedder, progress=go_down, batch_fragments=1
        )
    by_state = sorted(state for state, _, _ in states(served).values())
    assert by_state == ["pending", "pending", "pending", "synced"]
    # An unreachable service is not the documents' fault: no attempt is counted against them.
    assert {attempts for _, attempts, _ in states(served).values()} == {0}
    model_server.set_mode("embeddings", "ok")
    assert served.embed().documents == 3
    assert set(states(served).values()) == {("synced", 0, None)}


def test_bad_answers_are_recorded_per_document_and_the_run_goes_on(
    served: Vault, model_server: ModelServer
) -> None:
    assert served.models.embedder.dimensions == 64  # learnt while the server is up
    model_server.set_mode("embeddings", "nan", count=1, after=CANARY_CALLS)  # the first batch
    report = embed_pending(served._connection, served.models.embedder, batch_fragments=1)
    assert report.failed_documents == 1 and len(report.errors) == 1
    assert "NaN" in report.errors[0] and report.documents == 3
    failed = {path: s for path, s in states(served).items() if s[0] == "failed"}
    assert len(failed) == 1
    ((_, attempts, error),) = failed.values()
    assert attempts == 1 and error is not None and "NaN" in error and "\n" not in error
    # The next run retries it; the attempt stays counted, the error is cleared.
    assert served.embed().documents == 1
    assert {(state, error) for state, _, error in states(served).values()} == {("synced", None)}


def test_one_bad_body_does_not_cost_its_batch_an_attempt(
    served: Vault, model_server: ModelServer
) -> None:
    """A request fails as a whole; the job then tries each body alone and blames only the
    one that fails by itself."""
    assert served.models.embedder.dimensions == 64  # learnt while the server is up
    # the batch, then its first body
    model_server.set_mode("embeddings", "nan", count=2, after=CANARY_CALLS)
    report = served.embed()  # all four notes fit in one batch
    assert (report.documents, report.failed_documents, len(report.errors)) == (3, 1, 1)
    outcome = sorted(state[:2] for state in states(served).values())
    assert outcome == [("failed", 1), ("synced", 0), ("synced", 0), ("synced", 0)]


def test_a_broken_service_is_not_asked_body_by_body_for_long(
    served: Vault, corpus: Path, model_server: ModelServer
) -> None:
    for n in range(6):
        write(corpus, f"more{n}.md", f"# More {n}\n\nAnother short note, number {n}.\n")
    served.update()
    assert served.models.embedder.dimensions == 64
    model_server.set_mode("embeddings", "nan", after=CANARY_CALLS)
    asked = len(model_server.requests_to("embeddings"))
    report = served.embed()
    # The batch, then three bodies alone; the other seven share the batch's failure.
    assert len(model_server.requests_to("embeddings")) - asked == CANARY_CALLS + 4
    assert report.failed_documents == 10 and len(report.errors) == 1
    assert {state[:2] for state in states(served).values()} == {("failed", 1)}


def test_three_failing_batches_in_a_row_stop_the_run(
    served: Vault, model_server: ModelServer
) -> None:
    assert served.models.embedder.dimensions == 64  # learnt while the server is up
    model_server.set_mode("embeddings", "malformed_json", after=CANARY_CALLS)
    with pytest.raises(ModelResponseError, match="malformed JSON"):
        embed_pending(served._connection, served.models.embedder, batch_fragments=1)
    outcome = sorted(state for state, _, _ in states(served).values())
    assert outcome == ["failed", "failed", "failed", "pending"]
    assert vector_count(served) == 0


def test_a_document_failing_three_times_is_no_longer_retried(
    served: Vault, corpus: Path, model_server: ModelServer
) -> None:
    served.embed()
    write(corpus, "broken.md", "# Broken\n\nThe server cannot embed this one.\n")
    served.update()
    for attempt in range(1, MAX_ATTEMPTS + 1):
        model_server.set_mode("embeddings", "nan", after=CANARY_CALLS)
        report = served.embed()
        assert report.failed_documents == 1 and report.errors
        assert states(served)["broken.md"][:2] == ("failed", attempt)
    assert report.skipped_documents == 1
    error = states(served)["broken.md"][2]
    assert error is not None and error.startswith(f"embedding service at {model_server.url}")
    model_server.set_mode("embeddings", "ok")
    model_server.reset()
    report = served.embed()
    assert embedded_texts(model_server) == []  # given up: not even asked
    assert (report.documents, report.skipped_documents) == (0, 1)
    # A new body starts over.
    write(corpus, "broken.md", "# Broken\n\nFixed now.\n")
    served.update()
    assert states(served)["broken.md"] == ("pending", 0, None)
    assert served.embed().documents == 1
    assert states(served)["broken.md"] == ("synced", 0, None)


# -- the lease --------------------------------------------------------------------------------


def test_a_second_concurrent_embed_is_refused(served: Vault, model_server: ModelServer) -> None:
    other = open_connection(served.path)  # another process
    try:
        lease = Lease.acquire(other, "embedding")
        before = digest(served._connection)
        with pytest.raises(LeaseHeldError, match="embedding"):
            served.embed()
        assert embedded_texts(model_server) == []
        assert digest(served._connection) == before
        with pytest.raises(LeaseHeldError):
            served.embed(force=True)  # force is refused before anything is cleared
        assert digest(served._connection) == before
        lease.release()
    finally:
        other.close()
    assert served.embed().documents == 4


def test_an_expired_lease_is_taken_over(served: Vault) -> None:
    other = open_connection(served.path)
    try:
        stale = Lease.acquire(other, "embedding", ttl=-1)  # its holder died long ago
        assert served.embed().documents == 4
        with pytest.raises(LeaseHeldError):
            stale.renew()
    finally:
        other.close()
    assert served._connection.execute("SELECT COUNT(*) FROM worker_leases").fetchone()[0] == 0


def test_a_run_whose_lease_was_taken_over_commits_nothing_more(
    served: Vault, model_server: ModelServer
) -> None:
    """A run too slow to renew its lease loses it; its next batch is fenced off."""
    other = open_connection(served.path)
    thieves: list[Lease] = []

    def steal(done: int, total: int) -> None:
        if done and not thieves:  # after the first committed batch
            with write_transaction(other):
                other.execute("UPDATE worker_leases SET expires_at = '2000-01-01T00:00:00Z'")
            thieves.append(Lease.acquire(other, "embedding"))

    try:
        with pytest.raises(LeaseHeldError, match="taken over"):
            embed_pending(
                served._connection, served.models.embedder, progress=steal, batch_fragments=1
            )
        synced = [path for path, state in states(served).items() if state[0] == "synced"]
        assert len(synced) == 1 and vector_count(served) == fragment_count(served, synced[0])
        holder = other.execute("SELECT lease_token FROM worker_leases").fetchone()
        assert holder[0] == thieves[0].token  # the loser's exit did not release it
    finally:
        other.close()


# -- one embedding space ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "settings",
    [{"embed_model": "other-model"}, {"embed_dimensions": 32}],
    ids=["another-model", "another-dimension"],
)
def test_a_model_switch_is_refused_without_force(
    served: Vault, tmp_path: Path, model_server: ModelServer, settings: dict[str, object]
) -> None:
    served.embed()
    before = digest(served._connection)
    switched = ModelSettings(embed_url=model_server.url, **settings)  # type: ignore[arg-type]
    with _open(tmp_path, switched) as other:
        with pytest.raises(EmbeddingSpaceError) as caught:
            other.embed()
        message = str(caught.value)
        assert "http:embedding (64-d)" in message and "memtrove embed --force" in message
        assert caught.value.status == 409
        assert digest(other._connection) == before
        report = other.embed(force=True)
        assert report.forced and report.documents == 4
        space = other._connection.execute("SELECT identity, dimensions FROM embedding_space")
        assert tuple(space.fetchone()) == (
            f"http:{switched.embed_model}",
            switched.embed_dimensions or 64,
        )
        assert vector_count(other) == fragment_count(other)
        assert set(states(other).values()) == {("synced", 0, None)}
        assert other.vsearch(BREAD_QUERY)[0].path == "bread.md"


def test_a_server_now_answering_another_dimension_is_refused(
    served: Vault, tmp_path: Path, model_server: ModelServer
) -> None:
    served.embed()
    before = digest(served._connection)
    model_server.set_mode("embeddings", "wrong_dimensions")
    with _open(tmp_path, ModelSettings(embed_url=model_server.url)) as fresh:
        with pytest.raises(EmbeddingSpaceError, match=r"32-d"):
            fresh.embed()
        assert digest(fresh._connection) == before


@pytest.mark.parametrize("mode", ["http500", "nan", "malformed_json", "empty_list", "unreachable"])
def test_force_proves_the_new_model_before_clearing(
    served: Vault, tmp_path: Path, model_server: ModelServer, mode: str
) -> None:
    served.embed()
    before = digest(served._connection)
    models = Models(ModelSettings(embed_url=model_server.url, embed_model="new-model"))
    url = refused_url() if mode == "unreachable" else model_server.url
    models._embedder = HttpEmbedder(url, model="new-model", dimensions=64, cooldown=Cooldown())
    if mode != "unreachable":
        model_server.set_mode("embeddings", mode)
    with _open(tmp_path, models) as broken:
        with pytest.raises(ModelError) as caught:
            broken.embed(force=True)
        assert "\n" not in str(caught.value)
        assert digest(broken._connection) == before
    model_server.set_mode("embeddings", "ok")
    assert served.vsearch(BREAD_QUERY)[0].path == "bread.md"


def test_a_broken_dimension_with_force_leaves_the_old_vectors(
    served: Vault, tmp_path: Path, model_server: ModelServer
) -> None:
    served.embed()
    before = digest(served._connection)
    model_server.set_mode("embeddings", "wrong_dimensions")
    settings = ModelSettings(embed_url=model_server.url, embed_model="new", embed_dimensions=64)
    with _open(tmp_path, settings) as broken:
        with pytest.raises(ModelResponseError, match="dimension 32, expected 64"):
            broken.embed(force=True)
        assert digest(broken._connection) == before


def test_an_unreachable_embedder_changes_nothing(served: Vault, tmp_path: Path) -> None:
    before = digest(served._connection)
    models = Models(ModelSettings(embed_url="http://unused"))
    models._embedder = HttpEmbedder(refused_url(), cooldown=Cooldown())
    with _open(tmp_path, models) as down:
        with pytest.raises(ModelUnavailableError, match="unreachable"):
            down.embed()
        with pytest.raises(ModelUnavailableError, match="cooling down"):
            down.embed()
        assert digest(down._connection) == before


# -- 429 --------------------------------------------------------------------------------------


def test_rate_limited_batches_are_retried(
    served: Vault, tmp_path: Path, model_server: ModelServer
) -> None:
    sleeps = Sleeps()
    models = Models(ModelSettings(embed_url=model_server.url))
    models._embedder = HttpEmbedder(model_server.url, dimensions=64, sleep=sleeps)
    model_server.set_mode("embeddings", "429", count=2, after=CANARY_CALLS)
    with _open(tmp_path, models) as vault:
        report = vault.embed()
        assert report.documents == 4 and not report.errors
        assert sleeps == [1.0, 1.0]  # the server's Retry-After
        assert len(fragment_requests(model_server)) == 3


def test_rate_limiting_that_never_ends_is_an_unavailable_service(
    served: Vault, tmp_path: Path, model_server: ModelServer
) -> None:
    sleeps = Sleeps()
    models = Models(ModelSettings(embed_url=model_server.url))
    policy = RetryPolicy(attempts=3, first_wait=5.0, max_wait=60.0)
    models._embedder = HttpEmbedder(
        model_server.url, dimensions=64, sleep=sleeps, batch_retry=policy
    )
    model_server.set_mode("embeddings", "429", retry_after=None)
    with _open(tmp_path, models) as vault:
        with pytest.raises(ModelUnavailableError, match="rate limiting"):
            vault.embed()
        assert sleeps == [5.0, 10.0]  # exponential backoff without Retry-After
        assert {state for state, _, _ in states(vault).values()} == {"pending"}
        assert vector_count(vault) == 0


# -- content-addressed vectors ----------------------------------------------------------------


def test_identical_bodies_share_vectors(
    served: Vault, corpus: Path, model_server: ModelServer
) -> None:
    write(corpus, "copy/bread.md", (corpus / "bread.md").read_text())
    served.update()
    served.embed()
    bread = [text for text in embedded_texts(model_server) if "bananas" in text]
    assert len(bread) == 1
    assert vector_count(served) == fragment_count(served)  # counted once per body
    assert states(served)["copy/bread.md"] == ("synced", 0, None)
    top = served.vsearch(BREAD_QUERY, limit=2)[0]  # one result for both copies
    assert sorted([f"{top.collection}/{top.path}", *top.also_at]) == [
        f"{top.collection}/bread.md",
        f"{top.collection}/copy/bread.md",
    ]


def test_a_renamed_file_keeps_its_vectors(
    served: Vault, corpus: Path, model_server: ModelServer
) -> None:
    served.embed()
    (corpus / "bread.md").rename(corpus / "baking.md")
    assert served.update().renamed == 1
    model_server.reset()
    report = served.embed()
    assert embedded_texts(model_server) == [] and report.fragments == 0
    assert states(served)["baking.md"] == ("synced", 0, None)
    assert served.vsearch(BREAD_QUERY)[0].path == "baking.md"


def test_deactivated_documents_are_not_embedded(
    served: Vault, corpus: Path, model_server: ModelServer
) -> None:
    (corpus / "bread.md").unlink()
    served.update()
    served.embed()
    assert not any("bananas" in text for text in embedded_texts(model_server))


# -- the embedded default ---------------------------------------------------------------------


def test_the_default_embedder_needs_no_server(tmp_path: Path, corpus: Path) -> None:
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as vault:
        vault.add_collection(corpus, name="notes")
        vault.update()
        report = vault.embed()
        assert report.space == "wordllama:l2_supercat (256-d)"
        assert report.documents == 4 and vault.embed().documents == 0
        with write_transaction(vault._connection):
            pass  # the vault is writable again: the job released everything
        assert vault.vsearch("bananas flour baking")[0].path == "bread.md"


def test_a_space_without_vectors_does_not_bind_the_vault(
    tmp_path: Path, model_server: ModelServer
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with _open(tmp_path, ModelSettings()) as vault:
        vault.add_collection(empty, name="e")
        vault.update()
        assert vault.embed().fragments == 0  # records wordllama's space, stores nothing
    write(empty, "a.md", "# Alpha\n\nalpha beta gamma\n")
    with _open(tmp_path, ModelSettings(embed_url=model_server.url)) as vault:
        vault.update()
        report = vault.embed()  # another model: allowed, since no vector would be mixed
        assert report.fragments >= 1 and report.space.startswith("http:")
