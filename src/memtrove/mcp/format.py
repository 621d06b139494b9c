"""The compact text MCP tools answer with: one line per document, numbered lines of text."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from memtrove.errors import InvalidQueryError
from memtrove.results import Document, SearchResult, SearchResults
from memtrove.results.marking import FLAG, flag_of

__all__ = [
    "degraded_lines",
    "document_header",
    "numbered",
    "result_lines",
    "select_lines",
    "summary_line",
]

SNIPPET_CHARS = 300


class _Listed(Protocol):
    """What a one-line summary needs (``DocumentSummary``, ``Document``)."""

    @property
    def docid(self) -> str: ...
    @property
    def collection(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def content_type(self) -> str: ...


def result_lines(results: Iterable[SearchResult], *, snippets: bool = False) -> list[str]:
    """``#docid 87% collection/path - title [type]``, each optionally followed by its snippet;
    a result holding instruction-like text ends ``[flagged: instruction-like text]``."""
    lines: list[str] = []
    for result in results:
        flagged = flag_of(result.title, result.path, result.snippet, result.content)
        lines.append(
            f"#{result.docid} {round(result.score * 100)}% {result.collection}/{result.path} - "
            f"{result.title} [{result.content_type}]"
            + (f" [flagged: {flagged}]" if flagged else "")
        )
        if snippets and result.snippet:
            snippet = " ".join(result.snippet.split())
            if len(snippet) > SNIPPET_CHARS:
                snippet = snippet[: SNIPPET_CHARS - 3].rstrip() + "..."
            lines.append(f"    {snippet}")
    return lines


def degraded_lines(results: SearchResults) -> list[str]:
    """``degraded: <reason> (<legs>)`` when the answer is less than was asked for."""
    if not results.degraded:
        return []
    legs = f" ({', '.join(results.degraded_legs)})" if results.degraded_legs else ""
    return [f"degraded: {results.degraded_reason}{legs}"]


def summary_line(document: _Listed) -> str:
    """``[date ]#docid collection/path - title [type]``.

    The date is the authored one, shown only when the summary carries it: a timeline is
    ordered by effective time, and a file's modification date would contradict that order.
    """
    authored = getattr(document, "authored_at", None)
    date = f"{str(authored)[:10]} " if authored else ""
    return (
        f"{date}#{document.docid} {document.collection}/{document.path} - "
        f"{document.title} [{document.content_type}]"
    )


def document_header(document: Document) -> str:
    flagged = flag_of(document.title, document.path, document.body)
    return (
        f"#{document.docid} {document.collection}/{document.path} - {document.title} "
        f"[{document.content_type}]" + (f" [flagged: {FLAG}]" if flagged else "")
    )


def numbered(lines: Sequence[str], start: int) -> str:
    """Lines prefixed ``N: `` from ``start``."""
    return "\n".join(f"{number}: {line}" for number, line in enumerate(lines, start))


def select_lines(
    lines: Sequence[str], start: int, max_lines: int | None, *, strict: bool = True
) -> list[str]:
    """Lines ``start`` (1-based) onwards, at most ``max_lines``; bad bounds are user errors."""
    if not isinstance(start, int) or isinstance(start, bool) or start < 1:
        raise InvalidQueryError(f"fromLine must be a positive integer, got {start!r}")
    if max_lines is not None and (
        not isinstance(max_lines, int) or isinstance(max_lines, bool) or max_lines < 1
    ):
        raise InvalidQueryError(f"maxLines must be a positive integer, got {max_lines!r}")
    if strict and start > max(len(lines), 1):
        raise InvalidQueryError(f"fromLine {start} is past the end ({len(lines)} lines)")
    end = len(lines) if max_lines is None else start - 1 + max_lines
    return list(lines[start - 1 : end])
