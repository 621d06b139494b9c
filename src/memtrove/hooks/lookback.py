"""Multi-turn lookback: the retrieval query of a follow-up borrows earlier prompts.

"Do the same for the billing service" carries its intent in the previous turn, so the
discovery legs of ``context-surfacing`` search for the current prompt plus up to two
prompts of the same session from the last ten minutes (concepts/architecture, v0.8.1).
Only discovery sees this combined query (BM25 and vector legs, expansion); the file-path
supplements, composite scoring, snippets, routing hints, recall attribution, the dedupe
and the heartbeat check all use the raw current prompt.

An earlier prompt joins only when it belongs to the same thread (:func:`select_priors`):
the current prompt is a follow-up, or it shares a salient term with the prior. Walking
back stops at the first prior that is not connected: the second prior joins only when the
first did and the chain goes on (the first was itself a follow-up, or the two share terms).

How much a joined prior counts (:func:`lookback_queries`): for a follow-up (it opens like
one, "and what about...", "why not...", "do the same for...", or names at most
FOLLOW_UP_TERMS salient terms of its own) the combined query is the retrieval query, as
in the reference. Any other prompt is searched on its own, and the combined query adds a
second keyword leg whose hits count at a discount (``discovery.LOOKBACK_SHARE``): a prior
that only shares a word cannot push the current prompt's own matches out. Unrelated
prompts that come one after another would otherwise pull each other's documents into
discovery (the README's "Composite scoring" has the measurements).

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

import functools
import re
from collections.abc import Sequence

from memtrove.patterns import LazyPattern
from memtrove.retrieval.recency import recency_plan
from memtrove.retrieval.stemming import porter_stemmer
from memtrove.text import STOPWORDS, words

__all__ = [
    "FOLLOW_UP_TERMS",
    "LOOKBACK",
    "LOOKBACK_SECONDS",
    "MAX_COMBINED_CHARS",
    "SEPARATOR",
    "combine_query",
    "is_follow_up",
    "lookback_queries",
    "salient_terms",
    "select_priors",
]

LOOKBACK = 2
LOOKBACK_SECONDS = 600
MAX_COMBINED_CHARS = 2000
SEPARATOR = "\n\n"
FOLLOW_UP_TERMS = 1  # a prompt naming this few terms of its own is a follow-up
MIN_SHARED_TERMS = 1
MIN_TERM_CHARS = 3
TERM_CHARS = 2000
_STEMMER = porter_stemmer()  # Porter alone, not snowballstemmer's 30 languages (~20 ms)
_FOLLOW_UP = LazyPattern(
    r"(?:and|also|but|so|then|or|ok(?:ay)?|what about|how about|and what|why not|same|"
    r"do the same|do that|the same|it|its|it's|that|this|these|those|they|them|there)\b",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=256)
def salient_terms(text: str) -> frozenset[str]:
    """Stemmed content words of ``text`` (no stopwords, at least three characters; the
    first TERM_CHARS characters decide, which is plenty to tell threads apart)."""
    candidates = {
        word
        for word in words(text[:TERM_CHARS])
        if len(word) >= MIN_TERM_CHARS and word not in STOPWORDS and not word.isdigit()
    }
    return frozenset(_stem(word) for word in candidates)


@functools.lru_cache(maxsize=4096)
def _stem(word: str) -> str:
    return str(_STEMMER.stemWord(word))


def is_follow_up(text: str) -> bool:
    """A prompt that leans on the one before: it opens like a follow-up, or names at most
    FOLLOW_UP_TERMS salient terms of its own."""
    return _FOLLOW_UP.match(text.strip()) is not None or len(salient_terms(text)) <= (
        FOLLOW_UP_TERMS
    )


def _connected(later: str, earlier: str) -> bool:
    """Whether ``earlier`` is context for ``later``: a follow-up, or shared terms."""
    if is_follow_up(later):
        return True
    shared = salient_terms(later) & salient_terms(earlier)
    return len(shared) >= MIN_SHARED_TERMS


def select_priors(current: str, recent: Sequence[str], lookback: int = LOOKBACK) -> list[str]:
    """The first ``lookback`` of ``recent`` (newest first) that continue the current
    prompt's thread (see the module docstring), skipping blanks and repeats of it.

    ``Vault.sessions.recent_queries`` does not filter the current prompt out (the reference
    does, in SQL), so the hook asks for a few more rows than it needs and drops them here.
    """
    wanted = current.strip()
    priors: list[str] = []
    later = current
    for text in recent:
        if not text or not text.strip() or text.strip() == wanted:
            continue
        if not _connected(later, text):
            break
        priors.append(text)
        later = text
        if len(priors) == lookback:
            break
    return priors


def lookback_queries(current: str, recent: Sequence[str]) -> tuple[str, str | None]:
    """(the retrieval query, a second query for a discounted keyword leg or None).

    A question about the session itself ("where were we?") borrows nothing: it asks for the
    newest work, not for more of the last prompt's topic."""
    plan = recency_plan(current)
    if plan is not None and plan.pure:
        return current, None
    priors = select_priors(current, recent)
    if not priors:
        return current, None
    combined = combine_query(current, priors)
    if is_follow_up(current):
        return combined, None
    return current, combined


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
