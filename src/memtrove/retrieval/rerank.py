"""Cross-encoder reranking with a cache: identical texts are scored once.

The rerank query is the intent (when given) followed by the query. Scores are cached per
reranker identity, query and text, so repeating a search costs no model calls; an answer
whose scores are all near zero (a degenerate reranker) is not cached.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from memtrove.db.connection import Connection
from memtrove.errors import ModelResponseError
from memtrove.models.protocols import Reranker
from memtrove.retrieval.cache import cache_get, cache_key, cache_put
from memtrove.retrieval.fusion import RERANK_DEGENERATE_FLOOR
from memtrove.text import sha256_hex

__all__ = ["rerank_query", "rerank_texts"]


def rerank_query(query: str, intent: str | None) -> str:
    return f"{intent}\n\n{query}" if intent else query


def rerank_texts(
    connection: Connection, reranker: Reranker, query: str, texts: Mapping[int, str]
) -> dict[int, float]:
    """Scores in [0, 1] for each key's text; raises the model's error on failure."""
    by_text: dict[str, list[int]] = {}
    for key, text in texts.items():
        by_text.setdefault(text, []).append(key)
    cache_keys = {
        text: cache_key(
            "rerank",
            reranker.identity,
            query,
            sha256_hex(text.encode("utf-8", "surrogatepass")),
        )
        for text in by_text
    }
    scores: dict[str, float] = {}
    for text, entry in cache_keys.items():
        cached = cache_get(connection, entry)
        if isinstance(cached, (int, float)) and math.isfinite(cached):
            scores[text] = float(cached)
    missing = [text for text in by_text if text not in scores]
    if missing:
        fresh = reranker.rerank(query, missing)
        if len(fresh) != len(missing):
            raise ModelResponseError(
                f"the reranker returned {len(fresh)} scores for {len(missing)} texts"
            )
        for text, score in zip(missing, fresh, strict=True):
            if not math.isfinite(score):
                raise ModelResponseError("the reranker returned a non-finite score")
            scores[text] = min(1.0, max(0.0, float(score)))
        # All-near-zero answers are what a broken reranker gives (the pipeline then falls back
        # to the fused order); cached, they would outlive the repair of the reranker.
        if any(scores[text] > RERANK_DEGENERATE_FLOOR for text in missing):
            cache_put(connection, {cache_keys[text]: scores[text] for text in missing})
    return {key: scores[text] for text, members in by_text.items() for key in members}
