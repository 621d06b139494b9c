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

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from memtrove.db.connection import Connection, OperationalError
from memtrove.errors import InvalidQueryError
from memtrove.text import STOPWORDS, is_cjk, segment_cjk, words

__all__ = [
    "FIELD_WEIGHTS",
    "MAX_TERMS",
    "FtsHit",
    "ParsedQuery",
    "build_match",
    "normalize_bm25",
    "parse_query",
    "search_fts",
]

# bm25() weights for (filepath, title, body): a match in the path or title says more about
# what a document is than one more mention in its body.
FIELD_WEIGHTS = (10.0, 4.0, 1.0)
MAX_TERMS = 48
MAX_QUERY_CHARS = 20_000

_QUOTED = re.compile(r'"([^"]*)"')
_TOKEN = re.compile(r"(?<![\w])-?[^\s\"]+")


@dataclass(frozen=True)
class ParsedQuery:
    """The searchable parts of a user's query."""

    terms: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    highlight: tuple[str, ...] = field(default=(), compare=False)

    @property
    def empty(self) -> bool:
        return not (self.terms or self.phrases or self.prefixes)


@dataclass(frozen=True)
class FtsHit:
    doc_id: int
    bm25: float
    score: float


def normalize_bm25(raw: float) -> float:
    magnitude = abs(raw)
    return magnitude / (1.0 + magnitude)


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
                if prefix and len(piece) >= 2:
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
    parts: list[str] = []
    if required:
        parts.append(" AND ".join(required))
    if optional:
        parts.append("(" + " OR ".join(optional) + ")")
    expression = " AND ".join(parts) if required else parts[0]
    if parsed.excluded:
        expression = (
            f"({expression}) NOT (" + " OR ".join(_quote(word) for word in parsed.excluded) + ")"
        )
    return expression


def search_fts(
    connection: Connection,
    query: str | ParsedQuery,
    *,
    limit: int = 10,
    collections: Sequence[str] | None = None,
    content_types: Sequence[str] | None = None,
    since: str | None = None,
    until: str | None = None,
    include_inactive: bool = False,
) -> list[FtsHit]:
    """Active documents matching ``query``, best BM25 first."""
    parsed = query if isinstance(query, ParsedQuery) else parse_query(query)
    match = build_match(parsed)
    if match is None or limit <= 0:
        return []
    path_weight, title_weight, body_weight = FIELD_WEIGHTS
    sql = [
        f"SELECT d.id, bm25(documents_fts, {path_weight}, {title_weight}, {body_weight}) AS rank "
        "FROM documents_fts JOIN documents d ON d.id = documents_fts.rowid "
        "WHERE documents_fts MATCH ?"
    ]
    params: list[object] = [match]
    if not include_inactive:
        sql.append("AND d.active = 1 AND d.invalidated_at IS NULL")
    if collections:
        sql.append(f"AND d.collection IN ({','.join('?' * len(collections))})")
        params.extend(collections)
    if content_types:
        sql.append(f"AND d.content_type IN ({','.join('?' * len(content_types))})")
        params.extend(content_types)
    if since:
        sql.append("AND COALESCE(d.authored_at, d.modified_at) >= ?")
        params.append(since)
    if until:
        sql.append("AND COALESCE(d.authored_at, d.modified_at) <= ?")
        params.append(until)
    sql.append("ORDER BY rank LIMIT ?")
    params.append(int(limit))
    try:
        rows = connection.execute(" ".join(sql), params).fetchall()
    except OperationalError as error:
        if "fts5" in str(error).lower() or "syntax" in str(error).lower():
            raise InvalidQueryError(f"cannot search for {query!r}: {error}") from None
        raise
    return [FtsHit(int(row[0]), float(row[1]), normalize_bm25(float(row[1]))) for row in rows]
