"""A loopback fake of the three OpenAI-compatible model services, real HTTP on 127.0.0.1.

Routes (also without the ``/v1`` prefix): ``POST /v1/embeddings``, ``POST /v1/chat/completions``,
``POST /v1/rerank``, ``GET /v1/models``, ``GET /health``. Answers are deterministic:

- embeddings: a bag of words. Each lowercase word maps to a pseudo-random unit vector seeded by
  ``sha256(word)``; a text's vector is the normalised sum, so texts sharing words are similar.
  A request's ``dimensions`` field is honoured (like OpenAI), else the server's ``dimensions``.
  The attributes ``geometry`` and ``blur`` change the vectors (see :func:`fake_embedding`).
- chat: for a prompt containing ``Expand this search query: <q>`` the three lines
  ``lex: <q> keywords`` / ``vec: <q> meaning`` / ``hyde: A passage about <q>.``; otherwise the
  canned reply (a string, or a function of the prompt) set with :meth:`ModelServer.set_chat_reply`.
- rerank: the fraction of the query's distinct words found in the document, in [0, 1];
  results sorted best first, in one of the shapes of :data:`RERANK_SHAPES`.

Fault modes, set per endpoint (``"embeddings"``, ``"chat"``, ``"rerank"``) at run time with
:meth:`ModelServer.set_mode`, optionally for the next ``count`` calls only:
``ok``, ``http500``, ``http503`` (llama-server loading), ``429`` (with a ``Retry-After`` header unless ``retry_after=None``),
``wrong_dimensions`` (half the size), ``nan``, ``malformed_json``, ``empty_list``,
``short_list`` (one item fewer than inputs), ``reversed`` (embeddings listed in reverse order,
each with its ``index``), ``degenerate`` (rerank scores all 0.0, zero embedding vectors, empty
chat content), ``logits`` (rerank scores spread over [-6, 6]), ``slow`` (sleep
``slow_seconds`` before answering). Every request is logged (path, JSON body, lowercase headers).

In conftest: ``pytest_plugins = ["tests.fakes.model_server"]`` provides the ``model_server``
fixture. :func:`refused_url` gives a URL where nothing listens.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

__all__ = [
    "ENDPOINTS",
    "MODES",
    "RERANK_SHAPES",
    "ModelServer",
    "RecordedRequest",
    "fake_embedding",
    "fake_rerank_score",
    "model_server",
    "refused_url",
]

ENDPOINTS = {"embeddings": "embeddings", "chat/completions": "chat", "rerank": "rerank"}
MODES = frozenset(
    {
        "ok",
        "http500",
        "http503",
        "429",
        "wrong_dimensions",
        "nan",
        "malformed_json",
        "empty_list",
        "short_list",
        "reversed",
        "degenerate",
        "logits",
        "slow",
    }
)
RERANK_SHAPES = ("llama", "tei", "jina", "cohere", "data")
EXPANSION_MARKER = "Expand this search query:"
DEFAULT_CHAT_REPLY = "This is the fake model's reply."
_WORD = re.compile(r"\w+")

ChatReply = str | Callable[[str], str]


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


@lru_cache(maxsize=65536)
def _word_vector(word: str, dimensions: int, geometry: str = "") -> npt.NDArray[np.float64]:
    seed = int.from_bytes(hashlib.sha256((geometry + word).encode("utf-8")).digest()[:8], "big")
    vector = np.random.default_rng(seed).standard_normal(dimensions)
    unit: npt.NDArray[np.float64] = vector / np.linalg.norm(vector)
    return unit


def fake_embedding(
    text: str, dimensions: int = 64, geometry: str = "", blur: float = 0.0
) -> list[float]:
    """The fake server's unit vector for ``text`` (a text without words counts as one word).

    ``geometry`` seeds every word's vector (another value: the same model name answering
    with another geometry); ``blur`` in [0, 1) pulls every text toward one shared direction
    (a collapsed model: everything looks alike)."""
    words = _words(text) or ["<empty>"]
    total = np.sum([_word_vector(word, dimensions, geometry) for word in words], axis=0)
    norm = float(np.linalg.norm(total))
    if norm == 0.0:  # opposite words cancelling exactly; practically never
        total, norm = _word_vector("<empty>", dimensions, geometry), 1.0
    unit = total / norm
    if blur:
        unit = (1.0 - blur) * unit + blur * _word_vector("<shared>", dimensions, geometry)
        unit = unit / np.linalg.norm(unit)
    return [float(value) for value in unit]


def fake_rerank_score(query: str, document: str) -> float:
    """The fraction of the query's distinct words that occur in ``document``."""
    wanted = set(_words(query))
    if not wanted:
        return 0.0
    return len(wanted & set(_words(document))) / len(wanted)


def refused_url() -> str:
    """A loopback URL where nothing listens (the port was free a moment ago)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it."""

    method: str
    path: str
    body: Any
    headers: dict[str, str]

    @property
    def endpoint(self) -> str | None:
        """``"embeddings"``, ``"chat"``, ``"rerank"`` or ``None`` for other paths."""
        return _endpoint(self.path)


@dataclass
class _Mode:
    name: str = "ok"
    remaining: int | None = None
    retry_after: str | None = "1"
    after: int = 0  # calls still answered ``ok`` before the mode starts


@dataclass
class _Reply:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


def _endpoint(path: str) -> str | None:
    route = path.split("?", 1)[0].strip("/").removeprefix("v1/")
    return ENDPOINTS.get(route)


def _json_reply(payload: Any, status: int = 200) -> _Reply:
    return _Reply(status, json.dumps(payload).encode("utf-8"))


class _QuietServer(ThreadingHTTPServer):
    """Client hang-ups (timeouts, cancelled requests) are part of the tests, not errors:
    the stdlib would print their tracebacks to stderr, where CLI tests read their output."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        self.errors += 1

    errors = 0


class ModelServer:
    """The fake server, started on construction; use as a context manager or call close()."""

    def __init__(
        self,
        *,
        dimensions: int = 64,
        slow_seconds: float = 2.0,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.dimensions = dimensions
        # The embedding geometry (see fake_embedding): set them to play a server whose model
        # changed under the same name.
        self.geometry = ""
        self.blur = 0.0
        self.slow_seconds = slow_seconds
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._modes: dict[str, _Mode] = {}
        self._requests: list[RecordedRequest] = []
        self._chat_reply: ChatReply = DEFAULT_CHAT_REPLY
        self._rerank_shape = "llama"
        self._httpd = _QuietServer((host, port), _handler_class(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},  # shutdown() waits up to one poll interval
            name="fake-model-server",
            daemon=True,
        )
        self._thread.start()

    @property
    def port(self) -> int:
        """The TCP port the server listens on."""
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The base URL, without ``/v1``."""
        return f"http://127.0.0.1:{self.port}"

    refused_url = staticmethod(refused_url)

    def set_mode(
        self,
        endpoint: str,
        mode: str,
        count: int | None = None,
        *,
        retry_after: str | None = "1",
        after: int = 0,
    ) -> None:
        """Answer ``endpoint`` in ``mode``; for the next ``count`` calls, then ``ok`` again.
        With ``after``, the next ``after`` calls are still answered ``ok`` first (e.g. the
        geometry canary's probes, which ``embed`` sends before any fragment)."""
        if endpoint not in ENDPOINTS.values():
            raise ValueError(
                f"unknown endpoint {endpoint!r}; use one of {sorted(ENDPOINTS.values())}"
            )
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; use one of {sorted(MODES)}")
        with self._lock:
            self._modes[endpoint] = _Mode(mode, count, retry_after, after)

    def set_chat_reply(self, reply: ChatReply) -> None:
        """The chat answer to prompts that are not query expansions."""
        with self._lock:
            self._chat_reply = reply

    def set_rerank_shape(self, shape: str) -> None:
        """Answer rerank calls in the shape of ``llama``, ``tei``, ``jina``, ``cohere``, ``data``."""
        if shape not in RERANK_SHAPES:
            raise ValueError(f"unknown rerank shape {shape!r}; use one of {RERANK_SHAPES}")
        with self._lock:
            self._rerank_shape = shape

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    def requests_to(self, endpoint: str) -> list[RecordedRequest]:
        """The requests to one endpoint (``"embeddings"``, ``"chat"`` or ``"rerank"``)."""
        return [request for request in self.requests if request.endpoint == endpoint]

    def reset(self) -> None:
        """Every endpoint back to ``ok``, default replies, and an empty request log."""
        with self._lock:
            self._modes.clear()
            self._requests.clear()
            self._chat_reply = DEFAULT_CHAT_REPLY
            self._rerank_shape = "llama"
            self.geometry, self.blur = "", 0.0

    def close(self) -> None:
        """Stop serving and free the port."""
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ModelServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- request handling (called on the server's threads) --

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _take_mode(self, endpoint: str) -> _Mode:
        with self._lock:
            mode = self._modes.get(endpoint, _Mode())
            if mode.after > 0:
                mode.after -= 1
                return _Mode()
            if mode.remaining is not None:
                mode.remaining -= 1
                if mode.remaining <= 0:
                    self._modes.pop(endpoint, None)
            return _Mode(mode.name, None, mode.retry_after)

    def _answer(self, endpoint: str, body: Any) -> _Reply:
        mode = self._take_mode(endpoint)
        if mode.name == "slow":
            self._closing.wait(self.slow_seconds)
        if mode.name == "http500":
            return _json_reply({"error": {"message": "fake internal error", "code": 500}}, 500)
        if mode.name == "http503":
            return _json_reply({"error": {"message": "Loading model", "code": 503}}, 503)
        if mode.name == "429":
            reply = _json_reply({"error": {"message": "rate limited", "code": 429}}, 429)
            if mode.retry_after is not None:
                reply.headers["Retry-After"] = mode.retry_after
            return reply
        if mode.name == "malformed_json":
            return _Reply(200, b'{"data": [{"embedding": [0.1, ')
        if not isinstance(body, dict):
            return _json_reply({"error": {"message": "body must be a JSON object"}}, 400)
        if endpoint == "embeddings":
            return self._embeddings(body, mode.name)
        if endpoint == "chat":
            return self._chat(body, mode.name)
        return self._rerank(body, mode.name)

    def _embeddings(self, body: dict[str, Any], mode: str) -> _Reply:
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
            return _json_reply({"error": {"message": "input must be a string or strings"}}, 400)
        requested = body.get("dimensions")
        size = requested if isinstance(requested, int) and requested > 0 else self.dimensions
        if mode == "wrong_dimensions":
            size = max(1, size // 2)
        vectors = [fake_embedding(text, size, self.geometry, self.blur) for text in texts]
        if mode == "degenerate":
            vectors = [[0.0] * size for _ in texts]
        if mode == "nan" and vectors:
            vectors[0][0] = float("nan")
        data = [
            {"object": "embedding", "index": index, "embedding": vector}
            for index, vector in enumerate(vectors)
        ]
        if mode == "empty_list":
            data = []
        elif mode == "short_list":
            data = data[:-1]
        elif mode == "reversed":
            data.reverse()
        words = sum(len(_words(text)) for text in texts)
        return _json_reply(
            {
                "object": "list",
                "model": body.get("model", "embedding"),
                "data": data,
                "usage": {"prompt_tokens": words, "total_tokens": words},
            }
        )

    def _chat(self, body: dict[str, Any], mode: str) -> _Reply:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict):
            return _json_reply({"error": {"message": "messages must be a non-empty list"}}, 400)
        prompt = str(messages[-1].get("content", ""))
        if EXPANSION_MARKER in prompt:
            query = prompt.split(EXPANSION_MARKER, 1)[1].split("\n", 1)[0]
            query = query.replace("/no_think", "").strip()
            content = f"lex: {query} keywords\nvec: {query} meaning\nhyde: A passage about {query}."
        else:
            with self._lock:
                reply = self._chat_reply
            content = reply(prompt) if callable(reply) else reply
        if mode == "degenerate":
            content = ""
        choices = [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ]
        return _json_reply(
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "model": body.get("model", "qwen3"),
                "choices": [] if mode == "empty_list" else choices,
                "usage": {"prompt_tokens": len(_words(prompt)), "completion_tokens": 0},
            }
        )

    def _rerank(self, body: dict[str, Any], mode: str) -> _Reply:
        query = body.get("query")
        documents = body.get("documents", body.get("texts"))
        if not isinstance(query, str) or not isinstance(documents, list):
            return _json_reply({"error": {"message": "query and documents are required"}}, 400)
        texts = [str(document) for document in documents]
        scores = [fake_rerank_score(query, text) for text in texts]
        if mode == "degenerate":
            scores = [0.0 for _ in texts]
        elif mode == "logits":
            scores = [score * 12.0 - 6.0 for score in scores]
        elif mode == "nan" and scores:
            scores[0] = float("nan")
        order = sorted(range(len(texts)), key=lambda index: -scores[index])
        top_n = body.get("top_n")
        if isinstance(top_n, int) and top_n > 0:
            order = order[:top_n]
        if mode == "empty_list":
            order = []
        elif mode == "short_list":
            order = order[:-1]
        with self._lock:
            shape = self._rerank_shape
        return _json_reply(_rerank_payload(shape, order, scores, texts, body))


def _rerank_payload(
    shape: str, order: list[int], scores: list[float], texts: list[str], body: dict[str, Any]
) -> Any:
    if shape == "tei":
        return [{"index": index, "score": scores[index]} for index in order]
    results: list[dict[str, Any]] = []
    for index in order:
        result: dict[str, Any] = {"index": index, "relevance_score": scores[index]}
        if shape == "jina":
            result["document"] = {"text": texts[index]}
        results.append(result)
    model = body.get("model", "reranker")
    if shape == "jina":
        return {"model": model, "usage": {"total_tokens": 0}, "results": results}
    if shape == "cohere":
        return {"id": "fake", "results": results, "meta": {"billed_units": {"search_units": 1}}}
    if shape == "data":
        return {"model": model, "data": results}
    return {"model": model, "object": "list", "usage": {"total_tokens": 0}, "results": results}


def _handler_class(server: ModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are separate writes: avoid 40 ms stalls

        def log_message(self, format: str, *args: Any) -> None:
            """Stay quiet: pytest shows failures, not access logs."""

        def _send(self, reply: _Reply) -> None:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply.body)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(reply.body)

        def do_GET(self) -> None:
            server._record(RecordedRequest("GET", self.path, None, _headers(self)))
            route = self.path.split("?", 1)[0].strip("/")
            if route == "health":
                self._send(_json_reply({"status": "ok"}))
            elif route in ("v1/models", "models"):
                self._send(_json_reply({"object": "list", "data": [{"id": "fake"}]}))
            else:
                self._send(_json_reply({"error": {"message": f"no route {self.path}"}}, 404))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            server._record(RecordedRequest("POST", self.path, body, _headers(self)))
            endpoint = _endpoint(self.path)
            if endpoint is None:
                self._send(_json_reply({"error": {"message": f"no route {self.path}"}}, 404))
                return
            self._send(server._answer(endpoint, body))

    return Handler


def _headers(handler: BaseHTTPRequestHandler) -> dict[str, str]:
    return {name.lower(): value for name, value in handler.headers.items()}


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    """A running fake model server, closed after the test."""
    with ModelServer() as server:
        yield server
