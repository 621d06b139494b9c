"""The embedded default embedder: WordLlama with the weights bundled in its wheel.

No network and no download, ever: the model loads from the installed package folder with
downloads disabled. Loading takes about half a second, so it happens on first use.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memtrove.errors import ModelUnavailableError
from memtrove.models.protocols import Vectors

__all__ = ["WORDLLAMA_CONFIG", "WordLlamaEmbedder"]

WORDLLAMA_CONFIG = "l2_supercat"
MAX_TOKENS = 1024
_SLICE_TOKENS = 1 << 16


class WordLlamaEmbedder:
    """Static token embeddings, average-pooled: very fast, 256 dimensions, bag-of-words-like.

    It has no notion of instructions, so documents and queries are embedded as plain text
    (``input_style = "plain"``): a prompt prefix would only add noise words to the average,
    and for the same reason stopwords are left out of document inputs. Queries are best
    embedded with :meth:`embed_terms` and IDF weights (the retriever does this).
    """

    input_style = "plain"

    def __init__(self, dimensions: int = 256) -> None:
        self._dimensions = dimensions
        self._model: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    @property
    def identity(self) -> str:
        return f"wordllama:{WORDLLAMA_CONFIG}"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._model is None:
                try:
                    import wordllama
                    from wordllama import WordLlama

                    self._model = WordLlama.load(
                        config=WORDLLAMA_CONFIG,
                        cache_dir=Path(wordllama.__file__).parent,
                        disable_download=True,
                        dim=self._dimensions,
                    )
                    # Our own pooling needs unpadded token ids; the model is ours alone.
                    self._tokenizer = self._model.tokenizer
                    self._tokenizer.no_padding()
                    self._tokenizer.enable_truncation(MAX_TOKENS)
                except Exception as error:  # import error, missing bundled files
                    message = " ".join(str(error).split()) or type(error).__name__
                    raise ModelUnavailableError(
                        f"the embedded wordllama model cannot be loaded: {message}"
                    ) from error
            return self._model, self._tokenizer

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """One L2-normalised row per text (a text with no tokens gives a zero row).

        Token vectors are averaged per text without padding, in slices of at most
        ``_SLICE_TOKENS`` tokens, so long texts cost memory in proportion to their length
        rather than to the longest text of a batch. Texts are cut at ``MAX_TOKENS``.
        """
        if not texts:
            return np.zeros((0, self._dimensions), dtype=np.float32)
        model, tokenizer = self._load()
        table = model.embedding
        encodings = tokenizer.encode_batch(list(texts), add_special_tokens=False)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(texts))
        sums = np.zeros((len(texts), table.shape[1]), dtype=np.float32)
        if lengths.sum():
            ids = np.concatenate([np.asarray(e.ids, dtype=np.int64) for e in encodings])
            np.clip(ids, 0, table.shape[0] - 1, out=ids)
            owners = np.repeat(np.arange(len(texts)), lengths)
            for start in range(0, len(ids), _SLICE_TOKENS):
                part = owners[start : start + _SLICE_TOKENS]
                starts = np.flatnonzero(np.r_[True, part[1:] != part[:-1]])
                gathered = table[ids[start : start + _SLICE_TOKENS]]
                sums[part[starts]] += np.add.reduceat(gathered, starts, axis=0)
        return _normalise(sums)

    def embed_query(self, text: str) -> Vectors:
        row: Vectors = self.embed_documents([text])[0]
        return row

    def embed_terms(self, terms: Sequence[tuple[str, float]]) -> Vectors:
        """A query vector as the weighted mean of its words' token vectors.

        A static-embedding model averages every token alike, so a question's vector drifts
        towards its common words (names, "what", "did"). Weighting each word, typically by
        its IDF in the vault, keeps the vector on what distinguishes the question. Words of
        weight 0 are left out; if nothing is left, the plain mean is used.
        """
        model, tokenizer = self._load()
        table = model.embedding
        total = np.zeros(table.shape[1], dtype=np.float32)
        plain = np.zeros(table.shape[1], dtype=np.float32)
        weight_sum = 0.0
        for word, weight in terms:
            ids = np.clip(
                np.asarray(tokenizer.encode(word, add_special_tokens=False).ids, dtype=np.int64),
                0,
                table.shape[0] - 1,
            )
            if not len(ids):
                continue
            vector = table[ids].sum(axis=0)
            plain += vector
            if weight > 0 and np.isfinite(weight):
                total += vector * np.float32(weight)
                weight_sum += weight
        chosen = total if weight_sum > 0 else plain
        row: Vectors = _normalise(chosen.reshape(1, -1))[0]
        return row


def _normalise(rows: Vectors) -> Vectors:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    result: Vectors = (rows / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return result
