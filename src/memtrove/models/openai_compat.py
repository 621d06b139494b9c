"""Embedders, LLMs and rerankers served over OpenAI-compatible HTTP.

The three services of the spec (llama-server on :8088 / :8089 / :8090 by default), or any
server with the same routes: Ollama, vLLM, TEI, OpenAI, Jina, Voyage, Cohere::

    POST {url}/v1/embeddings         {input: [...], model, dimensions?}  -> data[].embedding
    POST {url}/v1/chat/completions   {model, messages, max_tokens, temperature}
                                                                         -> choices[0].message
    POST {url}/v1/rerank             {model, query, documents, top_n}    -> results[]

A base URL that already ends in ``/v1`` is not given a second one. Transport, retry and
cooldown behaviour is described in :mod:`memtrove.models.http`. Everything a service returns
is checked before it is used; a wrong answer raises :class:`~memtrove.errors.ModelResponseError`
whose one-line message names the service, its URL and the problem.

These classes take plain arguments and read no settings: the entry points build them.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import httpx
import numpy as np
import numpy.typing as npt

from memtrove.models.http import (
    BATCH_RETRY,
    INTERACTIVE_RETRY,
    Cooldown,
    JsonService,
    RetryPolicy,
    TimeoutSetting,
    make_timeout,
)
from memtrove.models.pacing import TokenPacer
from memtrove.models.protocols import Vectors

__all__ = [
    "HttpEmbedder",
    "HttpLLM",
    "HttpReranker",
    "normalize_rows",
    "sigmoid",
    "strip_thinking",
]

EMBED_READ_TIMEOUT = 30.0
LLM_READ_TIMEOUT = 30.0
RERANK_READ_TIMEOUT = 10.0
_PROBE_TEXT = "memtrove dimension probe"
_THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)


def normalize_rows(vectors: npt.ArrayLike, fail: Callable[[str], Exception]) -> Vectors:
    """``vectors`` as float32 rows of unit length; ``fail(problem)`` is raised for a zero row."""
    array: npt.NDArray[np.float64] = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(array, axis=-1, keepdims=True)
    if np.any(norms == 0):
        raise fail("returned a zero vector")
    unit: Vectors = (array / norms).astype(np.float32)
    return unit


def sigmoid(value: float) -> float:
    """The logistic function, safe for large magnitudes."""
    if value >= 0:
        return 1.0 / (1.0 + math.exp(-value))
    exponential = math.exp(value)
    return exponential / (1.0 + exponential)


def strip_thinking(text: str) -> str:
    """``text`` without ``<think>...</think>`` blocks (an unclosed one runs to the end).

    A reply whose template opened the block in the prompt starts mid-thought and carries only
    the closing tag; everything up to the last ``</think>`` is dropped then.
    """
    text = _THINK_BLOCK.sub("", text)
    closing = text.lower().rfind("</think>")
    if closing >= 0:
        text = text[closing + len("</think>") :]
    return text.strip()


def _truncate(text: str, max_chars: int | None) -> str:
    return text if max_chars is None else text[:max_chars]


class HttpEmbedder:
    """An embedding model behind ``/v1/embeddings``.

    ``identity`` is ``http:<model>``: the same model served from another host is the same
    space, so the host is left out. ``dimensions`` is the configured value, else learnt from
    the first answer (probing with one short text if asked before any call). It is also sent
    in the request when configured (OpenAI ``text-embedding-3-*`` shorten their vectors to
    it); leave it ``None`` for servers that reject the field.

    Inputs longer than ``max_chars`` are cut (``None``: no cut, for cloud services that
    truncate themselves) and sent in batches of ``batch_size``, each batch of
    :meth:`embed_documents` first waiting for ``pacer`` (a tokens-per-minute budget,
    :class:`~memtrove.models.pacing.TokenPacer`) when one is given. ``embed_documents`` of more
    than one text uses ``batch_retry`` for HTTP 429, everything else ``retry``.

    Provider parameters go in ``extra_body`` (every request) and ``query_body`` (laid over it
    for :meth:`embed_query`); the core fields ``input`` and ``model`` cannot be overridden:

    - Jina: ``extra_body={"task": "retrieval.passage", "truncate": True}``,
      ``query_body={"task": "retrieval.query"}``
    - Voyage: ``extra_body={"input_type": "document"}``, ``query_body={"input_type": "query"}``
    - Cohere: ``extra_body={"input_type": "search_document", "truncate": "END"}``,
      ``query_body={"input_type": "search_query"}``
    - OpenAI: ``dimensions=512`` for a Matryoshka-shortened ``text-embedding-3-*``

    Query and document formatting (prompt prefixes) is the caller's job: texts are embedded
    as given. ``input_style`` tells the caller which shape this model expects.
    """

    def __init__(
        self,
        url: str,
        model: str = "embedding",
        *,
        api_key: str | None = None,
        dimensions: int | None = None,
        max_chars: int | None = 6000,
        batch_size: int = 50,
        extra_body: Mapping[str, Any] | None = None,
        query_body: Mapping[str, Any] | None = None,
        input_style: str = "prefixed",
        timeout: TimeoutSetting = None,
        retry: RetryPolicy = INTERACTIVE_RETRY,
        batch_retry: RetryPolicy = BATCH_RETRY,
        cooldown: Cooldown | None = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
        pacer: TokenPacer | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.model = model
        self.input_style = input_style
        self.pacer = pacer
        self._configured_dimensions = dimensions
        self._dimensions = dimensions
        self._max_chars = max_chars
        self._batch_size = batch_size
        self._extra_body = dict(extra_body or {})
        self._query_body = dict(query_body or {})
        self._retry = retry
        self._batch_retry = batch_retry
        self._lock = threading.Lock()
        self.service = JsonService(
            "embedding",
            url,
            api_key=api_key,
            timeout=make_timeout(timeout, EMBED_READ_TIMEOUT),
            cooldown=cooldown,
            sleep=sleep,
            transport=transport,
        )

    @property
    def identity(self) -> str:
        return f"http:{self.model}"

    @property
    def dimensions(self) -> int:
        """The vector size: configured, learnt, or probed now with one short text."""
        if self._dimensions is None:
            self.embed_documents([_PROBE_TEXT])
        assert self._dimensions is not None  # set by the first validated answer
        return self._dimensions

    def forget_dimensions(self) -> None:
        """Drop a dimension learnt from an answer (a configured one stays): the next use
        probes the service again. The retriever calls this before declaring the service a
        different embedding space from the vault's vectors."""
        with self._lock:
            if self._configured_dimensions is None:
                self._dimensions = None

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """One L2-normalised float32 row per text, in order."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        retry = self._batch_retry if len(texts) > 1 else self._retry
        rows: list[Vectors] = []
        for start in range(0, len(texts), self._batch_size):
            batch = [
                _truncate(text, self._max_chars) for text in texts[start : start + self._batch_size]
            ]
            if self.pacer is not None:
                self.pacer.wait(batch)
            rows.append(self._embed_batch(batch, self._extra_body, retry))
        return np.concatenate(rows, axis=0)

    def embed_query(self, text: str) -> Vectors:
        """The vector of ``text`` as given, shape ``(dimensions,)``."""
        body = {**self._extra_body, **self._query_body}
        rows = self._embed_batch([_truncate(text, self._max_chars)], body, self._retry)
        vector: Vectors = rows[0]
        return vector

    def _embed_batch(
        self, batch: list[str], extra: Mapping[str, Any], retry: RetryPolicy
    ) -> Vectors:
        body: dict[str, Any] = {**extra, "input": batch, "model": self.model}
        if self._configured_dimensions is not None:
            body.setdefault("dimensions", self._configured_dimensions)
        payload = self.service.post("embeddings", body, retry)
        vectors = self._parse(payload, len(batch))
        return normalize_rows(vectors, self.service.response_error)

    def _parse(self, payload: Any, count: int) -> np.ndarray[Any, Any]:
        fail = self.service.response_error
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise fail("returned JSON without a 'data' list")
        if not data:
            raise fail(f"returned an empty list for {count} texts")
        if len(data) != count:
            raise fail(f"returned {len(data)} vectors for {count} texts")
        items = _in_index_order(data, fail)
        vectors: list[np.ndarray[Any, Any]] = []
        for position, item in enumerate(items):
            embedding = item.get("embedding")
            if not isinstance(embedding, list) or not embedding:
                raise fail(f"returned no embedding list for text {position}")
            vector = np.asarray(embedding)
            if vector.ndim != 1 or vector.dtype.kind not in "iuf":
                raise fail(f"returned a non-numeric embedding for text {position}")
            if not np.all(np.isfinite(vector)):
                kind = "NaN" if np.any(np.isnan(vector)) else "infinity"
                raise fail(f"returned a non-finite value ({kind}) for text {position}")
            vectors.append(vector)
        sizes = sorted({len(vector) for vector in vectors})
        if len(sizes) > 1:
            raise fail(f"returned vectors of mixed dimensions {sizes}")
        with self._lock:
            if self._dimensions is None:
                self._dimensions = sizes[0]
            expected = self._dimensions
            if sizes[0] != expected and self._configured_dimensions is None:
                # A size learnt from one answer may itself have been the bad one: learn again
                # from the next answer rather than refusing every later one.
                self._dimensions = None
        if sizes[0] != expected:
            raise fail(f"returned vectors of dimension {sizes[0]}, expected {expected}")
        return np.stack(vectors)

    def close(self) -> None:
        """Close the connection pool."""
        self.service.close()


def _in_index_order(data: list[Any], fail: Callable[[str], Exception]) -> list[dict[str, Any]]:
    """Items sorted by their ``index`` field when every item has one, else as listed."""
    if not all(isinstance(item, dict) for item in data):
        raise fail("returned a 'data' item that is not an object")
    indexes = [item.get("index") for item in data]
    if any(index is None for index in indexes):
        return list(data)
    numbered = [index for index in indexes if isinstance(index, int)]
    if sorted(numbered) != list(range(len(data))):
        raise fail(f"returned indexes {indexes}, expected 0..{len(data) - 1} once each")
    return sorted(data, key=lambda item: int(item["index"]))


class HttpLLM:
    """A chat model behind ``/v1/chat/completions``, one user message per prompt.

    With ``no_think`` (the default) `` /no_think`` is appended to the prompt, which switches
    Qwen3's reasoning off; any ``<think>...</think>`` block in the answer is removed anyway.
    ``reasoning_effort`` is sent when set; ``extra_body`` adds provider fields.
    """

    def __init__(
        self,
        url: str,
        model: str = "qwen3",
        *,
        api_key: str | None = None,
        no_think: bool = True,
        reasoning_effort: str | None = None,
        extra_body: Mapping[str, Any] | None = None,
        timeout: TimeoutSetting = None,
        retry: RetryPolicy = INTERACTIVE_RETRY,
        cooldown: Cooldown | None = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.model = model
        self.no_think = no_think
        self._reasoning_effort = reasoning_effort
        self._extra_body = dict(extra_body or {})
        self._retry = retry
        self.service = JsonService(
            "LLM",
            url,
            api_key=api_key,
            timeout=make_timeout(timeout, LLM_READ_TIMEOUT),
            cooldown=cooldown,
            sleep=sleep,
            transport=transport,
        )

    @property
    def identity(self) -> str:
        return f"http:{self.model}"

    def complete(self, prompt: str, *, max_tokens: int = 150, temperature: float = 0.0) -> str:
        """The model's answer to ``prompt``, thinking removed and whitespace trimmed."""
        content = prompt + " /no_think" if self.no_think else prompt
        body: dict[str, Any] = {
            **self._extra_body,
            "model": self.model,
            "messages": [{"role": "user", "content": content}],
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        if self._reasoning_effort is not None:
            body["reasoning_effort"] = self._reasoning_effort
        payload = self.service.post("chat/completions", body, self._retry)
        return strip_thinking(self._content(payload))

    def _content(self, payload: Any) -> str:
        fail = self.service.response_error
        choices = payload.get("choices") if isinstance(payload, dict) else None
        if not isinstance(choices, list):
            raise fail("returned JSON without a 'choices' list")
        if not choices:
            raise fail("returned an empty list of choices")
        first = choices[0]
        message = first.get("message") if isinstance(first, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise fail("returned a choice without message content")
        return content

    def close(self) -> None:
        """Close the connection pool."""
        self.service.close()


ScoreMode = Literal["auto", "probability", "logit"]


class HttpReranker:
    """A cross-encoder behind ``/v1/rerank``, asked about at most ``batch_size`` texts a call.

    Understood answers (scores are mapped back to input order whatever order they come in):

    - llama-server, Cohere, vLLM: ``{"results": [{"index", "relevance_score"}]}``
    - Jina: the same with a ``document`` per result
    - TEI: a bare list ``[{"index", "score"}]``
    - proxies that wrap the list in ``{"data": [...]}``

    Scores: llama-server and TEI with ``raw_scores`` return unbounded logits, others
    probabilities. With ``score_mode="auto"`` a call whose scores all lie in [0, 1] is kept
    as is; if any score of the call lies outside, every score of the call goes through the
    logistic sigmoid, and so do all later calls of this reranker (so scores stay comparable
    from one query to the next). ``"probability"`` rejects out-of-range scores, ``"logit"``
    always applies the sigmoid. Degenerate answers (all scores equal) are returned as they
    are: the caller decides what to do with them.

    Texts are cut to ``max_chars``; identical texts are scored once. ``rerank`` takes the
    query as given (the caller prepends any intent).
    """

    def __init__(
        self,
        url: str,
        model: str = "reranker",
        *,
        api_key: str | None = None,
        batch_size: int = 4,
        max_chars: int | None = 4000,
        score_mode: ScoreMode = "auto",
        extra_body: Mapping[str, Any] | None = None,
        timeout: TimeoutSetting = None,
        retry: RetryPolicy = INTERACTIVE_RETRY,
        cooldown: Cooldown | None = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.model = model
        self.score_mode: ScoreMode = score_mode
        self._batch_size = batch_size
        self._max_chars = max_chars
        self._extra_body = dict(extra_body or {})
        self._retry = retry
        self._seen_logits = False
        self.service = JsonService(
            "rerank",
            url,
            api_key=api_key,
            timeout=make_timeout(timeout, RERANK_READ_TIMEOUT),
            cooldown=cooldown,
            sleep=sleep,
            transport=transport,
        )

    @property
    def identity(self) -> str:
        return f"http:{self.model}"

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score in [0, 1] per text, in order."""
        if not texts:
            return []
        unique = list(dict.fromkeys(_truncate(text, self._max_chars) for text in texts))
        raw: list[float] = []
        for start in range(0, len(unique), self._batch_size):
            raw.extend(self._score_batch(query, unique[start : start + self._batch_size]))
        scores = dict(zip(unique, self._to_probabilities(raw), strict=True))
        return [scores[_truncate(text, self._max_chars)] for text in texts]

    def _to_probabilities(self, raw: list[float]) -> list[float]:
        out_of_range = any(score < 0.0 or score > 1.0 for score in raw)
        if self.score_mode == "probability" and out_of_range:
            bad = next(score for score in raw if score < 0.0 or score > 1.0)
            raise self.service.response_error(f"returned a score outside [0, 1] ({bad:g})")
        if out_of_range:
            self._seen_logits = True
        if self.score_mode == "logit" or self._seen_logits:
            return [sigmoid(score) for score in raw]
        return raw

    def _score_batch(self, query: str, batch: list[str]) -> list[float]:
        body = {
            **self._extra_body,
            "model": self.model,
            "query": query,
            "documents": batch,
            "top_n": len(batch),
        }
        payload = self.service.post("rerank", body, self._retry)
        return self._parse(payload, len(batch))

    def _parse(self, payload: Any, count: int) -> list[float]:
        fail = self.service.response_error
        results: Any = payload
        if isinstance(payload, dict):
            results = payload.get("results", payload.get("data"))
        if not isinstance(results, list):
            raise fail("returned JSON without a 'results' list")
        if not results:
            raise fail(f"returned an empty list for {count} documents")
        scores: dict[int, float] = {}
        for item in results:
            if not isinstance(item, dict):
                raise fail("returned a result that is not an object")
            index = item.get("index")
            score = item.get("relevance_score", item.get("score"))
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count:
                raise fail(f"returned index {index!r} for {count} documents")
            if index in scores:
                raise fail(f"returned index {index} twice")
            if not isinstance(score, int | float) or isinstance(score, bool):
                raise fail(f"returned no numeric score for document {index}")
            if not math.isfinite(score):
                raise fail(f"returned a non-finite score ({score}) for document {index}")
            scores[index] = float(score)
        missing = [index for index in range(count) if index not in scores]
        if missing:
            raise fail(f"returned {len(scores)} scores for {count} documents (missing {missing})")
        return [scores[index] for index in range(count)]

    def close(self) -> None:
        """Close the connection pool."""
        self.service.close()
