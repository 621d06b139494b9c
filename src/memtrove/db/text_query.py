"""A user's search text read into its searchable parts, whatever the engine.

:func:`parse_query` reads user text into terms, quoted phrases, exclusions and prefixes
(:class:`ParsedQuery`); it never raises. Every text index takes a parsed query, never the
user's text, and writes its own query language from it (for SQLite FTS5:
:func:`memtrove.db.sqlite.text_index.build_match`), so no user input is ever syntax.

Bare terms are OR-ed, so a natural-language question ranks documents by how many of its
(non-stopword) terms they contain and how rare those are, instead of requiring all of them.
Quoted phrases are required; ``-word`` excludes; ``word*`` is a prefix (of at least
:data:`MIN_PREFIX` letters). CJK runs become phrases of single characters (overlapping
bigrams for runs longer than two). :data:`FIELD_WEIGHTS` weigh a match in each column of a
document's row (path, title, body) in its BM25 score.
"""

from __future__ import annotations

from typing import NamedTuple

from memtrove.patterns import LazyPattern
from memtrove.text import STOPWORDS, is_cjk, words

__all__ = [
    "FIELD_WEIGHTS",
    "MAX_QUERY_CHARS",
    "MAX_TERMS",
    "MIN_PREFIX",
    "ParsedQuery",
    "parse_query",
]

# BM25 weights for (filepath, title, body): a match in the path or title says more about
# what a document is than one more mention in its body.
FIELD_WEIGHTS = (10.0, 4.0, 1.0)
MAX_TERMS = 48
MAX_QUERY_CHARS = 20_000
# Shorter prefixes expand to thousands of terms (slow, and rarely meant): they search as words.
MIN_PREFIX = 3

_QUOTED = LazyPattern(r'"([^"]*)"')
_TOKEN = LazyPattern(r"(?<![\w])-?[^\s\"]+")


class ParsedQuery(NamedTuple):
    """The searchable parts of a user's query."""

    terms: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    highlight: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.terms or self.phrases or self.prefixes)


def _cjk_parts(word: str) -> tuple[list[str], list[str]]:
    """Split a word into its non-CJK pieces and its CJK runs."""
    plain: list[str] = []
    runs: list[str] = []
    current: list[str] = []
    kind: bool | None = None
    for character in word:
        cjk = is_cjk(character)
        if kind is not None and cjk != kind:
            (runs if kind else plain).append("".join(current))
            current = []
        kind = cjk
        current.append(character)
    if current:
        (runs if kind else plain).append("".join(current))
    return plain, runs


def parse_query(query: str) -> ParsedQuery:
    """Read user text into terms, phrases, prefixes and exclusions. Never raises."""
    text = query[:MAX_QUERY_CHARS]
    phrases: list[str] = []
    for raw_phrase in _QUOTED.findall(text):
        tokens = words(raw_phrase)
        if tokens:
            phrases.append(" ".join(tokens))
    remainder = _QUOTED.sub(" ", text).replace('"', " ")
    terms: list[str] = []
    prefixes: list[str] = []
    excluded: list[str] = []
    seen: set[str] = set()
    for raw in _TOKEN.findall(remainder):
        negative = raw.startswith("-") and len(raw) > 1
        prefix = raw.endswith("*")
        for index, word in enumerate(words(raw)):
            if word in seen:
                continue
            seen.add(word)
            plain, runs = _cjk_parts(word)
            if negative and index == 0 and not runs:
                excluded.append(word)
                continue
            for run in runs:
                if len(run) <= 2:
                    terms.append(" ".join(run))
                else:
                    terms.extend(" ".join(run[i : i + 2]) for i in range(len(run) - 1))
            for piece in plain:
                if prefix and len(piece) >= MIN_PREFIX:
                    prefixes.append(piece)
                else:
                    terms.append(piece)
    content = [term for term in terms if term not in STOPWORDS]
    if not content and not phrases and not prefixes:
        content = terms  # a query of only stopwords still searches for them
    content = list(dict.fromkeys(content))[:MAX_TERMS]
    highlight = tuple(
        dict.fromkeys([*content, *prefixes, *(w for p in phrases for w in p.split())])
    )
    return ParsedQuery(
        terms=tuple(content),
        phrases=tuple(dict.fromkeys(phrases))[:8],
        prefixes=tuple(dict.fromkeys(prefixes))[:8],
        excluded=tuple(dict.fromkeys(excluded))[:8],
        highlight=highlight,
    )
