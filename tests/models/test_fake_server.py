"""The fake model server itself: deterministic answers, fault modes, request log."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import numpy as np
import pytest

from tests.fakes.model_server import (
    ModelServer,
    fake_embedding,
    fake_rerank_score,
    refused_url,
)


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer(dimensions=32) as running:
        yield running


def post(server: ModelServer, path: str, body: object) -> httpx.Response:
    return httpx.post(server.url + path, json=body, timeout=5, trust_env=False)


def test_embeddings_are_deterministic_bags_of_words() -> None:
    first = fake_embedding("WAL mode keeps readers going", 64)
    assert first == fake_embedding("wal MODE keeps readers going!", 64)
    assert len(first) == 64
    assert np.linalg.norm(first) == pytest.approx(1.0)
    shared = np.dot(fake_embedding("sqlite wal mode", 64), fake_embedding("wal mode tuning", 64))
    unrelated = np.dot(fake_embedding("sqlite wal mode", 64), fake_embedding("banana bread", 64))
    assert shared > 0.5 > unrelated
    assert np.linalg.norm(fake_embedding("", 64)) == pytest.approx(1.0)


def test_embedding_route_honours_requested_dimensions(server: ModelServer) -> None:
    answer = post(server, "/v1/embeddings", {"input": "hello there", "model": "m"}).json()
    assert answer["data"][0]["embedding"] == fake_embedding("hello there", 32)
    assert answer["data"][0]["index"] == 0
    sized = post(server, "/embeddings", {"input": ["a", "b"], "dimensions": 8}).json()
    assert [len(item["embedding"]) for item in sized["data"]] == [8, 8]


def test_rerank_scores_are_word_overlap(server: ModelServer) -> None:
    assert fake_rerank_score("sqlite wal mode", "WAL mode in SQLite") == 1.0
    assert fake_rerank_score("sqlite wal mode", "the wal file") == pytest.approx(1 / 3)
    assert fake_rerank_score("", "anything") == 0.0
    answer = post(server, "/v1/rerank", {"query": "a b", "documents": ["x", "a", "a b"]}).json()
    assert answer["results"] == [
        {"index": 2, "relevance_score": 1.0},
        {"index": 1, "relevance_score": 0.5},
        {"index": 0, "relevance_score": 0.0},
    ]
    server.set_rerank_shape("tei")
    tei = post(server, "/rerank", {"query": "a", "texts": ["a"]}).json()
    assert tei == [{"index": 0, "score": 1.0}]
    with pytest.raises(ValueError, match="unknown rerank shape"):
        server.set_rerank_shape("bm25")


def test_chat_answers_expansions_and_canned_replies(server: ModelServer) -> None:
    def ask(content: str) -> str:
        body = {"messages": [{"role": "user", "content": content}]}
        answer = post(server, "/v1/chat/completions", body).json()
        return str(answer["choices"][0]["message"]["content"])

    assert ask("Expand this search query: fts5 ranking\nQuery intent: why") == (
        "lex: fts5 ranking keywords\nvec: fts5 ranking meaning\nhyde: A passage about fts5 ranking."
    )
    assert ask("Summarise this") == "This is the fake model's reply."
    server.set_chat_reply("fixed")
    assert ask("anything") == "fixed"
    server.set_chat_reply(str.upper)
    assert ask("shout") == "SHOUT"


def test_modes_apply_for_count_calls_then_revert(server: ModelServer) -> None:
    server.set_mode("embeddings", "429", count=2, retry_after="7")
    first = post(server, "/v1/embeddings", {"input": "a"})
    assert (first.status_code, first.headers["retry-after"]) == (429, "7")
    assert post(server, "/v1/embeddings", {"input": "a"}).status_code == 429
    assert post(server, "/v1/embeddings", {"input": "a"}).status_code == 200
    assert post(server, "/v1/rerank", {"query": "q", "documents": ["d"]}).status_code == 200

    server.set_mode("rerank", "http500")
    for _ in range(3):
        assert post(server, "/v1/rerank", {"query": "q", "documents": ["d"]}).status_code == 500
    server.set_mode("chat", "429", retry_after=None)
    assert "retry-after" not in post(server, "/v1/chat/completions", {}).headers

    with pytest.raises(ValueError, match="unknown mode"):
        server.set_mode("chat", "explode")
    with pytest.raises(ValueError, match="unknown endpoint"):
        server.set_mode("images", "ok")


def test_fault_payloads(server: ModelServer) -> None:
    body = {"input": ["a", "b", "c"]}
    server.set_mode("embeddings", "malformed_json", count=1)
    with pytest.raises(ValueError):
        post(server, "/v1/embeddings", body).json()
    server.set_mode("embeddings", "short_list", count=1)
    assert len(post(server, "/v1/embeddings", body).json()["data"]) == 2
    server.set_mode("embeddings", "wrong_dimensions", count=1)
    assert len(post(server, "/v1/embeddings", body).json()["data"][0]["embedding"]) == 16
    server.set_mode("embeddings", "reversed", count=1)
    assert [item["index"] for item in post(server, "/v1/embeddings", body).json()["data"]] == [
        2,
        1,
        0,
    ]
    server.set_mode("rerank", "logits", count=1)
    scores = post(server, "/v1/rerank", {"query": "a", "documents": ["a", "b"]}).json()
    assert [result["relevance_score"] for result in scores["results"]] == [6.0, -6.0]


def test_requests_are_logged_and_reset(server: ModelServer) -> None:
    httpx.post(
        server.url + "/v1/embeddings",
        json={"input": "x"},
        headers={"Authorization": "Bearer t"},
        trust_env=False,
    )
    assert httpx.get(server.url + "/health", trust_env=False).json() == {"status": "ok"}
    assert post(server, "/v2/unknown", {}).status_code == 404
    logged = server.requests
    assert [(request.method, request.path) for request in logged] == [
        ("POST", "/v1/embeddings"),
        ("GET", "/health"),
        ("POST", "/v2/unknown"),
    ]
    assert logged[0].body == {"input": "x"}
    assert logged[0].headers["authorization"] == "Bearer t"
    assert [request.path for request in server.requests_to("embeddings")] == ["/v1/embeddings"]
    server.set_mode("chat", "http500")
    server.reset()
    assert server.requests == []
    assert (
        post(server, "/v1/chat/completions", {"messages": [{"content": "hi"}]}).status_code == 200
    )


def test_refused_url_has_nothing_listening() -> None:
    host, port = refused_url().removeprefix("http://").split(":")
    with pytest.raises(ConnectionRefusedError), socket.create_connection((host, int(port)), 1):
        pass
