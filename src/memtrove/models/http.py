"""HTTP plumbing for the OpenAI-compatible backends: URL joining, 429 retries, cooldown.

How a request to a model service can fail, and what the caller sees::

    transport error (refused, DNS, timeout, dropped)  -> ModelUnavailableError; the endpoint
                                                         cools down for 60 s
    call while the endpoint cools down                -> ModelUnavailableError, no network
    HTTP 429                                          -> wait (Retry-After, else exponential
                                                         backoff) and try again; when the tries
                                                         run out, ModelUnavailableError
    HTTP 503 (e.g. llama-server loading its model)    -> ModelUnavailableError, no cooldown
    any other HTTP 4xx / 5xx                          -> ModelResponseError, no cooldown (the
                                                         service is up, it refused this request)
    a body that is not JSON                           -> ModelResponseError

The cooldown is what lets a search degrade quickly when a GPU box is off: one refused
connection, then every stage that needs that endpoint skips it for a minute instead of
waiting on a connect timeout each time. Every message is one line naming the service kind and
URL, e.g. ``embedding service at http://gpu:8088 is cooling down for 42s after: ConnectError:
[Errno 111] Connection refused``.
"""

from __future__ import annotations

import email.utils
import functools
import math
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from memtrove.errors import ModelResponseError, ModelUnavailableError

__all__ = [
    "BATCH_RETRY",
    "CONNECT_TIMEOUT",
    "COOLDOWN",
    "COOLDOWN_SECONDS",
    "INTERACTIVE_RETRY",
    "Cooldown",
    "JsonService",
    "RetryPolicy",
    "TimeoutSetting",
    "endpoint_url",
    "make_timeout",
    "one_line",
    "parse_retry_after",
]

COOLDOWN_SECONDS = 60.0
CONNECT_TIMEOUT = 2.0
_BODY_EXCERPT = 200

TimeoutSetting = float | httpx.Timeout | None
"""``None``: the backend's default; a number: every phase; an ``httpx.Timeout``: as given."""


def one_line(text: str, limit: int = _BODY_EXCERPT) -> str:
    """``text`` with whitespace runs collapsed to single spaces, cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def endpoint_url(base_url: str, path: str) -> str:
    """``{base}/v1/{path}``, or ``{base}/{path}`` when the base URL already ends in ``/v1``."""
    base = base_url.strip().rstrip("/")
    if base.endswith("/v1"):
        return f"{base}/{path}"
    return f"{base}/v1/{path}"


def _cooldown_key(url: str) -> str:
    # ``http://gpu:8088`` and ``http://gpu:8088/v1/`` are the same endpoint.
    return url.strip().rstrip("/").removesuffix("/v1").lower()


def make_timeout(timeout: TimeoutSetting, read_seconds: float) -> httpx.Timeout:
    """The httpx timeout for a backend whose default read timeout is ``read_seconds``."""
    if timeout is None:
        return httpx.Timeout(read_seconds, connect=CONNECT_TIMEOUT)
    if isinstance(timeout, httpx.Timeout):
        return timeout
    return httpx.Timeout(float(timeout))


class Cooldown:
    """Endpoints that failed at the transport level, each down until a deadline.

    Keyed by base URL (a trailing ``/`` or ``/v1`` does not matter). The module-level
    :data:`COOLDOWN` is the process-wide registry every backend uses unless given its own;
    tests pass one with a fake ``clock``.
    """

    def __init__(
        self, seconds: float = COOLDOWN_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.seconds = seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._down: dict[str, tuple[float, str]] = {}

    def mark_down(self, url: str, reason: str = "transport error") -> None:
        """Refuse calls to ``url`` for the next ``seconds``, remembering why."""
        with self._lock:
            self._down[_cooldown_key(url)] = (self._clock() + self.seconds, one_line(reason))

    def _entry(self, url: str) -> tuple[float, str] | None:
        key = _cooldown_key(url)
        with self._lock:
            entry = self._down.get(key)
            if entry is not None and entry[0] <= self._clock():
                del self._down[key]
                return None
            return entry

    def is_down(self, url: str) -> bool:
        """Whether ``url`` is cooling down now."""
        return self._entry(url) is not None

    def remaining(self, url: str) -> float:
        """Seconds until ``url`` may be tried again (0.0 when it is up)."""
        entry = self._entry(url)
        return 0.0 if entry is None else max(0.0, entry[0] - self._clock())

    def reason(self, url: str) -> str | None:
        """The transport error that put ``url`` down, or ``None`` when it is up."""
        entry = self._entry(url)
        return None if entry is None else entry[1]

    def clear(self, url: str | None = None) -> None:
        """Forget the cooldown of ``url``, or of every endpoint."""
        with self._lock:
            if url is None:
                self._down.clear()
            else:
                self._down.pop(_cooldown_key(url), None)


COOLDOWN = Cooldown()
"""The process-wide cooldown registry."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often to try a request answered with HTTP 429, and how long to wait in between.

    ``attempts`` counts every request, the first included. Waits double from ``first_wait``
    up to ``max_wait``; a ``Retry-After`` header replaces the computed wait, capped at
    ``max_wait`` too.
    """

    attempts: int
    first_wait: float
    max_wait: float

    def backoff(self, retry: int) -> float:
        """The wait before retry number ``retry`` (0 for the first retry)."""
        return float(min(self.first_wait * (2.0**retry), self.max_wait))


INTERACTIVE_RETRY = RetryPolicy(attempts=5, first_wait=1.0, max_wait=30.0)
"""Queries, single texts, chat and rerank calls: 5 tries, waits 1 s -> 30 s."""

BATCH_RETRY = RetryPolicy(attempts=3, first_wait=5.0, max_wait=60.0)
"""Embedding many texts at once: 3 tries, waits 5 s -> 60 s."""


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date).

    ``None`` when the header is absent or unreadable; a date in the past gives 0.0.
    ``now`` is the current Unix time (defaults to the wall clock).
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        current = time.time() if now is None else now
        return max(0.0, moment.timestamp() - current)
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return seconds


@functools.cache
def _tls_context() -> ssl.SSLContext:
    # Loading the CA bundle takes ~30 ms; build it once per process, and only for https URLs
    # (plain-HTTP endpoints never use it, so a hook talking to localhost never pays for it).
    return httpx.create_ssl_context(trust_env=False)


class JsonService:
    """One OpenAI-compatible endpoint: POSTs JSON, retries 429, honours the cooldown.

    ``kind`` ("embedding", "LLM", "rerank") and ``url`` start every error message.
    ``transport`` is httpx's seam for tests that need no socket; the backends' own tests
    use a real loopback server instead.
    """

    def __init__(
        self,
        kind: str,
        url: str,
        *,
        api_key: str | None,
        timeout: httpx.Timeout,
        cooldown: Cooldown | None = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.kind = kind
        self.url = url.strip().rstrip("/")
        self.cooldown = COOLDOWN if cooldown is None else cooldown
        self._sleep = sleep
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        # trust_env=False: library code reads no environment (no proxy variables either).
        self._client = httpx.Client(
            timeout=timeout,
            headers=headers,
            transport=transport,
            trust_env=False,
            verify=_tls_context() if self.url.lower().startswith("https:") else False,
        )

    @property
    def name(self) -> str:
        """``"<kind> service at <url>"``, the subject of every message."""
        return f"{self.kind} service at {self.url}"

    def response_error(self, problem: str) -> ModelResponseError:
        """A :class:`ModelResponseError` saying this service ``problem``."""
        return ModelResponseError(f"{self.name} {problem}")

    def check_available(self) -> None:
        """Raise :class:`ModelUnavailableError` while the endpoint cools down."""
        remaining = self.cooldown.remaining(self.url)
        if remaining > 0:
            reason = self.cooldown.reason(self.url) or "a transport error"
            raise ModelUnavailableError(
                f"{self.name} is cooling down for {math.ceil(remaining)}s after: {reason}"
            )

    def post(self, path: str, body: Mapping[str, Any], retry: RetryPolicy) -> Any:
        """POST ``body`` to ``path`` (joined as in :func:`endpoint_url`); the decoded JSON."""
        self.check_available()
        target = endpoint_url(self.url, path)
        for attempt in range(max(1, retry.attempts)):
            try:
                response = self._client.post(target, json=dict(body))
            except (httpx.TransportError, httpx.InvalidURL) as error:  # http://[::1 too
                reason = one_line(f"{type(error).__name__}: {error}".rstrip(": "))
                self.cooldown.mark_down(self.url, reason)
                raise ModelUnavailableError(
                    f"{self.name} is unreachable ({reason}); "
                    f"not retried for {math.ceil(self.cooldown.seconds)}s"
                ) from error
            if response.status_code == 429:
                if attempt + 1 >= retry.attempts:
                    break
                self._sleep(self._wait(response, retry, attempt))
                continue
            if response.status_code >= 400:
                excerpt = one_line(response.text)
                problem = f"answered HTTP {response.status_code}" + (
                    f": {excerpt}" if excerpt else ""
                )
                if response.status_code == 503:  # llama-server while it loads the model
                    raise ModelUnavailableError(f"{self.name} {problem}")
                raise self.response_error(problem)
            try:
                return response.json()
            except ValueError as error:
                raise self.response_error(
                    f"returned malformed JSON: {one_line(response.text, 80)!r}"
                ) from error
        raise ModelUnavailableError(
            f"{self.name} is rate limiting (HTTP 429) after {retry.attempts} tries"
        )

    @staticmethod
    def _wait(response: httpx.Response, retry: RetryPolicy, attempt: int) -> float:
        announced = parse_retry_after(response.headers.get("Retry-After"))
        wait = retry.backoff(attempt) if announced is None else announced
        return min(wait, retry.max_wait)

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()
