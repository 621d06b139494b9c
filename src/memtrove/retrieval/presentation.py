"""Ranked document ids turned into the results every interface shows: titles, snippets."""

from __future__ import annotations

import re

from memtrove.db.connection import Connection
from memtrove.index.documents import document_rows, fragment_texts
from memtrove.patterns import LazyPattern
from memtrove.results import SearchResult, SearchResults
from memtrove.retrieval.fts import parse_query
from memtrove.retrieval.pipeline import Ranking
from memtrove.retrieval.snippets import Highlighter, make_snippet

__all__ = ["present_results", "strip_frontmatter"]

_FRONTMATTER = LazyPattern(r"\A---[ \t]*\r?\n.*?^(?:---|\.\.\.)[ \t]*\r?$\n?", re.S | re.M)


def strip_frontmatter(text: str) -> str:
    """A stored body without its leading YAML frontmatter."""
    return _FRONTMATTER.sub("", text, count=1)


def present_results(
    connection: Connection,
    query: str,
    ranking: Ranking,
    min_score: float = 0.0,
    *,
    intent: str | None = None,
    full: bool = False,
    snippets: bool = True,
) -> SearchResults:
    """One :class:`SearchResult` per hit scoring at least ``min_score``, in ranking order.

    The snippet is the passage of the body that best matches the query (and intent); for a
    vector hit whose body shows none of the query's words, its best fragment instead.
    ``full`` adds each body (without frontmatter) as ``content``; ``snippets=False`` leaves
    the snippet empty (a caller that renders its own passages).
    """
    hits = [(doc, score) for doc, score in ranking.hits if score >= min_score]
    rows = document_rows(connection, [doc for doc, _ in hits])
    parsed = parse_query(f"{query} {intent}" if intent else query)
    highlighter = Highlighter(parsed.highlight)
    results = SearchResults(
        stages=ranking.stages,
        skipped=ranking.skipped,
        warnings=ranking.warnings,
        scale=ranking.scale,
    )
    fragments = fragment_texts(connection, rows, ranking.best_seq)
    for doc, score in hits:
        row = rows.get(doc)
        if row is None:
            continue
        body = strip_frontmatter(str(row["text"])) if snippets or full else ""
        snippet = ""
        if snippets:
            snippet, _ = make_snippet(body, highlighter)
            if doc in fragments and highlighter.best_line(snippet) < 0:
                snippet, _ = make_snippet(fragments[doc], highlighter)
        results.append(
            SearchResult(
                docid=str(row["docid"]),
                collection=str(row["collection"]),
                path=str(row["path"]),
                title=str(row["title"]),
                score=score,
                snippet=snippet,
                content_type=str(row["content_type"]),
                modified_at=str(row["modified_at"]),
                doc_id=doc,
                content=body if full else None,
            )
        )
    return results
