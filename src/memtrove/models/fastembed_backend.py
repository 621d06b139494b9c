"""Optional local ONNX models through fastembed (``pip install 'memtrove[fastembed]'``).

fastembed downloads a model's weights on first use, so these backends suit users with
internet access; the embedded wordllama model remains the offline default. fastembed is
imported inside the constructors, never at module import, so memtrove runs without it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from memtrove.errors import ModelResponseError, ModelUnavailableError
from memtrove.models.openai_compat import normalize_rows, sigmoid
from memtrove.models.protocols import Vectors

__all__ = [
    "DEFAULT_FASTEMBED_MODEL",
    "DEFAULT_FASTEMBED_RERANKER",
    "INSTALL_HINT",
    "FastEmbedEmbedder",
    "FastEmbedReranker",
]

DEFAULT_FASTEMBED_MODEL = "BAAI/bge-small-en-v1.5"
DEFAULT_FASTEMBED_RERANKER = "Xenova/ms-marco-MiniLM-L-6-v2"
INSTALL_HINT = "fastembed is not installed: pip install 'memtrove[fastembed]'"


def _load_failure(model_name: str, error: Exception) -> ModelUnavailableError:
    message = " ".join(str(error).split()) or type(error).__name__
    return ModelUnavailableError(f"fastembed cannot load {model_name}: {message}")


class FastEmbedEmbedder:
    """A fastembed ``TextEmbedding`` model; identity ``fastembed:<model_name>``.

    Texts are embedded as given with ``embed`` (also for queries): prompt formatting is the
    caller's, as for every embedder. Raises :class:`ModelUnavailableError` when fastembed is
    missing or the model cannot be loaded (unknown name, download failure).
    """

    def __init__(
        self,
        model_name: str = DEFAULT_FASTEMBED_MODEL,
        *,
        cache_dir: str | None = None,
        batch_size: int = 64,
        input_style: str = "plain",
    ) -> None:
        try:
            from fastembed import TextEmbedding
        except ImportError as error:
            raise ModelUnavailableError(INSTALL_HINT) from error
        self.model_name = model_name
        self.input_style = input_style
        self._batch_size = batch_size
        self._dimensions: int | None = None
        self._lock = threading.Lock()
        try:
            self._model: Any = TextEmbedding(model_name=model_name, cache_dir=cache_dir)
        except Exception as error:  # fastembed raises ValueError, OSError, HTTP errors...
            raise _load_failure(model_name, error) from error

    @property
    def identity(self) -> str:
        return f"fastembed:{self.model_name}"

    @property
    def dimensions(self) -> int:
        """The vector size, learnt by embedding one short text on first use."""
        if self._dimensions is None:
            self.embed_documents(["memtrove dimension probe"])
        assert self._dimensions is not None
        return self._dimensions

    def _fail(self, problem: str) -> ModelResponseError:
        return ModelResponseError(f"fastembed model {self.model_name} {problem}")

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """One L2-normalised float32 row per text, in order."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:  # ONNX sessions are not safe to share across threads here
            rows = list(self._model.embed(list(texts), batch_size=self._batch_size))
        array = np.asarray(rows, dtype=np.float64)
        if array.ndim != 2 or array.shape[0] != len(texts):
            raise self._fail(f"returned shape {array.shape} for {len(texts)} texts")
        if not np.all(np.isfinite(array)):
            raise self._fail("returned a non-finite value")
        if self._dimensions is None:
            self._dimensions = int(array.shape[1])
        return normalize_rows(array, self._fail)

    def embed_query(self, text: str) -> Vectors:
        """The vector of ``text`` as given, shape ``(dimensions,)``."""
        vector: Vectors = self.embed_documents([text])[0]
        return vector


class FastEmbedReranker:
    """A fastembed ``TextCrossEncoder``; identity ``fastembed:<model_name>``.

    Cross-encoders return logits, so every score goes through the logistic sigmoid.
    """

    def __init__(
        self,
        model_name: str = DEFAULT_FASTEMBED_RERANKER,
        *,
        cache_dir: str | None = None,
        batch_size: int = 32,
    ) -> None:
        try:
            from fastembed.rerank.cross_encoder import TextCrossEncoder
        except ImportError as error:
            raise ModelUnavailableError(INSTALL_HINT) from error
        self.model_name = model_name
        self._batch_size = batch_size
        self._lock = threading.Lock()
        try:
            self._model: Any = TextCrossEncoder(model_name=model_name, cache_dir=cache_dir)
        except Exception as error:
            raise _load_failure(model_name, error) from error

    @property
    def identity(self) -> str:
        return f"fastembed:{self.model_name}"

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score in [0, 1] per text, in order."""
        if not texts:
            return []
        with self._lock:
            logits = [
                float(score)
                for score in self._model.rerank(query, list(texts), batch_size=self._batch_size)
            ]
        if len(logits) != len(texts):
            raise ModelResponseError(
                f"fastembed model {self.model_name} returned {len(logits)} scores "
                f"for {len(texts)} texts"
            )
        if not all(np.isfinite(logits)):
            raise ModelResponseError(
                f"fastembed model {self.model_name} returned a non-finite score"
            )
        return [sigmoid(logit) for logit in logits]
