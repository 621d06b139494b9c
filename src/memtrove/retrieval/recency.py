"""Questions about time: which ones ask for the newest work, and how they are ranked.

Two kinds (the README's "Composite scoring" has the evidence):

- **Pure recency**: "where were we?", "what was I doing yesterday?", "continue from last
  time". Nothing but time names what is wanted, so the spec's recency weights rank them
  (search 0.10, recency 0.70, confidence 0.20), handoffs, decisions and progress notes come
  first, the newest of those types join the candidates even when no word matches, and a
  request to pick up the last session puts its handoff first of all.
- **Topical recency**: "what changed recently in the deploy pipeline?", "latest status of
  the storage migration", "what cache do we use now?". A topic is named, so an unrelated
  fresh handoff must not win: relevance keeps half the weight (search 0.50, recency 0.40,
  confidence 0.10), in the weighted sum where age can overturn a better-matching old
  version. "Now", "current", "these days", "still" and "settled on" count here too: they
  ask for the live version of something that changed.

A question with topic words is topical; topic words are what is left after stopwords,
the time words themselves and generic work verbs ("do", "change", "work", "status").
"""

import functools
import re
from typing import NamedTuple

from memtrove.patterns import LazyPattern
from memtrove.retrieval.scoring import (
    CONTINUATION_TYPES,
    RECENCY_FIRST_TYPES,
    RECENCY_WEIGHTS,
    Weights,
    has_continuation_intent,
    has_recency_intent,
)
from memtrove.text import STOPWORDS, words

__all__ = [
    "CURRENT_PATTERNS",
    "TOPICAL_RECENCY_WEIGHTS",
    "RecencyPlan",
    "has_topic",
    "recency_plan",
]

TOPICAL_RECENCY_WEIGHTS = Weights(search=0.50, recency=0.40, confidence=0.10, blend=True)

CURRENT_PATTERNS: tuple[str, ...] = (
    r"now",
    r"current(?:ly)?",
    r"these\s+days",
    r"nowadays",
    r"at\s+the\s+moment",
    r"any\s*more",
    r"still",
    r"settled?\s+on",
    r"newest",
    r"up\s+to\s+date",
    r"leave\s+off",
)
_CURRENT = LazyPattern(r"\b(?:" + "|".join(CURRENT_PATTERNS) + r")\b", re.IGNORECASE)

# Words that say "recent" or "work" without naming a topic.
_TIME_WORDS = frozenset(
    """
    recent recently latest last newest session sessions time yesterday today tonight week
    month ago continue continuing left leave pick picked where were current currently now
    nowadays days moment anymore still settle settled lately earlier previous previously
    """.split()
)
_GENERIC_WORDS = frozenset(
    """
    doing done work working worked change changed changes happen happened happening status
    update updates updated new news going thing things stuff made make progress going
    """.split()
)


class RecencyPlan(NamedTuple):
    """How to rank a question about time (see the module docstring)."""

    weights: Weights
    first_types: tuple[str, ...] = ()
    lead_types: tuple[str, ...] = ()
    recent_candidates: bool = False

    @property
    def pure(self) -> bool:
        return self.recent_candidates


def has_topic(query: str) -> bool:
    """Whether ``query`` names something besides time and work in general."""
    for word in words(query):
        if len(word) < 2 or word in STOPWORDS or word in _TIME_WORDS or word in _GENERIC_WORDS:
            continue
        return True
    return False


@functools.lru_cache(maxsize=128)
def recency_plan(query: str) -> RecencyPlan | None:
    """The plan for a question about time, or None for any other question (cached: the
    hook asks for the same prompt's plan in lookback, discovery and ranking)."""
    recent = has_recency_intent(query)
    if not recent and _CURRENT.search(query) is None:
        return None
    if has_topic(query):
        return RecencyPlan(TOPICAL_RECENCY_WEIGHTS)
    return RecencyPlan(
        RECENCY_WEIGHTS,
        first_types=RECENCY_FIRST_TYPES,
        lead_types=CONTINUATION_TYPES if has_continuation_intent(query) else (),
        recent_candidates=True,
    )
