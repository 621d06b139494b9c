"""A query's vector in the first space, computed the way its embedder reads best.

Static-vector models (wordllama) get an IDF-weighted mean of the query's words, the IDF from
the vault's own vocabulary: on LoCoMo this beats embedding the raw text. Other models embed
the query in their prompt format, and a model service's answer is cached in the vault like
its other answers, so a repeated query costs no round trip.
"""

from __future__ import annotations

import math

from memtrove.db.connection import Connection
from memtrove.models.protocols import Embedder, Vectors
from memtrove.retrieval.fts import document_frequencies
from memtrove.text import STOPWORDS, words

__all__ = ["query_vector"]


def query_vector(connection: Connection, embedder: Embedder, query: str) -> Vectors:
    """The query's vector from ``embedder`` (IDF-weighted words for static models)."""
    embed_terms = getattr(embedder, "embed_terms", None)
    if embed_terms is None:
        from memtrove.retrieval.vectors import format_query_input

        return _cached(connection, embedder, format_query_input(embedder, query))
    terms = [word for word in words(query) if word not in STOPWORDS]
    if not terms:
        return embedder.embed_query(query)
    total, frequency = document_frequencies(connection, list(dict.fromkeys(terms)))
    weights = [
        (word, max(0.0, math.log((total - frequency[word] + 0.5) / (frequency[word] + 0.5))))
        for word in terms
    ]
    vector: Vectors = embed_terms(weights)
    return vector


def _cached(connection: Connection, embedder: Embedder, text: str) -> Vectors:
    """A model service's query vector, cached in the vault like other model answers."""
    import numpy as np

    from memtrove.retrieval.cache import cache_get, cache_key, cache_put

    key = cache_key("query-vector", embedder.identity, str(embedder.dimensions), text)
    cached = cache_get(connection, key)
    if isinstance(cached, list) and len(cached) == embedder.dimensions:
        try:
            vector: Vectors = np.asarray(cached, dtype=np.float32)
        except (TypeError, ValueError):
            vector = np.zeros(0, dtype=np.float32)
        if vector.shape == (embedder.dimensions,) and np.all(np.isfinite(vector)):
            return vector
    vector = embedder.embed_query(text)
    cache_put(connection, {key: [float(value) for value in vector]})
    return vector
