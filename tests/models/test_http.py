"""Transport behaviour shared by the HTTP backends: URLs, 429 retries, cooldown."""

from __future__ import annotations

import email.utils
import time
from typing import Any

import httpx
import pytest

from memtrove.errors import ModelResponseError, ModelUnavailableError
from memtrove.models.http import (
    BATCH_RETRY,
    COOLDOWN,
    INTERACTIVE_RETRY,
    Cooldown,
    endpoint_url,
    parse_retry_after,
)
from memtrove.models.openai_compat import HttpEmbedder, HttpLLM, HttpReranker
from tests.fakes.model_server import ModelServer, refused_url
from tests.models.conftest import FakeClock, Sleeps, assert_one_line


def embedder(
    server: ModelServer, cooldown: Cooldown, sleeps: Sleeps, **options: Any
) -> HttpEmbedder:
    return HttpEmbedder(server.url, cooldown=cooldown, sleep=sleeps, **options)


# -- URLs, Retry-After, cooldown registry ---------------------------------------------------


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
def test_endpoint_url_adds_v1_once(suffix: str) -> None:
    assert endpoint_url("http://gpu:8088" + suffix, "embeddings") == "http://gpu:8088/v1/embeddings"
    assert endpoint_url("http://gpu:8088" + suffix, "rerank") == "http://gpu:8088/v1/rerank"


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
def test_every_service_joins_its_route_onto_the_base_url(
    server: ModelServer, cooldown: Cooldown, suffix: str
) -> None:
    url = server.url + suffix
    HttpEmbedder(url, cooldown=cooldown).embed_query("hello")
    HttpLLM(url, cooldown=cooldown).complete("hi")
    HttpReranker(url, cooldown=cooldown).rerank("q", ["d"])
    assert [request.path for request in server.requests] == [
        "/v1/embeddings",
        "/v1/chat/completions",
        "/v1/rerank",
    ]


def test_parse_retry_after() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(" 0.5 ") == 0.5
    assert parse_retry_after(None) is None
    assert parse_retry_after("") is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("-1") is None
    date = email.utils.formatdate(1_000_000_030, usegmt=True)
    assert parse_retry_after(date, now=1_000_000_000) == pytest.approx(30.0)
    assert parse_retry_after(date, now=1_000_000_100) == 0.0


def test_backoff_doubles_up_to_the_cap() -> None:
    assert [INTERACTIVE_RETRY.backoff(n) for n in range(7)] == [1, 2, 4, 8, 16, 30, 30]
    assert [BATCH_RETRY.backoff(n) for n in range(5)] == [5, 10, 20, 40, 60]
    assert (INTERACTIVE_RETRY.attempts, BATCH_RETRY.attempts) == (5, 3)


def test_cooldown_registry(clock: FakeClock, cooldown: Cooldown) -> None:
    assert not cooldown.is_down("http://gpu:8088")
    cooldown.mark_down("http://gpu:8088/v1/", "ConnectError: refused")
    assert cooldown.is_down("http://gpu:8088")  # /v1 and a trailing slash do not matter
    assert cooldown.remaining("http://GPU:8088") == 60.0
    assert cooldown.reason("http://gpu:8088") == "ConnectError: refused"
    assert not cooldown.is_down("http://gpu:8089")
    clock.advance(59.5)
    assert cooldown.remaining("http://gpu:8088") == 0.5
    clock.advance(0.5)
    assert not cooldown.is_down("http://gpu:8088")
    assert cooldown.reason("http://gpu:8088") is None
    cooldown.mark_down("http://a")
    cooldown.mark_down("http://b")
    cooldown.clear("http://a")
    assert (cooldown.is_down("http://a"), cooldown.is_down("http://b")) == (False, True)
    cooldown.clear()
    assert not cooldown.is_down("http://b")


# -- 429 retries ---------------------------------------------------------------------------------


def test_429_is_retried_honouring_retry_after(
    server: ModelServer, cooldown: Cooldown, sleeps: Sleeps
) -> None:
    server.set_mode("embeddings", "429", count=2, retry_after="2")
    vector = embedder(server, cooldown, sleeps).embed_query("hello")
    assert vector.shape == (64,)
    assert sleeps == [2.0, 2.0]
    assert len(server.requests) == 3


def test_429_without_retry_after_backs_off_then_gives_up(
    server: ModelServer, cooldown: Cooldown, sleeps: Sleeps
) -> None:
    server.set_mode("embeddings", "429", retry_after=None)
    with pytest.raises(ModelUnavailableError) as caught:
        embedder(server, cooldown, sleeps).embed_query("hello")
    assert str(caught.value) == (
        f"embedding service at {server.url} is rate limiting (HTTP 429) after 5 tries"
    )
    assert sleeps == [1.0, 2.0, 4.0, 8.0]
    assert len(server.requests) == 5
    assert not cooldown.is_down(server.url)


def test_429_while_embedding_many_texts_uses_the_batch_policy(
    server: ModelServer, cooldown: Cooldown, sleeps: Sleeps
) -> None:
    server.set_mode("embeddings", "429", retry_after=None)
    with pytest.raises(ModelUnavailableError, match="after 3 tries"):
        embedder(server, cooldown, sleeps).embed_documents(["a", "b", "c"])
    assert sleeps == [5.0, 10.0]


def test_retry_after_is_capped(server: ModelServer, cooldown: Cooldown, sleeps: Sleeps) -> None:
    server.set_mode("embeddings", "429", count=1, retry_after="3600")
    embedder(server, cooldown, sleeps).embed_query("hello")
    assert sleeps == [30.0]


def test_retry_after_may_be_an_http_date(
    server: ModelServer, cooldown: Cooldown, sleeps: Sleeps
) -> None:
    later = email.utils.formatdate(time.time() + 10, usegmt=True)
    server.set_mode("rerank", "429", count=1, retry_after=later)
    HttpReranker(server.url, cooldown=cooldown, sleep=sleeps).rerank("q", ["d"])
    assert len(sleeps) == 1
    assert 8.0 <= sleeps[0] <= 10.0


# -- cooldown after transport errors ---------------------------------------------------------


def test_refused_connection_cools_the_endpoint_down(clock: FakeClock, cooldown: Cooldown) -> None:
    url = refused_url()
    client = HttpEmbedder(url, cooldown=cooldown)
    with pytest.raises(ModelUnavailableError) as caught:
        client.embed_query("hello")
    assert_one_line(caught.value, "embedding", url)
    assert "is unreachable (ConnectError" in str(caught.value)
    assert cooldown.is_down(url)

    port = int(url.rsplit(":", 1)[1])
    with ModelServer(port=port) as revived:  # the service comes back on the same port
        clock.advance(10)
        with pytest.raises(ModelUnavailableError) as fast:
            client.embed_query("hello")
        assert str(fast.value).startswith(
            f"embedding service at {url} is cooling down for 50s after: ConnectError"
        )
        assert revived.requests == []  # no network while cooling down

        clock.advance(51)
        assert client.embed_query("hello").shape == (64,)
        assert len(revived.requests) == 1


@pytest.mark.parametrize("url", ["http://[::1", "http://host:99999", "http://exa mple"])
def test_a_url_httpx_cannot_parse_is_an_unreachable_service(cooldown: Cooldown, url: str) -> None:
    """It was an unexpected InvalidURL: query and doctor stopped instead of degrading."""
    with pytest.raises(ModelUnavailableError, match="is unreachable"):
        HttpEmbedder(url, cooldown=cooldown).embed_query("hello")


def test_cooldown_is_shared_by_every_backend_of_an_endpoint(cooldown: Cooldown) -> None:
    url = refused_url()
    with pytest.raises(ModelUnavailableError, match="unreachable"):
        HttpLLM(url, cooldown=cooldown).complete("hi")
    with pytest.raises(ModelUnavailableError, match=r"^rerank service at .* cooling down"):
        HttpReranker(url + "/v1", cooldown=cooldown).rerank("q", ["d"])


def test_the_process_wide_registry_is_the_default() -> None:
    url = refused_url()
    try:
        with pytest.raises(ModelUnavailableError):
            HttpLLM(url).complete("hi")
        assert COOLDOWN.is_down(url)
    finally:
        COOLDOWN.clear(url)


def test_a_read_timeout_cools_the_endpoint_down(cooldown: Cooldown) -> None:
    with ModelServer(slow_seconds=5.0) as server:
        server.set_mode("chat", "slow")
        llm = HttpLLM(server.url, timeout=httpx.Timeout(0.2), cooldown=cooldown)
        with pytest.raises(ModelUnavailableError, match="unreachable \\(ReadTimeout"):
            llm.complete("hi")
        assert cooldown.is_down(server.url)


def test_server_errors_do_not_cool_the_endpoint_down(
    server: ModelServer, cooldown: Cooldown
) -> None:
    server.set_mode("chat", "http500", count=1)
    llm = HttpLLM(server.url, cooldown=cooldown)
    with pytest.raises(ModelResponseError, match=r"answered HTTP 500: .*fake internal error"):
        llm.complete("hi")
    assert not cooldown.is_down(server.url)
    assert llm.complete("hi") == "This is the fake model's reply."


def test_a_loading_server_is_unavailable_without_cooldown(
    server: ModelServer, cooldown: Cooldown
) -> None:
    server.set_mode("rerank", "http503", count=1)
    reranker = HttpReranker(server.url, cooldown=cooldown)
    with pytest.raises(ModelUnavailableError) as caught:
        reranker.rerank("q", ["d"])
    assert_one_line(caught.value, "rerank", server.url)
    assert "answered HTTP 503: " in str(caught.value) and "Loading model" in str(caught.value)
    assert not cooldown.is_down(server.url)
    assert reranker.rerank("q", ["d"]) == [0.0]
