"""Causal links between the observations of a session, inferred without a model.

An observation that acts (a decision, bugfix, feature, change or refactor) is linked from
an earlier one that prompted it (a problem, discovery or decision) when the two share at
least two salient words and a Jaccard similarity of :data:`MIN_OVERLAP`: "the build fails
on Python 3.13" -> "pin Python 3.12 in CI". The edge runs cause -> effect, type ``causal``,
weighted by the similarity (at least 0.5). Earlier observations are the session's own,
those written before in this capture and in the last 7 days.
"""

from __future__ import annotations

from collections.abc import Sequence

from memtrove.capture.observations import Observation
from memtrove.capture.words import overlap, salient_words

__all__ = ["CAUSES", "EFFECTS", "MIN_OVERLAP", "causal_links"]

CAUSES = frozenset({"problem", "discovery", "decision"})
EFFECTS = frozenset({"decision", "bugfix", "feature", "change", "refactor"})
MIN_OVERLAP = 0.12
MIN_SHARED = 2
MAX_LINKS_PER_EFFECT = 3


def _words(observation: Observation) -> set[str]:
    return salient_words(" ".join((observation.title, observation.narrative, *observation.facts)))


def causal_links(
    earlier: Sequence[tuple[int, Observation]], new: Sequence[tuple[int, Observation]]
) -> list[tuple[int, int, float]]:
    """(cause doc id, effect doc id, weight) for each new effect and the earlier or new
    causes before it."""
    links: list[tuple[int, int, float]] = []
    pool = list(earlier)
    for doc_id, observation in new:
        if observation.type in EFFECTS:
            words = _words(observation)
            scored = []
            for cause_id, cause in pool:
                if cause_id == doc_id or cause.type not in CAUSES:
                    continue
                other = _words(cause)
                similarity = overlap(words, other)
                if len(words & other) >= MIN_SHARED and similarity >= MIN_OVERLAP:
                    scored.append((similarity, cause_id))
            scored.sort(reverse=True)
            for similarity, cause_id in scored[:MAX_LINKS_PER_EFFECT]:
                links.append((cause_id, doc_id, round(max(0.5, min(1.0, similarity * 2)), 3)))
        pool.append((doc_id, observation))
    return links
