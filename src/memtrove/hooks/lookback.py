"""Multi-turn lookback: the retrieval query of a short follow-up borrows earlier prompts.

"Do the same for the billing service" carries its intent in the previous turn, so the
discovery legs of ``context-surfacing`` search for the current prompt plus up to two
prompts of the same session from the last ten minutes (concepts/architecture, v0.8.1).
Only discovery sees this combined query (BM25 and vector legs, expansion); the file-path
supplements, composite scoring, snippets, routing hints, recall attribution, the dedupe
and the heartbeat check all use the raw current prompt.

Layout, newest first with blank lines between segments::

    <current prompt>

    <newest prior>

    <older prior>

Past ``max_chars`` older priors are dropped one at a time; the current prompt is always
kept verbatim, unless it alone exceeds ``max_chars`` (then it is cut and has no priors).
Without priors the query is the current prompt unchanged (the gates already cut it to
10,000 characters).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "LOOKBACK",
    "LOOKBACK_SECONDS",
    "MAX_COMBINED_CHARS",
    "SEPARATOR",
    "combine_query",
    "select_priors",
]

LOOKBACK = 2
LOOKBACK_SECONDS = 600
MAX_COMBINED_CHARS = 2000
SEPARATOR = "\n\n"


def select_priors(current: str, recent: Sequence[str], lookback: int = LOOKBACK) -> list[str]:
    """The first ``lookback`` of ``recent`` (newest first) that are not the current prompt.

    The reference filters the current prompt out in SQL, so duplicates of it cannot eat
    the window; ``Vault.recent_queries`` has no such filter, so the hook asks for a few
    more rows than it needs and drops them here. (The dedupe gate skips a prompt repeated
    within ten minutes, so the current prompt rarely appears among recent ones at all.)
    """
    wanted = current.strip()
    priors: list[str] = []
    for text in recent:
        if not text or not text.strip() or text.strip() == wanted:
            continue
        priors.append(text)
        if len(priors) == lookback:
            break
    return priors


def combine_query(current: str, priors: Sequence[str], max_chars: int = MAX_COMBINED_CHARS) -> str:
    """The retrieval query: ``current``, then ``priors`` newest first, current-first cut."""
    if not priors or not current:
        return current  # nothing to combine: discovery sees the prompt as the gates left it
    if len(current) >= max_chars:
        return current[:max_chars]
    parts = [current]
    used = len(current)
    for prior in priors:
        cost = len(SEPARATOR) + len(prior)
        if used + cost > max_chars:
            break
        parts.append(prior)
        used += cost
    return SEPARATOR.join(parts)
