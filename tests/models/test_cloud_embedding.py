"""Cloud mode of the embedding service (an API key), and the model settings that shape its
requests: TPM pacing, no client-side cut, provider parameters, ``reasoning_effort``; all
against the loopback fake service over real HTTP, the pacer on a fake clock."""

from __future__ import annotations

import pytest

from memtrove.errors import ConfigError
from memtrove.models.openai_compat import HttpEmbedder
from memtrove.models.pacing import TokenPacer
from memtrove.models.providers import provider_bodies, provider_of
from memtrove.models.registry import Models, ModelSettings
from tests.fakes.model_server import ModelServer
from tests.models.conftest import FakeClock


class PacedClock(FakeClock):
    """A clock that moves only by the pacer's sleeps: each batch goes at once otherwise."""

    def __init__(self) -> None:
        super().__init__()
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.advance(seconds)


def models_of(env: dict[str, str]) -> Models:
    return Models(ModelSettings.from_env(env))


def test_batches_are_paced_to_85_percent_of_the_tpm_limit(server: ModelServer) -> None:
    clock = PacedClock()
    jitters = iter([0.15, -0.15, 0.0, 0.0])  # the most each way, then none
    pacer = TokenPacer(
        1_000, clock=clock, sleep=clock.sleep, uniform=lambda low, high: next(jitters)
    )
    embedder = HttpEmbedder(server.url, api_key="secret-key", max_chars=None, pacer=pacer)
    texts = ["x" * 400] * 50 + ["y" * 800] * 50 + ["z" * 4] * 20  # 3 batches of 50
    vectors = embedder.embed_documents(texts)
    assert vectors.shape == (120, 64) and len(server.requests_to("embeddings")) == 3
    # 50 x 400 chars = 5000 tokens (4 chars each) at 850 tokens a minute: 352.9 s, +15 %;
    # then 10000 tokens: 705.9 s, -15 %. The first batch waits for nothing.
    first = 5_000 * 60 / 850
    second = 10_000 * 60 / 850
    assert clock.sleeps == pytest.approx([first * 1.15, second * 0.85])
    # The next batch books the third's share (20 tokens, no jitter) after the second.
    assert pacer.wait(["q"]) == pytest.approx(20 * 60 / 850)


def test_a_pause_longer_than_the_interval_costs_no_wait() -> None:
    clock = PacedClock()
    pacer = TokenPacer(100_000, clock=clock, sleep=clock.sleep)
    assert pacer.wait(["a" * 4_000]) == 0.0  # 1000 tokens: at most 0.81 s to the next
    clock.advance(5.0)
    assert pacer.wait(["b" * 4_000]) == 0.0 and clock.sleeps == []


def test_the_jitter_stays_within_15_percent() -> None:
    clock = PacedClock()
    pacer = TokenPacer(100_000, clock=clock, sleep=clock.sleep)
    for _ in range(200):
        pacer.wait(["c" * 40_000])  # 10000 tokens: 7.06 s each
    interval = 10_000 * 60 / 85_000
    assert min(clock.sleeps) >= interval * 0.85 - 1e-9
    assert max(clock.sleeps) <= interval * 1.15 + 1e-9
    assert max(clock.sleeps) - min(clock.sleeps) > interval * 0.1  # it does vary


def test_cloud_mode_paces_and_sends_inputs_whole(server: ModelServer) -> None:
    base = {"MEMTROVE_EMBED_URL": server.url}
    local = models_of(base).embedder
    cloud = models_of({**base, "MEMTROVE_EMBED_API_KEY": "sk-test"}).embedder
    limited = models_of(
        {**base, "MEMTROVE_EMBED_API_KEY": "sk-test", "MEMTROVE_EMBED_TPM_LIMIT": "2000000"}
    ).embedder
    assert isinstance(local, HttpEmbedder) and isinstance(cloud, HttpEmbedder)
    assert isinstance(limited, HttpEmbedder)
    assert local.pacer is None
    assert cloud.pacer is not None and cloud.pacer.tokens_per_minute == 100_000
    assert limited.pacer is not None and limited.pacer.tokens_per_minute == 2_000_000
    long = "word " * 1_600  # 8000 characters
    local.embed_documents([long])
    cloud.embed_documents([long])
    cut = models_of({**base, "MEMTROVE_EMBED_API_KEY": "k", "MEMTROVE_EMBED_MAX_CHARS": "1100"})
    cut.embedder.embed_documents([long])
    sent = [len(r.body["input"][0]) for r in server.requests_to("embeddings")]
    assert sent == [6_000, 8_000, 1_100]
    # The key goes in the header only.
    headers = server.requests_to("embeddings")[1].headers
    assert headers["authorization"] == "Bearer sk-test"
    assert "sk-test" not in repr(server.requests_to("embeddings")[1].body)


@pytest.mark.parametrize(
    ("provider", "documents", "query"),
    [
        ("jina", {"task": "retrieval.passage", "truncate": True}, {"task": "retrieval.query"}),
        ("voyage", {"input_type": "document"}, {"input_type": "query"}),
        ("cohere", {"input_type": "search_document", "truncate": "END"}, {"input_type": "search_query"}),
        ("none", {}, {}),
    ],
)  # fmt: skip
def test_provider_parameters_go_with_each_request(
    server: ModelServer, provider: str, documents: dict[str, object], query: dict[str, object]
) -> None:
    env = {"MEMTROVE_EMBED_URL": server.url, "MEMTROVE_EMBED_PROVIDER": provider}
    embedder = models_of(env).embedder
    embedder.embed_documents(["a passage", "another"])
    embedder.embed_query("a question")
    sent_documents, sent_query = (r.body for r in server.requests_to("embeddings"))
    core = {"input", "model"}
    assert {k: v for k, v in sent_documents.items() if k not in core} == documents
    assert {k: v for k, v in sent_query.items() if k not in core} == {**documents, **query}


def test_providers_are_recognised_by_their_api_host() -> None:
    assert provider_of("https://api.jina.ai/v1") == "jina"
    assert provider_of("https://api.voyageai.com") == "voyage"
    assert provider_of("https://api.cohere.com/v2") == "cohere"
    assert provider_of("https://api.cohere.ai") == "cohere"
    assert provider_of("https://api.openai.com/v1") is None
    assert provider_of("http://localhost:8088") is None
    assert provider_of("https://jina.ai.example.com") is None  # a look-alike host
    assert provider_bodies("https://api.jina.ai", "none") == ({}, {})


def test_reasoning_effort_is_sent_when_set(server: ModelServer) -> None:
    base = {"MEMTROVE_LLM_URL": server.url}
    models_of(base).llm.complete("plain")
    models_of({**base, "MEMTROVE_LLM_REASONING_EFFORT": "Low"}).llm.complete("thoughtful")
    plain, thoughtful = (r.body for r in server.requests_to("chat"))
    assert "reasoning_effort" not in plain
    assert thoughtful["reasoning_effort"] == "low"
    assert thoughtful["messages"][0]["content"] == "thoughtful /no_think"
    models_of({**base, "MEMTROVE_LLM_NO_THINK": "false"}).llm.complete("as is")
    assert server.requests_to("chat")[-1].body["messages"][0]["content"] == "as is"


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("MEMTROVE_LLM_REASONING_EFFORT", "extreme", "must be one of none, minimal, low"),
        ("MEMTROVE_EMBED_TPM_LIMIT", "lots", "must be a whole number"),
        ("MEMTROVE_EMBED_TPM_LIMIT", "0", "must be positive"),
        ("MEMTROVE_EMBED_PROVIDER", "acme", "must be one of jina, voyage, cohere, none"),
    ],
)
def test_bad_settings_are_one_line_errors(name: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        ModelSettings.from_env({name: value})
    assert "\n" not in str(caught.value) and name in str(caught.value)
