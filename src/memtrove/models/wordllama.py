"""The embedded default embedder: WordLlama with the weights bundled in its wheel.

No network and no download, ever: the tokenizer and the embedding table are read from the
installed package's folder (without importing the package, which costs more than the
model). Loading takes about 0.1 s, and happens on first use.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtrove.errors import ModelUnavailableError
from memtrove.models.protocols import Vectors
from memtrove.models.wordllama_terms import TableRows, TermTokenizer
from memtrove.text import STOPWORDS

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


__all__ = ["WORDLLAMA_CONFIG", "WordLlamaEmbedder"]

WORDLLAMA_CONFIG = "l2_supercat"
_TENSOR = "embedding.weight"


Span = tuple[int, int, str]
"""A fragment as (start, end) character offsets into a body, and a prefix (label or title)."""


def _bundled_root() -> Path:
    """The installed ``wordllama`` package's folder, found without running the package."""
    from importlib.util import find_spec

    spec = find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the wordllama package is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def _tokenizer_file(root: Path) -> Path:
    return root / "tokenizers" / f"{WORDLLAMA_CONFIG}_tokenizer_config.json"


def _weights_file(root: Path, dimensions: int) -> Path:
    return root / "weights" / f"{WORDLLAMA_CONFIG}_{dimensions}.safetensors"


def _read_bundled(dimensions: int) -> tuple[Any, Any]:
    """The tokenizer and the embedding table bundled in the ``wordllama`` wheel, read
    directly: importing the package itself costs ~0.4 s (it loads an HTTP client and
    training code) for nothing a lookup table needs. The files are the ones
    ``WordLlama.load`` reads with downloads disabled."""
    from safetensors import safe_open
    from tokenizers import Tokenizer

    root = _bundled_root()
    tokenizer = Tokenizer.from_file(str(_tokenizer_file(root)))
    with safe_open(str(_weights_file(root, dimensions)), framework="np", device="cpu") as handle:
        table = handle.get_tensor(_TENSOR)
    return tokenizer, table


def _lower(text: str) -> str:
    """Lowercase without changing the length, so token offsets still point into ``text``."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


class WordLlamaEmbedder:
    """Static token embeddings, average-pooled: very fast, 256 dimensions, bag-of-words-like.

    Texts are lowercased, and stopword and punctuation tokens are left out of the average:
    averaged in, they only pull every vector towards the same point (LoCoMo dev, wordllama
    alone: R@10 .413 with them, .514 without). It has no notion of instructions, so no
    prompt prefix is added (``input_style = "plain"``). Queries are best embedded with
    :meth:`embed_terms` and IDF weights (the retriever does this); a document's fragments
    with :meth:`embed_spans`, which tokenizes each body once.
    """

    input_style = "plain"

    def __init__(self, dimensions: int = 256, *, cache_folder: str | None = None) -> None:
        import numpy as np

        self._dimensions = dimensions
        self._cache_folder = cache_folder
        self._light: tuple[TermTokenizer, TableRows] | None = None
        self._light_failed = False
        self._model: Any = None
        self._tokenizer: Any = None
        self._half: Any = np.zeros((0, dimensions), dtype=np.float16)  # as stored
        self._table: Vectors = np.zeros((0, dimensions), dtype=np.float32)
        self._skip: npt.NDArray[np.bool_] = np.zeros(0, dtype=np.bool_)
        self._lock = threading.Lock()

    @property
    def identity(self) -> str:
        return f"wordllama:{WORDLLAMA_CONFIG}"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def _load(self) -> Any:
        import numpy as np

        with self._lock:
            if self._model is None:
                try:
                    tokenizer, table = _read_bundled(self._dimensions)
                except Exception as error:  # a missing package, missing or broken files
                    message = " ".join(str(error).split()) or type(error).__name__
                    raise ModelUnavailableError(
                        f"the embedded wordllama model cannot be loaded: {message}"
                    ) from error
                # Our own pooling needs unpadded, untruncated token ids and offsets.
                tokenizer.no_padding()
                tokenizer.no_truncation()
                self._half = np.asarray(table)
                self._tokenizer = tokenizer
                self._model = True
            return self._tokenizer

    def _documents(self) -> Any:
        """The tokenizer, with what pooling documents needs and a query does not: the
        table in float32 (converting all of it costs a one-shot query ~20 ms) and the mask
        of tokens left out of averages (~30 ms)."""
        import numpy as np

        tokenizer = self._load()
        with self._lock:
            if len(self._table) != len(self._half):
                self._table = np.ascontiguousarray(self._half, dtype=np.float32)
                self._skip = _skip_mask(tokenizer, self._table.shape[0])
        return tokenizer

    def _ids(self, encoding: Any) -> npt.NDArray[np.int64]:
        import numpy as np

        ids = np.asarray(encoding.ids, dtype=np.int64)
        np.clip(ids, 0, self._half.shape[0] - 1, out=ids)
        return ids

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """One L2-normalised row per text (a text with no content words gives a zero row)."""
        import numpy as np

        if not texts:
            return np.zeros((0, self._dimensions), dtype=np.float32)
        tokenizer = self._documents()
        encodings = tokenizer.encode_batch(
            [_lower(text) for text in texts], add_special_tokens=False
        )
        sums = np.zeros((len(texts), self._table.shape[1]), dtype=np.float32)
        for row, encoding in enumerate(encodings):
            ids = self._ids(encoding)
            ids = ids[~self._skip[ids]]
            if len(ids):
                sums[row] = self._table[ids].sum(axis=0)
        return _normalise(sums)

    def embed_query(self, text: str) -> Vectors:
        row: Vectors = self.embed_documents([text])[0]
        return row

    def embed_spans(self, items: Sequence[tuple[str, Sequence[Span]]]) -> list[Vectors]:
        """Vectors of fragments given as spans of their bodies: one array per body.

        Each body is tokenized once; a fragment's vector is the mean of the content tokens
        starting inside its span plus those of its prefix: nearly the vector of
        ``prefix + "\\n" + body[start:end]`` embedded alone (a word at a span's start may be
        split differently in context), for a fraction of the work.
        """
        import numpy as np

        tokenizer = self._documents()
        bodies = tokenizer.encode_batch(
            [_lower(body) for body, _ in items], add_special_tokens=False
        )
        prefixes = sorted({prefix for _, spans in items for *_, prefix in spans if prefix})
        prefix_sums = dict(zip(prefixes, self._sums(prefixes), strict=True))
        zero = np.zeros(self._table.shape[1], dtype=np.float32)
        out: list[Vectors] = []
        for (_, spans), encoding in zip(items, bodies, strict=True):
            ids = self._ids(encoding)
            starts = np.fromiter((o[0] for o in encoding.offsets), dtype=np.int64, count=len(ids))
            keep = ~self._skip[ids]
            ids, starts = ids[keep], starts[keep]
            rows = np.zeros((len(spans), self._table.shape[1]), dtype=np.float32)
            if len(ids):
                bounds = [
                    (
                        int(np.searchsorted(starts, a, "left")),
                        int(np.searchsorted(starts, b, "left")),
                    )
                    for a, b, _ in spans
                ]
                cuts = sorted({i for pair in bounds for i in pair if i < len(ids)} | {0})
                segments = np.add.reduceat(self._table[ids], cuts, axis=0)
                position = {cut: n for n, cut in enumerate(cuts)}
                for row, (first, last) in enumerate(bounds):
                    if last > first:
                        end = position.get(last, len(cuts))
                        rows[row] = segments[position[first] : end].sum(axis=0)
            for row, (*_, prefix) in enumerate(spans):
                rows[row] += prefix_sums.get(prefix, zero)
            out.append(_normalise(rows))
        return out

    def _sums(self, texts: Sequence[str]) -> list[Vectors]:
        import numpy as np

        if not texts:
            return []
        encodings = self._tokenizer.encode_batch(
            [_lower(t) for t in texts], add_special_tokens=False
        )
        sums: list[Vectors] = []
        for encoding in encodings:
            ids = self._ids(encoding)
            ids = ids[~self._skip[ids]]
            sums.append(
                self._table[ids].sum(axis=0)
                if len(ids)
                else np.zeros(self._table.shape[1], np.float32)
            )
        return sums

    def embed_terms(self, terms: Sequence[tuple[str, float]]) -> Vectors:
        """A query vector as the weighted mean of its words' token vectors.

        A static-embedding model averages every token alike, so a question's vector drifts
        towards its common words (names, "what", "did"). Weighting each word, typically by
        its IDF in the vault, keeps the vector on what distinguishes the question. Words of
        weight 0 are left out; if nothing is left, the plain mean is used.
        """
        import numpy as np

        total = np.zeros(self._dimensions, dtype=np.float32)
        plain = np.zeros(self._dimensions, dtype=np.float32)
        weight_sum = 0.0
        for word, weight in terms:
            vector = self._word_sum(_lower(word))
            if vector is None:
                continue
            plain += vector
            if weight > 0 and np.isfinite(weight):
                total += vector * np.float32(weight)
                weight_sum += weight
        chosen = total if weight_sum > 0 else plain
        row: Vectors = _normalise(chosen.reshape(1, -1))[0]
        return row

    def _word_sum(self, word: str) -> Vectors | None:
        """The float32 sum of a word's token rows (None when it has no tokens). A process
        that has not loaded the model (a one-shot query) tokenizes the word itself and
        reads only its rows (:mod:`memtrove.models.wordllama_terms`): the same ids, the
        same rows, the same sum, without loading the tokenizer and the table."""
        import numpy as np

        if self._model is None:
            light = self._light_parts()
            if light is not None:
                tokens, rows = light
                ids = tokens.ids(word)
                if ids is not None:
                    if not ids:
                        return None
                    try:
                        data = rows.read(ids)
                    except (OSError, ValueError):
                        data = b""
                    if data:
                        half = np.frombuffer(data, dtype=np.float16).reshape(len(ids), -1)
                        summed: Vectors = half.astype(np.float32).sum(axis=0)
                        return summed
        tokenizer = self._load()
        ids_array = self._ids(tokenizer.encode(word, add_special_tokens=False))
        if not len(ids_array):
            return None
        vector: Vectors = self._half[ids_array].astype(np.float32).sum(axis=0)
        return vector

    def _light_parts(self) -> tuple[TermTokenizer, TableRows] | None:
        with self._lock:
            if self._light is None and not self._light_failed:
                try:
                    root = _bundled_root()
                    rows = TableRows(_weights_file(root, self._dimensions), _TENSOR)
                    if rows.width != self._dimensions:
                        raise ValueError("another width")
                    self._light = (TermTokenizer(_tokenizer_file(root), self._cache_folder), rows)
                except Exception:  # a missing package or files: the model says why
                    self._light_failed = True
            return self._light


def _skip_mask(tokenizer: Any, size: int) -> npt.NDArray[np.bool_]:
    """Vocabulary ids left out of averages: stopwords and tokens without a letter or digit."""
    import numpy as np

    skip = np.zeros(size, dtype=np.bool_)
    vocabulary: dict[str, int] = tokenizer.get_vocab()
    for token, index in vocabulary.items():
        if 0 <= index < size and not any(char.isalnum() for char in token):
            skip[index] = True
    for word in STOPWORDS:
        ids = tokenizer.encode(word, add_special_tokens=False).ids
        if len(ids) == 1 and 0 <= ids[0] < size:
            skip[ids[0]] = True
    return skip


def _normalise(rows: Vectors) -> Vectors:
    import numpy as np

    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    result: Vectors = (rows / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return result
