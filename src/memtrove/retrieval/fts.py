"""BM25 keyword search over path, title and body, through the vault's text index.

:func:`parse_query` (:mod:`memtrove.db.text_query`) reads user text into terms, quoted
phrases, exclusions and prefixes; :func:`select_terms` keeps a long query's telling terms
by their document frequency; the engine's index (``connection.text``,
:class:`memtrove.db.text_index.TextIndex`) searches for the rest, documents whole
(:func:`search_documents`, also called ``search_fts``) or by their best passage
(:func:`search_by_passage`, also ``search_passage_fts``). A query the index refuses raises
:class:`memtrove.errors.InvalidQueryError` naming the query.

Bare terms are OR-ed, so a natural-language question ranks documents by how many of its
(non-stopword) terms they contain and how rare those are, instead of requiring all of them.
Quoted phrases are required; ``-word`` excludes; ``word*`` is a prefix. CJK runs become
phrases of single characters (overlapping bigrams for runs longer than two).

Score: ``|bm25| / (1 + |bm25|)``, in [0, 1).
"""

from collections.abc import Hashable, Sequence
from typing import NamedTuple, TypeVar

from memtrove.db.connection import Connection
from memtrove.db.text_query import (
    FIELD_WEIGHTS,
    MAX_QUERY_CHARS,
    MAX_TERMS,
    MIN_PREFIX,
    ParsedQuery,
    parse_query,
)
from memtrove.errors import InvalidQueryError
from memtrove.retrieval.filters import Filters, filter_sql
from memtrove.retrieval.stemming import porter_stemmer

__all__ = [
    "FIELD_WEIGHTS",
    "MAX_QUERY_CHARS",
    "MAX_TERMS",
    "MIN_PREFIX",
    "FtsHit",
    "ParsedQuery",
    "document_frequencies",
    "linear_relevance",
    "normalize_bm25",
    "parse_query",
    "search_by_passage",
    "search_documents",
    "select_terms",
]

K = TypeVar("K", bound=Hashable)

MAX_SELECTED_TERMS = 10
MAX_LOOKUPS = 20
COMMON_FRACTION = 0.5
_STEMMER = porter_stemmer()  # the algorithm of FTS5's porter tokenizer


class FtsHit(NamedTuple):
    doc_id: int
    bm25: float
    score: float


def normalize_bm25(raw: float) -> float:
    magnitude = abs(raw)
    return magnitude / (1.0 + magnitude)


def linear_relevance(scores: Sequence[tuple[K, float]]) -> list[tuple[K, float]]:
    """BM25 scores in ``|s| / (1 + |s|)`` form made proportional again.

    The squashing bunches every hit of a query into ~0.85-0.95, so a hit with half the BM25
    magnitude of the best looks 95 % as good. Each becomes ``best × |s| / max |s|``: the best
    hit keeps its [0, 1) score, the others get their share of its BM25 magnitude.
    """
    if not scores:
        return []
    magnitudes = [(key, score / (1.0 - score) if score < 1.0 else 1e9) for key, score in scores]
    top = max(magnitude for _, magnitude in magnitudes)
    best = max(score for _, score in scores)
    if top <= 0:
        return list(scores)
    return [(key, best * magnitude / top) for key, magnitude in magnitudes]


def _document_count(connection: Connection) -> int:
    """Rows in the full-text index: the N of BM25's IDF."""
    return connection.text.document_count()


def document_frequencies(
    connection: Connection, words: Sequence[str]
) -> tuple[int, dict[str, int]]:
    """(documents in the index, how many hold each word's stem) from the index's vocabulary."""
    stems = dict(zip(words, _STEMMER.stemWords(list(words)), strict=True))
    frequency = connection.text.term_counts(set(stems.values()))
    return _document_count(connection), {word: frequency[stem] for word, stem in stems.items()}


def select_terms(
    connection: Connection, parsed: ParsedQuery, common: float = COMMON_FRACTION
) -> ParsedQuery:
    """Keep a long query's most telling terms, by document frequency.

    Terms found in more than half the documents score nothing under FTS5's BM25 (their IDF
    is clamped to almost zero) but cost time on every matching row; terms found nowhere
    cannot match. Dropping both leaves the ranking as it was and makes common-word
    questions fast; a query then keeps at most its ``MAX_SELECTED_TERMS`` rarest terms. A
    single-term query is left as it is.
    """
    if len(parsed.terms) < 2:
        return parsed
    # Look up at most MAX_LOOKUPS words, longest first (length tracks rarity well enough);
    # the rest of a very long prompt is dropped.
    words_only = sorted((term for term in parsed.terms if " " not in term), key=len, reverse=True)[
        :MAX_LOOKUPS
    ]
    total, by_word = document_frequencies(connection, words_only)
    ranked: list[tuple[float, int, str]] = []
    for position, term in enumerate(parsed.terms):
        if " " in term:
            ranked.append((0.0, position, term))  # CJK pair: keep, it is rarely common
            continue
        if term not in by_word:
            continue
        count = by_word[term]
        if count == 0:
            continue
        ranked.append((count / max(total, 1), position, term))
    useful = [entry for entry in ranked if entry[0] <= common]
    if not useful:
        useful = sorted(ranked)[:3]  # only common words: search the least common ones
    kept = sorted(sorted(useful)[:MAX_SELECTED_TERMS], key=lambda entry: entry[1])
    return parsed._replace(terms=tuple(term for _, _, term in kept))


def search_documents(
    connection: Connection,
    query: str | ParsedQuery,
    *,
    limit: int = 10,
    filters: Filters | None = None,
) -> list[FtsHit]:
    """Active documents matching ``query``, best BM25 first.

    Only searchable documents have rows in the ``documents`` index, so without filters the
    search never touches ``documents`` (the index's fastest path).
    """
    parsed = query if isinstance(query, ParsedQuery) else parse_query(query)
    if limit <= 0 or parsed.empty:
        return []
    parsed = select_terms(connection, parsed)
    if parsed.empty:
        return []
    conditions, params = filter_sql("d", filters or Filters())
    try:
        rows = connection.text.search(parsed, limit, conditions=conditions, params=params)
    except InvalidQueryError as error:
        raise InvalidQueryError(f"cannot search for {query!r}: {error}") from None
    return [FtsHit(doc, rank, normalize_bm25(rank)) for doc, rank in rows]


def search_by_passage(
    connection: Connection,
    query: str | ParsedQuery,
    *,
    limit: int = 10,
    filters: Filters | None = None,
) -> list[tuple[int, float, int]]:
    """Documents by their best passage (:mod:`memtrove.db.passages`): ``(doc id, |bm25|,
    passage number)``, best first. Empty for a query with phrases or exclusions, which
    hold for a whole document and not for one of its passages, and for a vault whose
    passage index is empty."""
    parsed = query if isinstance(query, ParsedQuery) else parse_query(query)
    if limit <= 0 or parsed.empty or parsed.phrases or parsed.excluded:
        return []
    # A word in most documents is still rare among their sections ("pod" in a collection of
    # Kubernetes records): kept, it tells passages apart.
    parsed = select_terms(connection, parsed, common=1.0)
    if parsed.empty:
        return []
    conditions, params = filter_sql("d", filters or Filters())
    try:
        return connection.text.search_passages(parsed, limit, conditions, params)
    except InvalidQueryError as error:
        raise InvalidQueryError(f"cannot search for {query!r}: {error}") from None


# The names these had when the index was FTS5 alone.
search_fts = search_documents
search_passage_fts = search_by_passage
