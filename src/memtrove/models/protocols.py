"""What memtrove needs from a model, whatever serves it.

Every backend names its *identity*: a stable string that says which model produced a vector
or a score (``wordllama:l2_supercat``, ``http:<model>``). Vectors of one identity and
dimension form an *embedding space*; the vault never mixes two spaces.

Implementations validate what they return: vectors are finite, of the advertised dimension and
L2-normalised; rerank scores are finite and in [0, 1]. A service that answers otherwise raises
:class:`~memtrove.errors.ModelResponseError`; one that cannot be reached raises
:class:`~memtrove.errors.ModelUnavailableError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

__all__ = ["LLM", "Embedder", "Reranker", "Vectors"]

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]
    """A 2-d float32 array, one L2-normalised row per text (1-d for a single query)."""
else:  # numpy loads with the first vector, not with every import of memtrove
    Vectors = Any


@runtime_checkable
class Embedder(Protocol):
    """Turns text into vectors of one space."""

    @property
    def identity(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """One row per text, in order; shape ``(len(texts), dimensions)``."""
        ...

    def embed_query(self, text: str) -> Vectors:
        """The vector of a search query; shape ``(dimensions,)``."""
        ...


@runtime_checkable
class Reranker(Protocol):
    """Scores how well each text answers a query (a cross-encoder)."""

    @property
    def identity(self) -> str: ...

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score in [0, 1] per text, in order."""
        ...


@runtime_checkable
class LLM(Protocol):
    """A chat model reached through one prompt and one answer."""

    @property
    def identity(self) -> str: ...

    def complete(self, prompt: str, *, max_tokens: int = 150, temperature: float = 0.0) -> str:
        """The model's answer text."""
        ...
