"""The query pipeline end to end against the fake model server (no mocks of our own code)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from memtrove import SearchResult, Vault
from memtrove.db.connection import Connection
from memtrove.models.http import Cooldown
from memtrove.models.openai_compat import HttpLLM, HttpReranker
from memtrove.models.registry import Models, ModelSettings
from memtrove.retrieval import pipeline
from memtrove.retrieval.chunks import CHUNK_SIZE
from tests.conftest import write
from tests.fakes.model_server import ModelServer, refused_url

FULL_STAGES = ["bm25", "vector", "expansion", "rrf", "rerank", "composite", "mmr"]
WAL = (
    "# SQLite WAL\n\nWrite-ahead logging keeps readers going while one writer commits its pages.\n"
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The warning rate limit is per process: each test starts with none given."""
    monkeypatch.setattr(pipeline, "_last_warning", {})


def _open(tmp_path: Path, models: ModelSettings | Models) -> Vault:
    return Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config", models=models)


def digest(connection: Connection) -> str:
    """Documents, vectors and the space: what a failing search must never change."""
    hasher = hashlib.sha256()
    for table in ("documents", "content_vectors", "embedding_space"):
        for row in connection.execute(f"SELECT * FROM {table} ORDER BY 1"):
            hasher.update(repr(tuple(row)).encode())
    return hasher.hexdigest()


def paths(results: Sequence[SearchResult]) -> list[str]:
    return [r.path for r in results]


def served_settings(server: ModelServer, *, llm: bool = True, rerank: bool = True) -> ModelSettings:
    return ModelSettings(
        embed_url=server.url,
        llm_url=server.url if llm else None,
        rerank_url=server.url if rerank else None,
    )


@pytest.fixture
def corpus(notes: Path) -> Path:
    write(notes, "wal.md", WAL)
    write(notes, "locks.md", "# Locking\n\nSQLite readers take shared locks; one writer at once.\n")
    write(notes, "auth.md", "# Auth tokens\n\nRefresh token rotation revokes the old token.\n")
    write(notes, "bread.md", "# Banana bread\n\nMash bananas, add flour, bake for an hour.\n")
    write(notes, "kw.md", "# Lists\n\nA list of keywords for the index.\n")
    write(notes, "meaning.md", "# Words\n\nThe meaning of life, a passage in time.\n")
    for n in range(6):
        write(notes, f"garden{n}.md", f"# Garden {n}\n\nTomatoes, weeds and compost, day {n}.\n")
    return notes


@pytest.fixture
def vault(tmp_path: Path, corpus: Path, model_server: ModelServer) -> Iterator[Vault]:
    """Indexed and embedded; embedder, LLM and reranker all on the fake server."""
    with _open(tmp_path, served_settings(model_server)) as opened:
        opened.add_collection(corpus, name="notes")
        opened.update()
        opened.embed()
        model_server.reset()
        yield opened


# -- stages -----------------------------------------------------------------------------------


def test_every_stage_runs_when_every_model_is_there(
    vault: Vault, model_server: ModelServer
) -> None:
    results = vault.query("sqlite readers")
    assert results.stages == FULL_STAGES
    assert results.skipped == {} and results.warnings == []
    assert {"wal.md", "locks.md"} == set(paths(results)[:2])
    assert len(model_server.requests_to("chat")) == 1
    assert model_server.requests_to("rerank")
    data = results.to_dict()
    assert data["stages"] == FULL_STAGES and data["skipped"] == {}


def test_without_llm_and_reranker_their_stages_are_skipped(
    tmp_path: Path, corpus: Path, model_server: ModelServer
) -> None:
    with _open(tmp_path, served_settings(model_server, llm=False, rerank=False)) as vault:
        vault.add_collection(corpus, name="notes")
        vault.update()
        vault.embed()
        model_server.reset()
        results = vault.query("sqlite readers")
        # No expansion lists: score fusion, as in hybrid (rank fusion needs more lists).
        assert results.stages == ["bm25", "vector", "fusion", "composite", "mmr"]
        assert results.skipped == {
            "expansion": "no LLM configured (MEMTROVE_LLM_URL)",
            "rerank": "no reranker configured (MEMTROVE_RERANK_URL)",
        }
        assert results.warnings == []
        assert {r.endpoint for r in model_server.requests} == {"embeddings"}
        assert set(paths(results)[:2]) == {"wal.md", "locks.md"}


def test_without_vectors_the_vector_stage_is_skipped(
    tmp_path: Path, corpus: Path, model_server: ModelServer
) -> None:
    with _open(tmp_path, served_settings(model_server)) as vault:
        vault.add_collection(corpus, name="notes")
        vault.update()
        results = vault.query("sqlite readers")
        assert results.stages == ["bm25", "expansion", "rrf", "rerank", "composite", "mmr"]
        assert "run `memtrove embed`" in results.skipped["vector"]
        # vec/hyde variants have nowhere to go: nothing is embedded at all.
        assert model_server.requests_to("embeddings") == []
        assert set(paths(results)[:2]) == {"wal.md", "locks.md"}


def test_nothing_configured_and_nothing_embedded_is_still_a_search(
    tmp_path: Path, corpus: Path
) -> None:
    with _open(tmp_path, ModelSettings()) as vault:
        vault.add_collection(corpus, name="notes")
        vault.update()
        results = vault.query("sqlite readers")
        assert results.stages == ["bm25", "fusion", "composite", "mmr"]
        assert set(results.skipped) == {"vector", "expansion", "rerank"}
        assert set(paths(results)) == {"wal.md", "locks.md"}


# -- the BM25 bypass --------------------------------------------------------------------------


@pytest.fixture
def strong(notes: Path) -> Path:
    """A query with one obvious keyword match: ``raft leader election``."""
    for n in range(12):
        write(notes, f"garden{n}.md", f"# Garden {n}\n\nTomatoes, weeds and compost, day {n}.\n")
    raft = "Raft elects a leader; raft leader election uses randomized timeouts."
    write(notes, "raft.md", f"# Raft consensus\n\n{raft}\n")
    write(notes, "paxos.md", "# Paxos\n\nAnother consensus protocol.\n")
    return notes


def test_a_strong_keyword_hit_bypasses_the_models(
    tmp_path: Path, strong: Path, model_server: ModelServer
) -> None:
    with _open(tmp_path, served_settings(model_server)) as vault:
        vault.add_collection(strong, name="notes")
        vault.update()
        vault.embed()
        model_server.reset()
        top = vault.search("raft leader election")
        assert top[0].score >= pipeline.BYPASS_SCORE
        results = vault.query("raft leader election")
        assert results.stages == ["bm25", "bypass", "composite"]
        assert results.skipped == dict.fromkeys(
            ("expansion", "vector", "rerank"), "strong BM25 signal"
        )
        assert paths(results) == ["raft.md"]
        assert model_server.requests == []  # not a single model call


def test_intent_turns_the_bypass_off(
    tmp_path: Path, strong: Path, model_server: ModelServer
) -> None:
    with _open(tmp_path, served_settings(model_server)) as vault:
        vault.add_collection(strong, name="notes")
        vault.update()
        vault.embed()
        results = vault.query("raft leader election", intent="distributed systems course")
        assert results.stages == FULL_STAGES
        assert paths(results)[0] == "raft.md"


def test_the_bypass_can_be_disabled(
    tmp_path: Path, strong: Path, model_server: ModelServer
) -> None:
    settings = ModelSettings(embed_url=model_server.url, disable_fts_bypass=True)
    with _open(tmp_path, settings) as vault:
        vault.add_collection(strong, name="notes")
        vault.update()
        vault.embed()
        results = vault.query("raft leader election")
        assert "bypass" not in results.stages and "vector" in results.stages


# -- typed expansion --------------------------------------------------------------------------


def test_variants_are_routed_by_type(vault: Vault, model_server: ModelServer) -> None:
    """lex -> BM25 only; vec and hyde -> vectors only; the original query -> both."""
    vault.query("sqlite readers")
    (chat,) = model_server.requests_to("chat")
    assert chat.body["messages"][0]["content"].startswith(
        "Expand this search query: sqlite readers"
    )
    embedded = [r.body["input"][0] for r in model_server.requests_to("embeddings")]
    assert embedded == [
        "task: search result | query: sqlite readers",
        "task: search result | query: sqlite readers meaning",
        "task: search result | query: A passage about sqlite readers.",
    ]  # the lex variant ("sqlite readers keywords") is never embedded


def test_lex_variants_reach_bm25_and_the_others_do_not(
    tmp_path: Path, corpus: Path, model_server: ModelServer
) -> None:
    """Without vectors, only BM25 legs are left: kw.md is found through the lex variant's
    "keywords"; meaning.md (the vec and hyde variants' words) is not found at all."""
    with _open(tmp_path, served_settings(model_server, rerank=False)) as vault:
        vault.add_collection(corpus, name="notes")
        vault.update()
        found = paths(vault.query("sqlite readers", limit=50))
        assert "kw.md" in found and "meaning.md" not in found
        assert "kw.md" not in paths(vault.search("sqlite readers", limit=50))


def test_a_failed_expansion_is_skipped_with_a_warning(
    vault: Vault, model_server: ModelServer
) -> None:
    model_server.set_mode("chat", "http500")
    before = digest(vault._connection)
    results = vault.query("sqlite readers")
    assert "HTTP 500" in results.skipped["expansion"]
    assert "expansion" not in results.stages and "rerank" in results.stages
    assert len(results.warnings) == 1 and "query expansion failed" in results.warnings[0]
    assert set(paths(results)[:2]) == {"wal.md", "locks.md"}
    assert digest(vault._connection) == before
    # Not cached: once the LLM is back, the query is expanded.
    model_server.set_mode("chat", "ok")
    assert "expansion" in vault.query("sqlite readers").stages


@pytest.mark.parametrize(
    ("mode", "error"),
    [
        ("http503", "HTTP 503"),
        ("malformed_json", "malformed JSON"),
        ("empty_list", "empty list of choices"),
        ("429", "rate limiting"),
    ],
)
def test_llm_failures_fail_open(
    tmp_path: Path, vault: Vault, model_server: ModelServer, mode: str, error: str
) -> None:
    models = Models(served_settings(model_server))
    models._llm = HttpLLM(model_server.url, sleep=Sleeps(), cooldown=Cooldown())
    model_server.set_mode("chat", mode)
    before = digest(vault._connection)
    with _open(tmp_path, models) as same:
        results = same.query("sqlite readers")
        assert error in results.skipped["expansion"] and "\n" not in results.skipped["expansion"]
        assert results.stages == ["bm25", "vector", "rrf", "rerank", "composite", "mmr"]
        assert digest(same._connection) == before


def test_an_empty_expansion_is_not_cached(vault: Vault, model_server: ModelServer) -> None:
    model_server.set_mode("chat", "degenerate", count=1)  # an empty answer, once
    empty = vault.query("sqlite readers")
    assert "expansion" not in empty.stages and "no lex/vec/hyde" in empty.skipped["expansion"]
    assert "expansion" in vault.query("sqlite readers").stages
    assert len(model_server.requests_to("chat")) == 2
    vault.query("sqlite readers")
    assert len(model_server.requests_to("chat")) == 2  # the good answer was cached


# -- reranking --------------------------------------------------------------------------------


@pytest.fixture
def blend(notes: Path) -> Path:
    """zeta.md is BM25's best (its path and title match) but its body says nothing the
    reranker can see; plans.md holds more of the query's words in its body."""
    for n in range(8):
        extra = " alpha" if n < 3 else ""
        write(notes, f"filler{n}.md", f"# Filler {n}\n\nWords about gardening {n}{extra}.\n")
    write(notes, "zeta.md", "---\ntitle: Zeta\n---\nUnrelated words here.\n")
    write(notes, "plans.md", "# Plans\n\nThe alpha and beta plans.\n")
    return notes


BLEND_QUERY = "zeta alpha beta"


def _blend_vault(tmp_path: Path, blend: Path, settings: ModelSettings | Models) -> Vault:
    vault = _open(tmp_path, settings)
    if not vault.collections():
        vault.add_collection(blend, name="notes")
        vault.update()
    return vault


def test_the_reranker_can_promote_a_document_over_the_fused_first(
    tmp_path: Path, blend: Path, model_server: ModelServer
) -> None:
    with _blend_vault(tmp_path, blend, ModelSettings()) as plain:
        assert paths(plain.search(BLEND_QUERY))[0] == "zeta.md"
        fused = plain.query(BLEND_QUERY, diverse=False)
        assert paths(fused)[0] == "zeta.md"
    with _blend_vault(tmp_path, blend, ModelSettings(rerank_url=model_server.url)) as reranked:
        results = reranked.query(BLEND_QUERY, diverse=False)
        assert "rerank" in results.stages and "rerank" not in results.skipped
        assert paths(results)[0] == "plans.md"
        assert paths(results)[-1] == "zeta.md"  # 0.9 x nothing + 0.1 x the best RRF score
        texts = [t for r in model_server.requests_to("rerank") for t in r.body["documents"]]
        assert "Unrelated words here.\n" in texts  # the body, without its frontmatter
        assert all(r.body["query"] == BLEND_QUERY for r in model_server.requests_to("rerank"))
        assert all(len(r.body["documents"]) <= 4 for r in model_server.requests_to("rerank"))


def test_a_degenerate_reranker_falls_back_to_the_fused_order(
    tmp_path: Path, blend: Path, model_server: ModelServer
) -> None:
    with _blend_vault(tmp_path, blend, ModelSettings()) as plain:
        fused = paths(plain.query(BLEND_QUERY, diverse=False))
    model_server.set_mode("rerank", "degenerate")
    with _blend_vault(tmp_path, blend, ModelSettings(rerank_url=model_server.url)) as vault:
        first = vault.query(BLEND_QUERY, diverse=False)
        assert paths(first) == fused
        assert "degenerate" in first.skipped["rerank"] and "rerank" not in first.stages
        assert len(first.warnings) == 1 and "rerank-health" in first.warnings[0]
        # Within the minute: the same fallback, said in `skipped`, but no second warning.
        asked = len(model_server.requests_to("rerank"))
        second = vault.query(BLEND_QUERY, diverse=False)
        assert second.warnings == [] and "degenerate" in second.skipped["rerank"]
        assert paths(second) == fused
        assert len(model_server.requests_to("rerank")) > asked  # zeros are not cached
        # Once repaired, the reranker is used again at once.
        model_server.set_mode("rerank", "ok")
        repaired = vault.query(BLEND_QUERY, diverse=False)
        assert "rerank" in repaired.stages and paths(repaired)[0] == "plans.md"


@pytest.mark.parametrize(
    ("mode", "error"),
    [
        ("http500", "HTTP 500"),
        ("nan", "non-finite score"),
        ("malformed_json", "malformed JSON"),
        ("empty_list", "empty list"),
        ("short_list", "missing"),
    ],
)
def test_reranker_failures_keep_the_fused_order(
    tmp_path: Path, blend: Path, model_server: ModelServer, mode: str, error: str
) -> None:
    with _blend_vault(tmp_path, blend, ModelSettings()) as plain:
        fused = paths(plain.query(BLEND_QUERY, diverse=False))
        before = digest(plain._connection)
    model_server.set_mode("rerank", mode)
    with _blend_vault(tmp_path, blend, ModelSettings(rerank_url=model_server.url)) as vault:
        results = vault.query(BLEND_QUERY, diverse=False)
        assert error in results.skipped["rerank"]
        assert results.skipped["rerank"].startswith(f"rerank service at {model_server.url}")
        assert "reranking failed" in results.warnings[0]
        assert paths(results) == fused
        assert digest(vault._connection) == before


def test_logit_scores_are_squashed_and_still_rank(
    tmp_path: Path, blend: Path, model_server: ModelServer
) -> None:
    model_server.set_mode("rerank", "logits")
    with _blend_vault(tmp_path, blend, ModelSettings(rerank_url=model_server.url)) as vault:
        results = vault.query(BLEND_QUERY, diverse=False)
        assert "rerank" in results.stages and paths(results)[0] == "plans.md"


def test_identical_texts_are_reranked_once(
    tmp_path: Path, notes: Path, model_server: ModelServer
) -> None:
    write(notes, "a.md", WAL)
    write(notes, "b.md", WAL)
    other = "# Other\n\nReaders of another kind.\n"
    write(notes, "c.md", other)
    with _open(tmp_path, ModelSettings(rerank_url=model_server.url)) as vault:
        vault.add_collection(notes, name="notes")
        vault.update()
        results = vault.query("sqlite readers", diverse=False)
        (request,) = model_server.requests_to("rerank")
        assert sorted(request.body["documents"]) == sorted([WAL, other])
        assert sorted(paths(results)) == ["a.md", "c.md"]  # identical copies shown once
        assert results[paths(results).index("a.md")].also_at == ("notes/b.md",)


def test_candidate_limit_caps_what_reaches_the_reranker(
    vault: Vault, model_server: ModelServer
) -> None:
    results = vault.query("sqlite readers", limit=2, candidate_limit=3)
    assert len(results) == 2
    sent = [t for r in model_server.requests_to("rerank") for t in r.body["documents"]]
    assert len(sent) == 3


def test_long_documents_send_their_best_window(
    tmp_path: Path, notes: Path, model_server: ModelServer
) -> None:
    opening = "\n\n".join(f"Paragraph {n} about gardens, compost and tomatoes." for n in range(150))
    middle = "\n\n".join(f"Paragraph {n} about trains and timetables." for n in range(150))
    ending = "The storage notes: sqlite readers never block the writer."
    write(notes, "long.md", f"# Long\n\n{opening}\n\n{middle}\n\n{ending}\n")
    write(notes, "short.md", "# Short\n\nSQLite readers.\n")
    with _open(tmp_path, ModelSettings(rerank_url=model_server.url)) as vault:
        vault.add_collection(notes, name="notes")
        vault.update()
        vault.query("sqlite readers")
        vault.query("gardens")
        vault.query("gardens", intent="trains timetables")
        by_query = {
            r.body["query"]: [t for t in r.body["documents"] if "Paragraph" in t]
            for r in model_server.requests_to("rerank")
        }
        assert set(by_query) == {"sqlite readers", "gardens", "trains timetables\n\ngardens"}
        windows = [window for (window,) in by_query.values()]
        assert all(len(window) <= CHUNK_SIZE for window in windows)
        # The window with the query's words: here, the very end of the note.
        assert ending in by_query["sqlite readers"][0]
        # Every opening window holds "gardens"; the earliest wins, unless the intent's words
        # (at half weight) tip the choice to the window where the trains begin.
        assert "trains" not in by_query["gardens"][0]
        assert "gardens" in by_query["trains timetables\n\ngardens"][0]
        assert "trains" in by_query["trains timetables\n\ngardens"][0]


# -- intent, caching --------------------------------------------------------------------------


def test_intent_reaches_the_expansion_prompt_and_the_reranker(
    vault: Vault, model_server: ModelServer
) -> None:
    vault.query("sqlite readers", intent="database concurrency")
    (chat,) = model_server.requests_to("chat")
    prompt = chat.body["messages"][0]["content"]
    assert "Expand this search query: sqlite readers\nQuery intent: database concurrency" in prompt
    queries = {r.body["query"] for r in model_server.requests_to("rerank")}
    assert queries == {"database concurrency\n\nsqlite readers"}


def test_a_repeated_query_is_answered_from_the_cache(
    vault: Vault, model_server: ModelServer
) -> None:
    first = vault.query("sqlite readers")
    calls = {e: len(model_server.requests_to(e)) for e in ("chat", "rerank")}
    second = vault.query("sqlite readers")
    assert {e: len(model_server.requests_to(e)) for e in ("chat", "rerank")} == calls
    assert paths(second) == paths(first) and second.stages == first.stages
    # Another intent is another question: a new expansion and new rerank scores.
    vault.query("sqlite readers", intent="backups")
    assert len(model_server.requests_to("chat")) == calls["chat"] + 1
    assert len(model_server.requests_to("rerank")) > calls["rerank"]


# -- unreachable services, 429 ----------------------------------------------------------------


def test_a_refused_connection_cools_the_service_down(
    tmp_path: Path, vault: Vault, model_server: ModelServer
) -> None:
    clock = FakeClock()
    cooldown = Cooldown(clock=clock)
    models = Models(served_settings(model_server))
    llm_url, rerank_url = refused_url(), refused_url()
    while rerank_url == llm_url:  # two dead services, each with its own cooldown
        rerank_url = refused_url()
    models._llm = HttpLLM(llm_url, cooldown=cooldown)
    models._reranker = HttpReranker(rerank_url, cooldown=cooldown)
    before = digest(vault._connection)
    with _open(tmp_path, models) as down:
        first = down.query("sqlite readers")
        assert "unreachable" in first.skipped["expansion"]
        assert "unreachable" in first.skipped["rerank"]
        assert len(first.warnings) == 2
        second = down.query("sqlite readers")
        assert "cooling down for 60s" in second.skipped["expansion"]
        assert "cooling down" in second.skipped["rerank"] and second.warnings == []
        assert paths(second) == paths(first)
        clock.now += 61  # the minute is over: the service is tried again
        third = down.query("sqlite readers")
        assert "unreachable" in third.skipped["expansion"]
        assert digest(down._connection) == before
        assert set(paths(third)[:2]) == {"wal.md", "locks.md"}


def test_rate_limited_calls_are_retried(
    tmp_path: Path, vault: Vault, model_server: ModelServer
) -> None:
    sleeps = Sleeps()
    models = Models(served_settings(model_server))
    models._llm = HttpLLM(model_server.url, sleep=sleeps, cooldown=Cooldown())
    models._reranker = HttpReranker(model_server.url, sleep=sleeps, cooldown=Cooldown())
    model_server.set_mode("chat", "429", count=2)
    with _open(tmp_path, models) as limited:
        results = limited.query("sqlite readers")
        assert results.stages == FULL_STAGES
        assert sleeps == [1.0, 1.0]
        model_server.set_mode("rerank", "429", count=1)
        again = limited.query("sqlite readers", intent="fresh rerank")
        assert "rerank" in again.stages and sleeps == [1.0, 1.0, 1.0]


# -- results ----------------------------------------------------------------------------------


def test_compact_false_adds_each_documents_content(vault: Vault, corpus: Path) -> None:
    write(corpus, "dated.md", "---\ndate: 2026-01-02\n---\n# Dated WAL\n\nSQLite readers again.\n")
    vault.update()
    full = vault.query("sqlite readers", compact=False)
    by_path = {r.path: r for r in full}
    assert by_path["wal.md"].content == WAL
    assert by_path["dated.md"].content == "# Dated WAL\n\nSQLite readers again.\n"
    assert by_path["wal.md"].to_dict()["content"] == WAL
    compact = vault.query("sqlite readers")
    assert all(r.content is None and "content" not in r.to_dict() for r in compact)


def test_min_score_drops_weak_results(vault: Vault) -> None:
    results = vault.query("sqlite readers", limit=20)
    assert len(results) > 2
    cut = (results[1].score + results[2].score) / 2
    assert paths(vault.query("sqlite readers", limit=20, min_score=cut)) == paths(results)[:2]


def test_near_duplicates_are_demoted_unless_asked_not_to(
    tmp_path: Path, notes: Path, model_server: ModelServer
) -> None:
    write(notes, "wal.md", WAL)
    write(notes, "wal-copy.md", WAL.replace("its pages", "the pages"))
    write(notes, "locks.md", "# Locking\n\nSQLite readers take shared locks.\n")
    for n in range(4):
        write(notes, f"garden{n}.md", f"# Garden {n}\n\nTomatoes and compost, day {n}.\n")
    with _open(tmp_path, ModelSettings(embed_url=model_server.url)) as vault:
        vault.add_collection(notes, name="notes")
        vault.update()
        vault.embed()
        query = "sqlite write-ahead logging readers writer commits pages"
        plain = vault.query(query, diverse=False)
        assert "mmr" not in plain.stages
        assert set(paths(plain)[:2]) == {"wal.md", "wal-copy.md"}
        assert paths(plain)[2] == "locks.md"
        diverse = vault.query(query)
        assert diverse.stages[-1] == "mmr"
        assert paths(diverse)[:2] == [paths(plain)[0], "locks.md"]
        assert paths(diverse)[-1] == paths(plain)[1]  # demoted, not dropped


def test_deactivated_documents_are_never_returned(
    vault: Vault, corpus: Path, model_server: ModelServer
) -> None:
    (corpus / "wal.md").unlink()
    (corpus / "kw.md").unlink()  # reached only through the lex variant
    vault.update()
    found = paths(vault.query("sqlite readers", limit=50))
    assert "wal.md" not in found and "kw.md" not in found and "locks.md" in found


# -- filters and conversation context ---------------------------------------------------------


def test_filters_hold_in_every_leg(tmp_path: Path, model_server: ModelServer) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    write(work, "wal.md", "---\ndate: 2026-02-01\n---\n" + WAL)
    decision = "# WAL chosen\n\nWe decided on SQLite so readers never block.\n"
    write(work, "decisions/wal.md", "---\ndate: 2026-03-05\ntype: decision\n---\n" + decision)
    home_note = "# Home\n\nMy home server has sqlite readers too.\n"
    write(home, "wal.md", "---\ndate: 2026-02-20\n---\n" + home_note)
    write(home, "kw.md", "---\ndate: 2026-02-21\n---\n# Lists\n\nKeywords for home.\n")
    with _open(tmp_path, served_settings(model_server)) as vault:
        vault.add_collection(work, name="work")
        vault.add_collection(home, name="home")
        vault.update()
        vault.embed()

        def found(**filters: object) -> set[str]:
            results = vault.query("sqlite readers", limit=50, **filters)  # type: ignore[arg-type]
            return {f"{r.collection}/{r.path}" for r in results}

        assert found(collections=["home"]) == {"home/wal.md", "home/kw.md"}
        assert found(content_types=["decision"]) == {"work/decisions/wal.md"}
        assert found(since="2026-02-15", until="2026-02-28") == {"home/wal.md", "home/kw.md"}
        assert found(since="2026-03-01") == {"work/decisions/wal.md"}


def test_conversation_context_reaches_neighbouring_turns_only(
    tmp_path: Path, model_server: ModelServer
) -> None:
    trip = tmp_path / "trip"
    turns = [
        ("t1", "2026-03-01T10:00:00Z", "User: good morning"),
        ("t2", "2026-03-01T10:01:00Z", "User: where did we stay last spring"),
        ("t3", "2026-03-02T10:02:00Z", "Assistant: in Zanzibar, at Stone Town"),
        ("t4", "2026-03-02T10:03:00Z", "User: lovely, thanks"),
    ]
    for name, moment, text in turns:
        write(trip, f"{name}.md", f"---\ntype: conversation\ndate: {moment}\n---\n{text}\n")
    write(trip, "aside.md", "---\ndate: 2026-03-02T10:02:30Z\n---\nShopping list: eggs.\n")
    with _open(tmp_path, ModelSettings()) as vault:
        vault.add_collection(trip, name="trip")
        vault.update()
        results = vault.query("zanzibar", diverse=False)
        assert "context" in results.stages
        assert paths(results)[0] == "t3.md"
        assert set(paths(results)) == {"t1.md", "t2.md", "t3.md", "t4.md"}
        later = vault.query("zanzibar", since="2026-03-02")
        assert set(paths(later)) == {"t3.md", "t4.md"}
