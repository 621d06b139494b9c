"""Live probes of the model services: embedder, LLM, and the reranker's golden-set health.

Each service is asked with a client of its own: a separate cooldown (a service that failed a
minute ago is asked again), a bounded timeout, one retry at most after HTTP 429, and no cache.
A role with no service configured is ``ok`` and says which stage is skipped, because that is a
supported setup (DESIGN.md section 6). ``doctor`` assembles these checks with the vault's own.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from functools import partial
from typing import Any, Protocol, TypeVar

import httpx
import numpy as np

from memtrove.errors import ModelError, ModelResponseError, ModelUnavailableError
from memtrove.models.http import CONNECT_TIMEOUT, Cooldown, RetryPolicy
from memtrove.models.protocols import LLM, Embedder, Reranker
from memtrove.models.registry import Models
from memtrove.results import Check, RerankHealth, RerankPair
from memtrove.retrieval.fusion import RERANK_DEGENERATE_FLOOR

__all__ = [
    "GOLDEN_PAIRS",
    "PROBE_TIMEOUT",
    "embedder_check",
    "llm_check",
    "rerank_health",
    "rerank_verdict",
    "reranker_check",
    "service_checks",
    "service_fix",
]

PROBE_TIMEOUT = 8.0
_PROBE_RETRY = RetryPolicy(attempts=2, first_wait=0.5, max_wait=1.0)

# Two texts about one thing and one about another: a sane embedder puts the first two closer.
_EMBED_PROBE = (
    "rotating the refresh token after every login session",
    "refresh token rotation for each login session",
    "banana bread recipe with walnuts and brown sugar",
)

GOLDEN_PAIRS: tuple[tuple[str, str, str], ...] = (
    (
        "how do I rotate the refresh token",
        "To rotate the refresh token, issue a new one on every use and revoke the old token.",
        "Banana bread: mash three ripe bananas, stir in flour and sugar, then bake for an hour.",
    ),
    (
        "why did the database migration fail",
        "The database migration did fail at step 3: a report query held the table lock.",
        "Hiking trail climbs through pine forest to a quiet lake; bring water and a jacket.",
    ),
    (
        "configure the rate limit for the public API",
        "Configure the rate limit for the public API in gateway.yaml: 600 requests per key.",
        "Our cat sleeps most afternoons on a sunny windowsill and wakes up hungry at dinner.",
    ),
    (
        "memory leak in the thumbnail worker",
        "The thumbnail worker leaked memory: each resized image stayed in a cache never cleared.",
        "Tomatoes grow best with six hours of sun and deep, infrequent watering.",
    ),
    (
        "which embedding model do we use for search",
        "We use one embedding model for search, so documents and queries share a vector space.",
        "A violin has four strings tuned in fifths: G, D, A and E.",
    ),
    (
        "how to restore a backup of the vault",
        "To restore a backup of the vault, stop the server and copy the snapshot over the file.",
        "Penguins huddle together through Antarctic winter storms, taking turns at colony edges.",
    ),
    (
        "error handling for failed payments",
        "Error handling for failed payments: retry a declined card once, then email the customer.",
        "Volcanoes form where magma rises through cracks in Earth's crust.",
    ),
    (
        "who approved the switch to PostgreSQL",
        "The switch to PostgreSQL was approved by the architecture group after a benchmark.",
        "Sourdough starter needs daily feeding with equal parts flour and water.",
    ),
)
"""(query, relevant text, irrelevant text): any working reranker scores the relevant one higher."""


def service_checks(models: Models, timeout: float = PROBE_TIMEOUT) -> list[Check]:
    """The embedder, LLM and reranker checks alone (for when the vault cannot be opened)."""
    return [
        embedder_check(models, timeout)[0],
        llm_check(models, timeout),
        reranker_check(models, timeout),
    ]


def embedder_check(models: Models, timeout: float) -> tuple[Check, str | None, int | None]:
    """The check, the embedder's identity (None if it cannot be built), its answered size."""
    url = models.settings.embed_url
    identity: str | None = None
    try:
        with _embedder(models, timeout) as embedder:
            identity = embedder.identity
            vectors = embedder.embed_documents(list(_EMBED_PROBE))
    except ModelError as error:
        return (
            Check("embedder", "fail", str(error), service_fix("embedder", error, url)),
            identity,
            None,
        )
    name = _describe(identity, url)
    rows = np.asarray(vectors, dtype=np.float64)
    if rows.ndim != 2 or rows.shape[0] != len(_EMBED_PROBE) or not np.all(np.isfinite(rows)):
        detail = f"{name} returned vectors of shape {rows.shape} for {len(_EMBED_PROBE)} texts"
        return Check("embedder", "fail", detail, service_fix("embedder", None, url)), identity, None
    similar, unrelated = float(rows[0] @ rows[1]), float(rows[0] @ rows[2])
    scores = f"similar texts {similar:.2f}, unrelated {unrelated:.2f}"
    if not similar > unrelated:
        detail = f"{name} does not tell similar texts from unrelated ones: {scores}"
        check = Check("embedder", "fail", detail, service_fix("embedder", None, url))
    else:
        check = Check("embedder", "ok", f"{name}, {rows.shape[1]}-d: {scores}")
    return check, identity, int(rows.shape[1])


def llm_check(models: Models, timeout: float) -> Check:
    """A tiny completion must come back non-empty; no LLM configured is fine (stage skipped)."""
    if not models.has_llm:
        detail = "not configured (stage skipped): no query expansion; set MEMTROVE_LLM_URL"
        return Check("llm", "ok", detail)
    url = models.settings.llm_url
    try:
        with _llm(models, timeout) as llm:
            name = _describe(llm.identity, url)
            answer = llm.complete("Reply with the single word: ready", max_tokens=32)
    except ModelError as error:
        return Check("llm", "fail", str(error), service_fix("llm", error, url))
    if not answer.strip():
        return Check(
            "llm", "fail", f"{name} answered with empty text", service_fix("llm", None, url)
        )
    return Check("llm", "ok", f"{name} answered ({len(answer)} characters)")


def reranker_check(models: Models, timeout: float) -> Check:
    """:func:`rerank_health` as a check; no reranker configured is fine (stage skipped)."""
    health = rerank_health(models, timeout)
    if not health.configured:
        detail = (
            "not configured (stage skipped): query keeps the fused order; set MEMTROVE_RERANK_URL"
        )
        return Check("reranker", "ok", detail)
    if health.healthy:
        return Check("reranker", "ok", f"{health.reranker}: {health.detail}")
    return Check("reranker", "fail", f"{health.verdict}: {health.detail}", health.fix)


# -- rerank health ----------------------------------------------------------------------------


def rerank_health(models: Models, timeout: float = PROBE_TIMEOUT) -> RerankHealth:
    """Score :data:`GOLDEN_PAIRS` with the configured reranker, live, and judge the scores.

    ``timeout`` (seconds) bounds each request and the probe as a whole (checked between
    requests). Nothing is cached: the reranker is called directly.
    """
    started = time.monotonic()
    if not models.has_reranker:
        return RerankHealth(
            configured=False,
            verdict="not configured",
            detail="no reranker configured: set MEMTROVE_RERANK_URL",
            fix="set MEMTROVE_RERANK_URL to an OpenAI-compatible /v1/rerank service",
        )
    url = models.settings.rerank_url
    name = url or "the reranker"
    pairs: list[RerankPair] = []
    try:
        with _reranker(models, timeout) as reranker:
            name = _describe(reranker.identity, url)
            for query, relevant, irrelevant in GOLDEN_PAIRS:
                if time.monotonic() - started > timeout:
                    raise ModelUnavailableError(f"{name} did not finish the probe in {timeout:g}s")
                scores = reranker.rerank(query, [relevant, irrelevant])
                if len(scores) != 2 or not all(math.isfinite(score) for score in scores):
                    raise ModelResponseError(f"{name} returned unusable scores {scores!r}")
                pairs.append(RerankPair(query, float(scores[0]), float(scores[1])))
    except ModelError as error:
        fix = service_fix("reranker", error, url)
        elapsed = time.monotonic() - started
        return RerankHealth(True, "error", str(error), name, fix, pairs, elapsed)
    verdict, detail = rerank_verdict(pairs)
    fix = "" if verdict == "healthy" else _RERANK_FIXES[verdict]
    return RerankHealth(True, verdict, detail, name, fix, pairs, time.monotonic() - started)


_RERANK_FIXES = {
    "degenerate": "check that MEMTROVE_RERANK_MODEL names a cross-encoder reranker served with "
    "reranking on (llama-server --reranking); meanwhile `query` keeps the fused order",
    "inverted": "the service seems to return distances or a mislabelled model: check "
    "MEMTROVE_RERANK_MODEL names a reranker that scores relevance (higher is better)",
    "not discriminating": "check that MEMTROVE_RERANK_MODEL names a reranker (not an "
    "embedding or chat model) and that the service passes the query through",
}


def rerank_verdict(pairs: Sequence[RerankPair]) -> tuple[str, str]:
    """``(verdict, detail)`` for probe scores: healthy, degenerate, inverted, not discriminating.

    Degenerate when no score exceeds ``RERANK_DEGENERATE_FLOOR``; healthy when the relevant
    text wins most pairs; inverted when the irrelevant one does.
    """
    if not pairs:
        return "not discriminating", "no pairs were scored"
    count = len(pairs)
    top = max(max(pair.relevant_score, pair.irrelevant_score) for pair in pairs)
    wins = sum(pair.relevant_score > pair.irrelevant_score for pair in pairs)
    losses = sum(pair.relevant_score < pair.irrelevant_score for pair in pairs)
    margin = sum(pair.relevant_score - pair.irrelevant_score for pair in pairs) / count
    if top <= RERANK_DEGENERATE_FLOOR:
        return "degenerate", f"no score above {RERANK_DEGENERATE_FLOOR:g} (highest {top:.3g})"
    if 2 * wins > count:
        return "healthy", f"relevant text first in {wins} of {count} pairs (margin {margin:+.2f})"
    if 2 * losses > count:
        return "inverted", f"irrelevant text first in {losses} of {count} pairs"
    ties = count - wins - losses
    return "not discriminating", f"relevant text first in {wins} of {count} pairs ({ties} ties)"


# -- probe clients ------------------------------------------------------------------------------


def _options(timeout: float, model: str, api_key: str | None) -> dict[str, Any]:
    """A probe client's model and key, its bounded timeout, one retry, its own cooldown."""
    return {
        "model": model,
        "api_key": api_key,
        "timeout": httpx.Timeout(timeout, connect=min(CONNECT_TIMEOUT, timeout)),
        "retry": _PROBE_RETRY,
        "cooldown": Cooldown(),
    }


_T = TypeVar("_T")


class _Closable(Protocol):
    def close(self) -> None: ...


_C = TypeVar("_C", bound=_Closable)


def _own_or_fresh(
    url: str | None, own: Callable[[], _T], fresh: Callable[[str], _C]
) -> AbstractContextManager[_T | _C]:
    """``fresh(url)``, closed afterwards, when the role has a service; else the vault's own
    (``own()``, asked for only then)."""
    if not url:
        return contextlib.nullcontext(own())
    return contextlib.closing(fresh(url))


def _embedder(models: Models, timeout: float) -> AbstractContextManager[Embedder]:
    """A fresh client for an embedding service (closed afterwards), else the vault's own."""
    from memtrove.models.openai_compat import HttpEmbedder

    s = models.settings
    fresh = partial(
        HttpEmbedder,
        dimensions=s.embed_dimensions,
        max_chars=s.embed_max_chars,
        batch_retry=_PROBE_RETRY,
        **_options(timeout, s.embed_model, s.embed_api_key),
    )
    return _own_or_fresh(s.embed_url, lambda: models.embedder, fresh)


def _llm(models: Models, timeout: float) -> AbstractContextManager[LLM]:
    from memtrove.models.openai_compat import HttpLLM

    s = models.settings
    options = _options(timeout, s.llm_model, s.llm_api_key)
    fresh = partial(HttpLLM, no_think=s.llm_no_think, **options)
    return _own_or_fresh(s.llm_url, lambda: models.llm, fresh)


def _reranker(models: Models, timeout: float) -> AbstractContextManager[Reranker]:
    from memtrove.models.openai_compat import HttpReranker

    s = models.settings
    fresh = partial(HttpReranker, **_options(timeout, s.rerank_model, s.rerank_api_key))
    return _own_or_fresh(s.rerank_url, lambda: models.reranker, fresh)


def _describe(identity: str, url: str | None) -> str:
    return f"{identity} at {url}" if url else f"{identity} (in process)"


_ROLES = {
    "embedder": (
        "MEMTROVE_EMBED_URL",
        "MEMTROVE_EMBED_MODEL",
        "embedding model at /v1/embeddings",
        "unset MEMTROVE_EMBED_URL to use the bundled wordllama embedder (then "
        "`memtrove embed --force`)",
    ),
    "llm": (
        "MEMTROVE_LLM_URL",
        "MEMTROVE_LLM_MODEL",
        "chat model at /v1/chat/completions",
        "unset MEMTROVE_LLM_URL to skip query expansion",
    ),
    "reranker": (
        "MEMTROVE_RERANK_URL",
        "MEMTROVE_RERANK_MODEL",
        "reranker at /v1/rerank",
        "unset MEMTROVE_RERANK_URL to skip reranking",
    ),
}


def service_fix(role: str, error: ModelError | None, url: str | None) -> str:
    """What to do about a failing ``role`` (embedder, llm, reranker) service at ``url``."""
    url_variable, model_variable, serves, fallback = _ROLES[role]
    if url is None:
        return "reinstall memtrove with its extras (pip install --force-reinstall memtrove)"
    if isinstance(error, ModelUnavailableError):
        return f"start the service at {url} or fix {url_variable}; or {fallback}"
    return f"check that {url} serves a working {serves} named by {model_variable}; or {fallback}"
