"""Comparing entity names: how alike two names are as strings, and the checks that keep
close strings apart when they name different things (numbers, words)."""

from __future__ import annotations

import re

__all__ = [
    "entity_id",
    "names_differ",
    "numbers_differ",
    "same_word",
    "similarity",
    "slug",
    "words_differ",
]

_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)
_DIGITS = re.compile(r"\d+")


def similarity(a: str, b: str) -> float:
    from rapidfuzz.distance import Levenshtein

    return float(Levenshtein.normalized_similarity(a.lower(), b.lower()))


def numbers_differ(a: str, b: str) -> bool:
    return _DIGITS.findall(a) != _DIGITS.findall(b)


def names_differ(a: str, b: str, *, person: bool) -> bool:
    """Whether two names never merge however alike they are: their numbers differ, or (but
    for people's names) their words do."""
    return numbers_differ(a, b) or (not person and words_differ(a, b))


def words_differ(a: str, b: str) -> bool:
    """Whether two names close as strings still name different things word by word: a word
    of one is neither a word of the other, nor its start (``Postgres``, ``PostgreSQL``;
    ``runner``, ``runners``), nor one typo away from it (``Kubernets``). Long names that
    share most letters are told apart this way: ``ECONNRESET`` and ``ECONNREFUSED``,
    ``upgrade_row`` and ``upgrade_pool``, ``web/report/spike.go`` and
    ``web/report/nonce.go``. Names of more or fewer words are compared run together, where
    only a plural may lengthen one (``Redis cluster``, ``Redisclusters``; not
    ``swallow_batch`` and ``swallow_batch_dns``)."""
    first = [word for word in _NON_WORD.split(a.lower().replace("_", " ")) if word]
    second = [word for word in _NON_WORD.split(b.lower().replace("_", " ")) if word]
    if len(first) != len(second):
        return not same_word("".join(first), "".join(second), longer_by=2)
    return not all(same_word(x, y) for x, y in zip(first, second, strict=True))


def same_word(x: str, y: str, longer_by: int | None = None) -> bool:
    """Whether ``y`` is ``x``, begins it or begins with it (by at most ``longer_by`` more
    letters when given), or is one typo from it (two in words of ten letters or more)."""
    if x == y:
        return True
    if (x.startswith(y) or y.startswith(x)) and (
        longer_by is None or abs(len(x) - len(y)) <= longer_by
    ):
        return True
    shorter = min(len(x), len(y))
    if shorter < 5:
        return False
    from rapidfuzz.distance import Levenshtein

    return bool(Levenshtein.distance(x, y) <= (2 if shorter >= 10 else 1))


def slug(name: str) -> str:
    """Lowercase words joined by ``-`` (letters and digits of any script kept)."""
    return _NON_WORD.sub("-", name.strip().lower()).strip("-_") or "entity"


def entity_id(name: str, entity_type: str = "concept", vault: str = "default") -> str:
    return f"{vault}:{slug(entity_type)}:{slug(name)}"
