"""Typed query expansion: the LLM rewrites a query as keyword, semantic and answer variants.

Each output line is ``lex: ...`` (keywords, searched with BM25 only), ``vec: ...`` (a
rephrasing, searched with vectors only) or ``hyde: ...`` (a hypothetical answer passage,
vectors only). Anything else is ignored. An intent hint steers the prompt. Answers are cached
per model, prompt version and input; a failed generation (an error, or an answer without a
single variant line) yields no variants and is not cached.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memtrove.db.connection import Connection
from memtrove.models.protocols import LLM
from memtrove.retrieval.cache import cache_get, cache_key, cache_put

__all__ = ["EXPANSION_VERSION", "ExpandedQuery", "expand_query", "parse_expansion"]

EXPANSION_VERSION = "v1-typed"
MAX_VARIANTS = 6
MAX_VARIANT_CHARS = 500
_LINE = re.compile(r"^\s*[-*\d.)]*\s*(lex|vec|hyde)\s*:\s*(.+?)\s*$", re.I)


@dataclass(frozen=True)
class ExpandedQuery:
    """One variant of the query and the backend it is meant for."""

    kind: str  # "lex" | "vec" | "hyde"
    text: str


def build_prompt(query: str, intent: str | None) -> str:
    prompt = f"Expand this search query: {query}"
    if intent:
        prompt += f"\nQuery intent: {intent}"
    return prompt


def parse_expansion(answer: str, query: str) -> list[ExpandedQuery]:
    """The typed variants of an LLM answer, without duplicates or echoes of the query."""
    seen = {("lex", query.strip().lower()), ("vec", query.strip().lower())}
    variants: list[ExpandedQuery] = []
    for line in answer.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        kind, text = match.group(1).lower(), " ".join(match.group(2).split())
        text = text[:MAX_VARIANT_CHARS]
        if not text or (kind, text.lower()) in seen:
            continue
        seen.add((kind, text.lower()))
        variants.append(ExpandedQuery(kind, text))
        if len(variants) >= MAX_VARIANTS:
            break
    return variants


def expand_query(
    connection: Connection, llm: LLM, query: str, intent: str | None = None
) -> list[ExpandedQuery]:
    """Typed variants of ``query`` (cached); raises the model's error on failure."""
    key = cache_key("expand", EXPANSION_VERSION, llm.identity, query, intent or "")
    cached = cache_get(connection, key)
    if isinstance(cached, list):
        return [
            ExpandedQuery(str(item[0]), str(item[1]))
            for item in cached
            if isinstance(item, list) and len(item) == 2
        ]
    answer = llm.complete(build_prompt(query, intent), max_tokens=500, temperature=0.7)
    variants = parse_expansion(answer, query)
    if variants:  # an empty or unparseable answer is a failed generation: ask again next time
        cache_put(connection, {key: [[v.kind, v.text] for v in variants]})
    return variants
