"""BM25 keyword search over path, title and body (SQLite FTS5).

User text never reaches FTS5's query grammar directly: :func:`parse_query` reads it into
terms, quoted phrases, exclusions and prefixes, and :func:`build_match` writes a MATCH
expression in which every token is a quoted string, so ``AND``, ``NEAR``, ``:``, ``^``,
parentheses and stray quotes are plain words or separators, never syntax errors.

Bare terms are OR-ed, so a natural-language question ranks documents by how many of its
(non-stopword) terms they contain and how rare those are, instead of requiring all of them.
Quoted phrases are required; ``-word`` excludes; ``word*`` is a prefix. CJK runs become
phrases of single characters (overlapping bigrams for runs longer than two).

Score: ``|bm25| / (1 + |bm25|)``, in [0, 1).
"""

from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from typing import NamedTuple, TypeVar

from memtrove.db.connection import Connection, OperationalError
from memtrove.db.passages import search_passages
from memtrove.errors import InvalidQueryError
from memtrove.patterns import LazyPattern
from memtrove.retrieval.filters import Filters, filter_sql
from memtrove.retrieval.stemming import porter_stemmer
from memtrove.text import STOPWORDS, is_cjk, segment_cjk, words

__all__ = [
    "FIELD_WEIGHTS",
    "MAX_TERMS",
    "FtsHit",
    "ParsedQuery",
    "build_match",
    "document_frequencies",
    "linear_relevance",
    "normalize_bm25",
    "parse_query",
    "search_fts",
    "search_passage_fts",
    "select_terms",
]

K = TypeVar("K", bound=Hashable)

# bm25() weights for (filepath, title, body): a match in the path or title says more about
# what a document is than one more mention in its body.
FIELD_WEIGHTS = (10.0, 4.0, 1.0)
MAX_TERMS = 48
MAX_SELECTED_TERMS = 10
MAX_LOOKUPS = 20
COMMON_FRACTION = 0.5
_STEMMER = porter_stemmer()  # the algorithm of FTS5's porter tokenizer
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


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


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


def build_match(parsed: ParsedQuery) -> str | None:
    """The FTS5 MATCH expression for a parsed query, or None when nothing is searchable."""
    if parsed.empty:
        return None
    optional = [_quote(segment_cjk(term).strip()) for term in parsed.terms]
    optional += [_quote(prefix) + "*" for prefix in parsed.prefixes]
    required = [_quote(segment_cjk(phrase).strip()) for phrase in parsed.phrases]
    if required and optional:
        # Phrases are required; the bare terms only add to the ranking (the OR-group is
        # always satisfied by the phrases themselves).
        expression = " AND ".join(required) + " AND (" + " OR ".join(required + optional) + ")"
    elif required:
        expression = " AND ".join(required)
    else:
        expression = "(" + " OR ".join(optional) + ")"
    if parsed.excluded:
        expression = (
            f"({expression}) NOT (" + " OR ".join(_quote(word) for word in parsed.excluded) + ")"
        )
    return expression


def _document_count(connection: Connection) -> int:
    """Rows in the full-text index: the N of BM25's IDF.

    Counted on FTS5's ``docsize`` shadow table (one small row per indexed document), which
    SQLite counts from its b-tree in microseconds; counting ``documents`` takes a scan.
    """
    row = connection.execute("SELECT COUNT(*) FROM documents_fts_docsize").fetchone()
    return int(row[0])


def document_frequencies(
    connection: Connection, words: Sequence[str]
) -> tuple[int, dict[str, int]]:
    """(documents in the index, how many hold each word's stem) from the FTS5 vocabulary."""
    stems = dict(zip(words, _STEMMER.stemWords(list(words)), strict=True))
    frequency: dict[str, int] = {}
    for stem in set(stems.values()):  # one indexed lookup each; IN would scan the vocabulary
        row = connection.execute("SELECT doc FROM documents_vocab WHERE term = ?", (stem,))
        found = row.fetchone()
        frequency[stem] = int(found[0]) if found else 0
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


@contextmanager
def _searching(query: str | ParsedQuery) -> Iterator[None]:
    """FTS5 refusing a MATCH expression becomes InvalidQueryError naming the query."""
    try:
        yield
    except OperationalError as error:
        if "fts5" in str(error).lower() or "syntax" in str(error).lower():
            raise InvalidQueryError(f"cannot search for {query!r}: {error}") from None
        raise


def search_fts(
    connection: Connection,
    query: str | ParsedQuery,
    *,
    limit: int = 10,
    filters: Filters | None = None,
) -> list[FtsHit]:
    """Active documents matching ``query``, best BM25 first.

    Only searchable documents have rows in ``documents_fts``, so without filters the search
    never touches ``documents``; FTS5 then sorts by rank itself, the fastest path it has.
    """
    parsed = query if isinstance(query, ParsedQuery) else parse_query(query)
    if limit <= 0 or parsed.empty:
        return []
    parsed = select_terms(connection, parsed)
    match = build_match(parsed)
    if match is None:
        return []
    ranking = "bm25({}, {}, {})".format(*FIELD_WEIGHTS)
    conditions, params = filter_sql("d", filters or Filters())
    params = [match, ranking, *params]
    if conditions:
        sql = (
            "SELECT documents_fts.rowid, documents_fts.rank FROM documents_fts "
            "JOIN documents d ON d.id = documents_fts.rowid "
            "WHERE documents_fts MATCH ? AND documents_fts.rank MATCH ? AND "
            + " AND ".join(conditions)
            + " ORDER BY documents_fts.rank LIMIT ?"
        )
    else:
        sql = (
            "SELECT rowid, rank FROM documents_fts WHERE documents_fts MATCH ? "
            "AND rank MATCH ? ORDER BY rank LIMIT ?"
        )
    params.append(int(limit))
    with _searching(query):
        rows = connection.execute(sql, params).fetchall()
    return [FtsHit(int(row[0]), float(row[1]), normalize_bm25(float(row[1]))) for row in rows]


def search_passage_fts(
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
    match = build_match(select_terms(connection, parsed, common=1.0))
    if match is None:
        return []
    conditions, params = filter_sql("d", filters or Filters())
    with _searching(query):
        hits = search_passages(connection, match, limit, conditions, params)
    return hits
