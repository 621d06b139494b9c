"""HTTP embedder, LLM and reranker against the loopback fake server (real HTTP, no mocks)."""

from __future__ import annotations

import numpy as np
import pytest

from memtrove.errors import ModelResponseError
from memtrove.models.http import Cooldown
from memtrove.models.openai_compat import (
    HttpEmbedder,
    HttpLLM,
    HttpReranker,
    sigmoid,
    strip_thinking,
)
from memtrove.models.protocols import LLM, Embedder, Reranker
from tests.fakes.model_server import ModelServer, fake_embedding, fake_rerank_score
from tests.models.conftest import assert_one_line


def test_backends_satisfy_the_protocols(server: ModelServer) -> None:
    assert isinstance(HttpEmbedder(server.url), Embedder)
    assert isinstance(HttpReranker(server.url), Reranker)
    assert isinstance(HttpLLM(server.url), LLM)


# -- embeddings --------------------------------------------------------------------------------


def test_embeds_in_batches_with_bearer_auth(server: ModelServer, cooldown: Cooldown) -> None:
    texts = ["alpha beta", "beta gamma", "delta", "epsilon zeta", "eta"]
    client = HttpEmbedder(
        server.url, api_key="sekret", batch_size=2, model="granite", cooldown=cooldown
    )
    vectors = client.embed_documents(texts)

    requests = server.requests_to("embeddings")
    assert [request.body["input"] for request in requests] == [texts[0:2], texts[2:4], texts[4:]]
    assert {request.headers["authorization"] for request in requests} == {"Bearer sekret"}
    assert all(request.body["model"] == "granite" for request in requests)
    assert all("dimensions" not in request.body for request in requests)
    assert vectors.dtype == np.float32
    assert vectors.shape == (5, 64)
    expected = np.asarray([fake_embedding(text, 64) for text in texts], dtype=np.float32)
    np.testing.assert_allclose(vectors, expected, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_no_authorization_header_without_a_key(server: ModelServer, cooldown: Cooldown) -> None:
    HttpEmbedder(server.url, cooldown=cooldown).embed_query("hello")
    assert "authorization" not in server.requests[0].headers


def test_identity_leaves_the_host_out(server: ModelServer) -> None:
    here = HttpEmbedder(server.url, model="nomic-embed")
    elsewhere = HttpEmbedder("http://gpu-box:8088/v1", model="nomic-embed")
    assert here.identity == elsewhere.identity == "http:nomic-embed"
    assert HttpLLM(server.url).identity == "http:qwen3"
    assert HttpReranker(server.url).identity == "http:reranker"


def test_dimensions_are_probed_once_when_not_configured(
    server: ModelServer, cooldown: Cooldown
) -> None:
    client = HttpEmbedder(server.url, cooldown=cooldown)
    assert server.requests == []  # nothing contacted on construction
    assert client.dimensions == 64
    assert client.dimensions == 64
    assert len(server.requests) == 1


def test_a_bad_first_answer_does_not_fix_the_learnt_dimension(
    server: ModelServer, cooldown: Cooldown
) -> None:
    client = HttpEmbedder(server.url, cooldown=cooldown)
    server.set_mode("embeddings", "wrong_dimensions", count=1)
    assert client.dimensions == 32  # learnt from the bad answer
    with pytest.raises(ModelResponseError, match="dimension 64, expected 32"):
        client.embed_query("hello")
    assert client.dimensions == 64  # learnt again from the next answer
    assert client.embed_query("hello").shape == (64,)


def test_configured_dimensions_are_sent_and_not_probed(
    server: ModelServer, cooldown: Cooldown
) -> None:
    client = HttpEmbedder(server.url, dimensions=32, cooldown=cooldown)
    assert client.dimensions == 32
    assert server.requests == []
    assert client.embed_query("hello").shape == (32,)
    assert server.requests[0].body["dimensions"] == 32


def test_query_is_embedded_as_given_with_query_parameters(
    server: ModelServer, cooldown: Cooldown
) -> None:
    client = HttpEmbedder(
        server.url,
        extra_body={"task": "retrieval.passage", "truncate": True, "model": "ignored"},
        query_body={"task": "retrieval.query"},
        cooldown=cooldown,
    )
    vector = client.embed_query("what is WAL mode")
    client.embed_documents(["WAL mode keeps readers going"])
    query, document = (request.body for request in server.requests)
    assert query["input"] == ["what is WAL mode"]
    assert (query["task"], query["truncate"], query["model"]) == (
        "retrieval.query",
        True,
        "embedding",
    )
    assert document["task"] == "retrieval.passage"
    assert vector.shape == (64,)
    np.testing.assert_allclose(vector, fake_embedding("what is WAL mode"), atol=1e-6)


def test_inputs_are_cut_to_max_chars(server: ModelServer, cooldown: Cooldown) -> None:
    HttpEmbedder(server.url, max_chars=10, cooldown=cooldown).embed_query("x" * 50)
    HttpEmbedder(server.url, max_chars=None, cooldown=cooldown).embed_query("y" * 50)
    assert [request.body["input"] for request in server.requests] == [["x" * 10], ["y" * 50]]


def test_vectors_are_put_in_index_order(server: ModelServer, cooldown: Cooldown) -> None:
    client = HttpEmbedder(server.url, cooldown=cooldown)
    texts = ["one fish", "two fish", "red fish", "blue fish"]
    expected = client.embed_documents(texts)
    server.set_mode("embeddings", "reversed")
    np.testing.assert_allclose(client.embed_documents(texts), expected)


def test_no_texts_gives_an_empty_matrix(server: ModelServer, cooldown: Cooldown) -> None:
    client = HttpEmbedder(server.url, dimensions=64, cooldown=cooldown)
    assert client.embed_documents([]).shape == (0, 64)
    assert server.requests == []


@pytest.mark.parametrize(
    ("mode", "problem"),
    [
        ("wrong_dimensions", "returned vectors of dimension 32, expected 64"),
        ("nan", "returned a non-finite value (NaN) for text 0"),
        ("malformed_json", "returned malformed JSON"),
        ("empty_list", "returned an empty list for 4 texts"),
        ("short_list", "returned 3 vectors for 4 texts"),
        ("degenerate", "returned a zero vector"),
        ("http500", "answered HTTP 500: "),
    ],
)
def test_bad_embedding_answers_are_refused(
    server: ModelServer, cooldown: Cooldown, mode: str, problem: str
) -> None:
    client = HttpEmbedder(server.url, cooldown=cooldown)
    client.embed_query("learn the dimension first")
    server.set_mode("embeddings", mode)
    with pytest.raises(ModelResponseError) as caught:
        client.embed_documents(["a", "b", "c", "d"])
    assert_one_line(caught.value, "embedding", server.url)
    assert f"embedding service at {server.url} {problem}" in str(caught.value)
    assert not cooldown.is_down(server.url)  # the service answered: no cooldown
    server.set_mode("embeddings", "ok")
    assert client.embed_documents(["a", "b"]).shape == (2, 64)


def test_configured_dimension_is_enforced(server: ModelServer, cooldown: Cooldown) -> None:
    client = HttpEmbedder(server.url, dimensions=64, cooldown=cooldown)
    server.set_mode("embeddings", "wrong_dimensions")
    with pytest.raises(ModelResponseError, match="dimension 32, expected 64"):
        client.embed_query("hello")


# -- LLM -------------------------------------------------------------------------------------------


def test_complete_sends_one_user_message_with_no_think(
    server: ModelServer, cooldown: Cooldown
) -> None:
    llm = HttpLLM(server.url, model="qwen3-4b", api_key="k", cooldown=cooldown)
    assert (
        llm.complete("Say hi", max_tokens=20, temperature=0.7) == "This is the fake model's reply."
    )
    request = server.requests[0]
    assert request.body == {
        "model": "qwen3-4b",
        "messages": [{"role": "user", "content": "Say hi /no_think"}],
        "max_tokens": 20,
        "temperature": 0.7,
    }
    assert request.headers["authorization"] == "Bearer k"


def test_no_think_can_be_switched_off_and_reasoning_effort_sent(
    server: ModelServer, cooldown: Cooldown
) -> None:
    HttpLLM(server.url, no_think=False, reasoning_effort="low", cooldown=cooldown).complete("Hi")
    body = server.requests[0].body
    assert body["messages"][0]["content"] == "Hi"
    assert (body["max_tokens"], body["temperature"], body["reasoning_effort"]) == (150, 0.0, "low")


def test_expansion_prompt_gets_typed_lines(server: ModelServer, cooldown: Cooldown) -> None:
    answer = HttpLLM(server.url, cooldown=cooldown).complete(
        "/no_think Expand this search query: sqlite locking", max_tokens=500
    )
    assert answer.splitlines() == [
        "lex: sqlite locking keywords",
        "vec: sqlite locking meaning",
        "hyde: A passage about sqlite locking.",
    ]


def test_think_blocks_are_stripped_from_answers(server: ModelServer, cooldown: Cooldown) -> None:
    server.set_chat_reply(lambda prompt: f"<think>\nThe user said {prompt!r}.\n</think>\n\nHello!")
    assert HttpLLM(server.url, cooldown=cooldown).complete("Hi") == "Hello!"


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("plain answer", "plain answer"),
        ("<think>a\nb</think>answer", "answer"),
        ("<THINK>x</THINK> one <think>y</think> two", "one  two"),
        ("<think>cut off by max_tokens", ""),
        ("reasoning from a template that opened the block</think>\nanswer", "answer"),
        ("  padded \n", "padded"),
    ],
)
def test_strip_thinking(raw: str, clean: str) -> None:
    assert strip_thinking(raw) == clean


@pytest.mark.parametrize(
    ("mode", "problem"),
    [
        ("empty_list", "returned an empty list of choices"),
        ("malformed_json", "returned malformed JSON"),
        ("http500", "answered HTTP 500"),
    ],
)
def test_bad_chat_answers_are_refused(
    server: ModelServer, cooldown: Cooldown, mode: str, problem: str
) -> None:
    server.set_mode("chat", mode)
    with pytest.raises(ModelResponseError) as caught:
        HttpLLM(server.url, cooldown=cooldown).complete("hi")
    assert_one_line(caught.value, "LLM", server.url)
    assert problem in str(caught.value)


def test_an_empty_answer_is_returned_as_is(server: ModelServer, cooldown: Cooldown) -> None:
    server.set_mode("chat", "degenerate")
    assert HttpLLM(server.url, cooldown=cooldown).complete("hi") == ""


# -- rerank ------------------------------------------------------------------------------------------

QUERY = "sqlite wal checkpoint"
DOCUMENTS = [
    "the wal file grows until a checkpoint",
    "bananas are yellow",
    "sqlite wal mode and checkpoint starvation",
    "sqlite is a library",
    "checkpoint",
    "nothing relevant here",
    "wal",
]


def expected_scores(texts: list[str] = DOCUMENTS) -> list[float]:
    return [fake_rerank_score(QUERY, text) for text in texts]


def test_rerank_sends_batches_of_four_and_keeps_input_order(
    server: ModelServer, cooldown: Cooldown
) -> None:
    reranker = HttpReranker(server.url, model="qwen3-reranker", api_key="r", cooldown=cooldown)
    assert reranker.rerank(QUERY, DOCUMENTS) == expected_scores()
    requests = server.requests_to("rerank")
    assert [request.body["documents"] for request in requests] == [DOCUMENTS[:4], DOCUMENTS[4:]]
    assert [request.body["top_n"] for request in requests] == [4, 3]
    assert {request.body["query"] for request in requests} == {QUERY}
    assert {request.body["model"] for request in requests} == {"qwen3-reranker"}
    assert {request.headers["authorization"] for request in requests} == {"Bearer r"}


def test_identical_texts_are_scored_once(server: ModelServer, cooldown: Cooldown) -> None:
    texts = ["sqlite wal", "bananas", "sqlite wal", "sqlite wal"]
    scores = HttpReranker(server.url, cooldown=cooldown).rerank(QUERY, texts)
    assert scores == expected_scores(texts)
    assert server.requests[0].body["documents"] == ["sqlite wal", "bananas"]


def test_rerank_cuts_texts_and_skips_empty_calls(server: ModelServer, cooldown: Cooldown) -> None:
    reranker = HttpReranker(server.url, max_chars=6, cooldown=cooldown)
    assert reranker.rerank(QUERY, []) == []
    assert server.requests == []
    reranker.rerank(QUERY, ["sqlite wal mode"])
    assert server.requests[0].body["documents"] == ["sqlite"]


@pytest.mark.parametrize("shape", ["llama", "tei", "jina", "cohere", "data"])
def test_every_rerank_answer_shape_is_understood(
    server: ModelServer, cooldown: Cooldown, shape: str
) -> None:
    server.set_rerank_shape(shape)
    assert HttpReranker(server.url, cooldown=cooldown).rerank(QUERY, DOCUMENTS) == expected_scores()


def test_logits_go_through_a_sigmoid_for_this_and_later_calls(
    server: ModelServer, cooldown: Cooldown
) -> None:
    reranker = HttpReranker(server.url, cooldown=cooldown)
    server.set_mode("rerank", "logits", count=1)  # only the first batch answers in logits
    scores = reranker.rerank(QUERY, DOCUMENTS)
    raw = [score * 12.0 - 6.0 for score in expected_scores()[:4]] + expected_scores()[4:]
    assert scores == pytest.approx([sigmoid(value) for value in raw])
    assert all(0.0 <= score <= 1.0 for score in scores)
    later = reranker.rerank(QUERY, DOCUMENTS[:2])  # in range now, but the model speaks logits
    assert later == pytest.approx([sigmoid(value) for value in expected_scores()[:2]])


def test_score_modes(server: ModelServer, cooldown: Cooldown) -> None:
    server.set_mode("rerank", "logits")
    with pytest.raises(ModelResponseError, match=r"score outside \[0, 1\] \(-6\)"):
        HttpReranker(server.url, score_mode="probability", cooldown=cooldown).rerank(QUERY, ["x"])
    server.set_mode("rerank", "ok")
    always = HttpReranker(server.url, score_mode="logit", cooldown=cooldown)
    assert always.rerank(QUERY, ["bananas"]) == [0.5]


def test_degenerate_scores_are_returned_as_they_are(
    server: ModelServer, cooldown: Cooldown
) -> None:
    server.set_mode("rerank", "degenerate")
    assert HttpReranker(server.url, cooldown=cooldown).rerank(QUERY, DOCUMENTS) == [0.0] * 7


@pytest.mark.parametrize(
    ("mode", "problem"),
    [
        ("nan", "returned a non-finite score (nan) for document"),
        ("short_list", "returned 3 scores for 4 documents (missing [1])"),
        ("empty_list", "returned an empty list for 4 documents"),
        ("malformed_json", "returned malformed JSON"),
        ("http500", "answered HTTP 500"),
    ],
)
def test_bad_rerank_answers_are_refused(
    server: ModelServer, cooldown: Cooldown, mode: str, problem: str
) -> None:
    server.set_mode("rerank", mode)
    with pytest.raises(ModelResponseError) as caught:
        HttpReranker(server.url, cooldown=cooldown).rerank(QUERY, DOCUMENTS[:4])
    assert_one_line(caught.value, "rerank", server.url)
    assert problem in str(caught.value)
