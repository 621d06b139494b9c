"""Salient words of short texts, and how much two texts share: what causal links,
contradiction candidates and reference detection compare."""

from __future__ import annotations

import re

__all__ = ["STOPWORDS", "overlap", "salient_words"]

_WORD = re.compile(r"[^\W_]+(?:[-_.][^\W_]+)*")
STOPWORDS = frozenset(
    """
    a an the and or but not no nor for of to in on at by with from into onto over under
    is are was were be been being am do does did done doing have has had having will would
    shall should can could may might must it its this that these those there here then than
    so as if when while because about after before again also just only very more most
    some any all each every other such own same too we you they he she i me my our your
    their them us his her what which who whom whose why how where use using used now new
    let lets let's i'll we'll i've we've it's don't doesn't isn't can't won't
    """.split()
)


def salient_words(text: str, minimum: int = 3) -> set[str]:
    """Lowercase words of at least ``minimum`` characters that are not stopwords."""
    return {
        word
        for word in (match.group(0).lower() for match in _WORD.finditer(text))
        if len(word) >= minimum and word not in STOPWORDS and not word.isdigit()
    }


def overlap(first: set[str], second: set[str]) -> float:
    """Jaccard similarity of two word sets (0 when either is empty)."""
    if not first or not second:
        return 0.0
    return len(first & second) / len(first | second)
