"""Which document a curation request means: "pin the JWT decision", "forget #a1b2c3".

A cascade, cheapest and surest first; the first confident step wins:

1. ``exact``: a docid, ``collection/path`` or ``memtrove://`` reference, or a path (or the
   tail of one after a ``/``) that names exactly one active document. Always confident;
   a path several documents share gives them as candidates instead.
2. ``bm25``: keyword search.
3. ``title``: documents whose titles hold the query's words; the score is the share of
   query words found, times ``0.7 + 0.3 x`` the share of the title they cover.
4. ``vector``: vector search (skipped when the vault has no vectors or no usable embedder).

A step is confident when its top leads the second by at least 0.2 (a lone candidate leads
by its whole score), or scores at least 0.7 while still leading by 0.05. The reference rule
takes 0.7 alone; on BM25's ``|x| / (1 + |x|)`` scale two near-identical notes both pass 0.7
(0.899 and 0.897 on the example vault), and forgetting the wrong one is not what anyone asks. When no step is, the first step that
found anything gives the candidates, with its best as a not-confident ``target``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from memtrove.db.connection import Connection
from memtrove.errors import (
    AmbiguousReferenceError,
    DocumentNotFoundError,
    EmbeddingSpaceError,
    InvalidQueryError,
    ModelError,
)
from memtrove.index.documents import get_document, reference_candidates
from memtrove.results import SearchResults, TargetMatch
from memtrove.retrieval.pipeline import Filters, Ranking, Retriever
from memtrove.retrieval.presentation import present_results
from memtrove.text import STOPWORDS, scrub, words

__all__ = ["CANDIDATES", "CONFIDENT_GAP", "CONFIDENT_SCORE", "find_target"]

CONFIDENT_SCORE = 0.7
CONFIDENT_GAP = 0.2
CONFIDENT_SCORE_MARGIN = 0.05
CANDIDATES = 5
_MAX_TITLE_WORDS = 8

Hits = list[tuple[int, float]]


def find_target(connection: Connection, retriever: Retriever, query: str) -> TargetMatch:
    """Run the cascade (module docstring) for ``query``."""
    text = scrub(query).strip() if isinstance(query, str) else ""
    if not text:
        raise InvalidQueryError("say which document: a docid, a path, or words from it")
    fallback: TargetMatch | None = None
    for method, hits in _steps(connection, retriever, text):
        if not hits:
            continue
        results = present_results(connection, text, Ranking(hits=hits, stages=[method]))
        if not results:
            continue
        match = _judge(results, method)
        if match.confident:
            return match
        if fallback is None:
            fallback = match
    return fallback or TargetMatch(target=None, confident=False, candidates=[], method="none")


def _steps(connection: Connection, retriever: Retriever, text: str) -> Iterator[tuple[str, Hits]]:
    """Each step's hits, computed only when the previous steps were not confident."""
    steps: list[tuple[str, Callable[[], Hits]]] = [
        ("exact", lambda: _exact(connection, text)),
        ("bm25", lambda: retriever.bm25(text, CANDIDATES, Filters())),
        ("title", lambda: _title_hits(connection, text)),
        ("vector", lambda: _vector_hits(retriever, text)),
    ]
    for method, run in steps:
        yield method, run()


def _judge(results: SearchResults, method: str) -> TargetMatch:
    top = results[0].score
    second = results[1].score if len(results) > 1 else 0.0
    if method == "exact":
        confident = len(results) == 1
    else:
        gap = top - second
        confident = gap >= CONFIDENT_GAP or (
            top >= CONFIDENT_SCORE and gap >= CONFIDENT_SCORE_MARGIN
        )
    return TargetMatch(
        target=results[0], confident=confident, candidates=list(results), method=method
    )


def _exact(connection: Connection, text: str) -> Hits:
    try:
        return [(get_document(connection, text).doc_id, 1.0)]
    except AmbiguousReferenceError:
        return [(doc, 1.0) for doc in reference_candidates(connection, text)[:CANDIDATES]]
    except DocumentNotFoundError:
        pass
    if "\n" in text or len(text) > 1000:
        return []
    path = text.removeprefix("memtrove://").lstrip("/")
    rows = connection.execute(
        "SELECT id FROM documents WHERE active = 1 AND invalidated_at IS NULL "
        "AND (path = ? OR substr(path, length(path) - length(?) + 1) = ?) "
        "ORDER BY collection, path LIMIT ?",
        (path, "/" + path, "/" + path, CANDIDATES),
    ).fetchall()
    return [(int(row[0]), 1.0) for row in rows]


def _title_hits(connection: Connection, text: str) -> Hits:
    query_words = list(dict.fromkeys(w for w in words(text) if w not in STOPWORDS))
    query_words = (query_words or list(dict.fromkeys(words(text))))[:_MAX_TITLE_WORDS]
    if not query_words:
        return []
    sql = "SELECT id, title FROM documents WHERE active = 1 AND invalidated_at IS NULL"
    params: list[str] = []
    if all(word.isascii() for word in query_words):  # LIKE folds case for ASCII only
        sql += " AND (" + " OR ".join("title LIKE ? ESCAPE '\\'" for _ in query_words) + ")"
        params = [f"%{_escape_like(word)}%" for word in query_words]
    rows = connection.execute(sql, params).fetchall()
    wanted = set(query_words)
    scored: list[tuple[float, int]] = []
    for doc, title in rows:
        title_words = {w for w in words(str(title)) if w not in STOPWORDS} or set(words(str(title)))
        found = len(wanted & title_words)
        if not found:
            continue
        score = found / len(wanted) * (0.7 + 0.3 * found / len(title_words))
        scored.append((score, int(doc)))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [(doc, score) for score, doc in scored[:CANDIDATES]]


def _escape_like(word: str) -> str:
    return word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _vector_hits(retriever: Retriever, text: str) -> Hits:
    try:
        return [(doc, score) for doc, score, _ in retriever.vectors(text, CANDIDATES, Filters())]
    except (EmbeddingSpaceError, ModelError):
        return []
