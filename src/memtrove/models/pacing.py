"""Pacing requests to a cloud embedder's tokens-per-minute budget.

Cloud embedding services (Jina, OpenAI, Voyage, Cohere) limit tokens per minute (TPM);
a bulk ``embed`` that ignores the limit spends its time in 429 answers and backoff. The
pacer spaces the batches instead: after a batch of ``T`` tokens the next one waits until
``T`` tokens' share of the minute has passed, at :data:`SAFETY` (85 %) of the limit to leave
room for retries, with ±15 % jitter so that several processes do not fall into step.
Tokens are estimated from characters (4 characters ≈ 1 token): no tokenizer is loaded.

The clock, the sleep and the random source are arguments, so the schedule can be checked
without waiting for it.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Callable, Sequence

__all__ = ["CHARS_PER_TOKEN", "DEFAULT_TPM_LIMIT", "JITTER", "SAFETY", "TokenPacer"]

DEFAULT_TPM_LIMIT = 100_000
SAFETY = 0.85
CHARS_PER_TOKEN = 4
JITTER = 0.15


class TokenPacer:
    """Spaces batches so that their estimated tokens stay under ``tokens_per_minute``."""

    def __init__(
        self,
        tokens_per_minute: int = DEFAULT_TPM_LIMIT,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        uniform: Callable[[float, float], float] = random.uniform,
    ) -> None:
        if tokens_per_minute < 1:
            raise ValueError("tokens_per_minute must be at least 1")
        self.tokens_per_minute = tokens_per_minute
        self._clock = clock
        self._sleep = sleep
        self._uniform = uniform
        self._lock = threading.Lock()
        self._next_at: float | None = None  # when the next batch may go

    @staticmethod
    def tokens(texts: Sequence[str]) -> int:
        """The estimated tokens of ``texts``: 4 characters each, rounded up."""
        return math.ceil(sum(len(text) for text in texts) / CHARS_PER_TOKEN)

    def interval(self, tokens: int) -> float:
        """The seconds ``tokens`` take of the budget (before jitter)."""
        return tokens * 60.0 / (self.tokens_per_minute * SAFETY)

    def wait(self, texts: Sequence[str]) -> float:
        """Sleep until the batch ``texts`` may be sent, then book its share of the budget;
        the seconds slept (0.0 for the first batch, or one sent after a pause)."""
        with self._lock:
            now = self._clock()
            delay = 0.0 if self._next_at is None else max(0.0, self._next_at - now)
            if delay > 0:
                self._sleep(delay)
            sent = now + delay
            jitter = 1.0 + self._uniform(-JITTER, JITTER)
            self._next_at = sent + self.interval(self.tokens(texts)) * jitter
            return delay
