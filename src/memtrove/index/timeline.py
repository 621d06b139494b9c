"""Documents in time order around one document, and several documents read at once.

Time order is effective time (``authored_at``, else ``modified_at``), ties broken by
collection and path, so the order is total and the same on every call.
"""

from __future__ import annotations

from typing import Any

from memtrove.db.connection import Connection
from memtrove.errors import AmbiguousReferenceError, DocumentNotFoundError, InvalidQueryError
from memtrove.index.documents import SUMMARY_COLUMNS, get_document, summary_of
from memtrove.index.scanner import compile_pattern
from memtrove.results import Document, MultiGet, Timeline

__all__ = ["document_timeline", "multi_get", "split_pattern"]

_EFFECTIVE = "COALESCE(authored_at, modified_at)"
_SEARCHABLE = "active = 1 AND invalidated_at IS NULL"
_GLOB_CHARACTERS = frozenset("*?[{")


def document_timeline(
    connection: Connection,
    reference: str,
    before: int = 5,
    after: int = 5,
    *,
    same_collection: bool = False,
) -> Timeline:
    """The active documents just before and just after the referenced one, nearest first."""
    anchor = get_document(connection, reference)
    row = connection.execute(
        f"SELECT {SUMMARY_COLUMNS}, {_EFFECTIVE} FROM documents WHERE id = ?", (anchor.doc_id,)
    ).fetchone()
    key = (row[8], anchor.collection, anchor.path)
    where = f"{_SEARCHABLE} AND id != ?"
    params: list[object] = [anchor.doc_id]
    if same_collection:
        where += " AND collection = ?"
        params.append(anchor.collection)

    def side(comparison: str, order: str, limit: int) -> list[Any]:
        """At most ``limit`` documents on one side of the anchor, nearest first."""
        return connection.execute(
            f"SELECT {SUMMARY_COLUMNS} FROM documents WHERE {where} "
            f"AND ({_EFFECTIVE}, collection, path) {comparison} (?, ?, ?) "
            f"ORDER BY {_EFFECTIVE}{order}, collection{order}, path{order} LIMIT ?",
            [*params, *key, limit],
        ).fetchall()

    return Timeline(
        anchor=summary_of(row),
        before=[summary_of(r) for r in side("<", " DESC", before)],
        after=[summary_of(r) for r in side(">", "", after)],
    )


def split_pattern(pattern: str) -> list[str]:
    """The comma-separated items of a multi-get pattern (commas inside ``{a,b}`` stay)."""
    items: list[str] = []
    current: list[str] = []
    depth = 0
    for character in pattern:
        if character == "," and depth == 0:
            items.append("".join(current))
            current = []
            continue
        if character == "{":
            depth += 1
        elif character == "}" and depth:
            depth -= 1
        current.append(character)
    items.append("".join(current))
    return [item.strip() for item in items if item.strip()]


def multi_get(
    connection: Connection, pattern: str, *, max_bytes: int, max_documents: int
) -> MultiGet:
    """Documents named by a glob over ``collection/path`` or a comma-separated list of refs.

    Each item of the list may itself be a glob. Glob matches come in ``collection/path``
    order, references in the order given; a document named twice comes once. What cannot
    be found is reported in ``errors``, as are matches past ``max_documents``. Bodies longer
    than ``max_bytes`` of UTF-8 are cut at a character boundary and named in ``truncated``.
    """
    items = split_pattern(pattern)
    if not items:
        raise InvalidQueryError("the pattern must name documents: a glob or a list of refs")
    wanted: list[str] = []  # "collection/path", in order
    errors: list[str] = []
    paths: list[str] | None = None
    for item in items:
        if _GLOB_CHARACTERS.intersection(item):
            if paths is None:
                paths = _active_paths(connection)
            matcher = compile_pattern(item.removeprefix("memtrove://"))
            matched = [path for path in paths if matcher.match(path)]
            if not matched:
                errors.append(f"no document matches {item!r}")
            wanted.extend(matched)
            continue
        try:
            document = get_document(connection, item)
        except (DocumentNotFoundError, AmbiguousReferenceError) as error:
            errors.append(str(error))
        else:
            wanted.append(f"{document.collection}/{document.path}")
    unique = list(dict.fromkeys(wanted))
    if len(unique) > max_documents:
        errors.append(
            f"{pattern!r} names {len(unique)} documents; returned the first {max_documents} "
            "(raise max_documents for more)"
        )
        unique = unique[:max_documents]
    documents: list[Document] = []
    truncated: list[str] = []
    for name in unique:
        try:
            document = get_document(connection, name)
        except DocumentNotFoundError as error:  # deactivated by another process meanwhile
            errors.append(str(error))
            continue
        cut = _cut_utf8(document.body, max_bytes)
        if cut is not None:
            document = document._replace(body=cut)
            truncated.append(name)
        documents.append(document)
    return MultiGet(documents=documents, errors=errors, truncated=truncated)


def _active_paths(connection: Connection) -> list[str]:
    rows = connection.execute(
        f"SELECT collection || '/' || path FROM documents WHERE {_SEARCHABLE} "
        "ORDER BY collection, path"
    )
    return [str(row[0]) for row in rows]


def _cut_utf8(text: str, max_bytes: int) -> str | None:
    """``text`` cut to at most ``max_bytes`` of UTF-8 (whole characters), or None if it fits."""
    if len(text) * 4 <= max_bytes:
        return None
    encoded = text.encode("utf-8", errors="surrogatepass")
    if len(encoded) <= max_bytes:
        return None
    return encoded[:max_bytes].decode("utf-8", errors="ignore")
