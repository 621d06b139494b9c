"""Links documents write to one another, kept as ``document_links`` rows and ``reference``
edges.

What counts as a link (fenced and inline code never do):

- ``[text](other.md)``, ``[text](../notes/other.md#part)``, ``[text](<my note.md>)``,
  ``[text](my%20note.md)`` and reference definitions ``[label]: other.md``: resolved against
  the linking document's folder (a leading ``/`` means the collection's root); the anchor is
  dropped and ``%xx`` decoded. A target without a suffix also matches ``target.md``.
  External URLs (any ``scheme:``, ``//host``), ``mailto:``, images ``![..](..)``, anchors
  within the same page and links to files that are not markdown (``.png``, ``.pdf``...) are
  not document links and are not stored.
- ``[[Name]]``, ``[[Name|alias]]``, ``[[Name#heading]]``, ``[[folder/Name]]`` and
  ``![[Name]]`` (a transclusion), resolved the way Obsidian, Logseq and Foam do: a bare name
  matches a file named ``Name.md`` anywhere in the collection (case-insensitive); with
  several candidates the one in the linking document's folder wins, then the shortest path,
  then the first in path order. A name with a folder matches a path ending with it.

Every link is stored as written (the target normalised as above), resolved or not; a
resolved link is also a ``reference`` edge from the linking document to its target. The
indexer keeps them in step: :func:`write_links` in each batch's transaction (a written
document's links are extracted again, so they are never older than its body), then
:func:`resolve_links` once at the end of the collection's pass:

- the links waiting for a target are tried again, and a new, renamed or removed path also
  re-resolves the links that pointed at a moved or removed document and the wikilinks of the
  same name, so a link written before its target existed resolves when it appears (if the
  process stops between the two steps, the written links wait until the collection's next
  change);
- a document taken out of the index (file gone, excluded, forgotten) loses its own link rows
  and every ``reference`` edge to or from it; links pointing at it wait again. Traversal
  therefore never reaches an inactive document through a ``reference`` edge.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple
from urllib.parse import unquote

from memtrove.db.connection import Connection
from memtrove.graph.relations import REFERENCE, delete_relations, insert_references

__all__ = [
    "Link",
    "Resolver",
    "WrittenDocument",
    "extract_links",
    "forget_links",
    "links_of",
    "links_stored",
    "resolve_links",
    "write_links",
]

MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")
_MAX_TARGET = 1024  # longer "paths" are noise, never a file name

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BACKTICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_MARKDOWN_LINK = re.compile(
    r"\[((?:[^\[\]\n]|\n(?![ \t]*\n)|\[[^\[\]\n]*\])*)\]"
    r"\(\s*(<[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"
)
_DEFINITION = re.compile(r"^ {0,3}\[([^\[\]\n]+)\]:[ \t]*(<[^<>\n]*>|\S+)", re.MULTILINE)
_WIKILINK = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_SUFFIX = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")


class Link(NamedTuple):
    """One link as written: ``kind`` is ``markdown`` or ``wiki``; ``target`` is the
    collection-relative path (markdown) or the name as written (wiki)."""

    kind: str
    target: str
    text: str | None


class WrittenDocument(NamedTuple):
    """A document the indexer wrote: its id, path in the collection and the links its body
    holds (:func:`extract_links`, run as each batch is written so no body is kept)."""

    doc_id: int
    path: str
    links: tuple[Link, ...]


def _without_code(text: str) -> str:
    """``text`` with fenced blocks and inline code spans blanked (offsets kept)."""
    if "`" not in text and "~~~" not in text:
        return text
    lines = text.split("\n")
    fence: str | None = None
    for number, line in enumerate(lines):
        opening = _FENCE.match(line)
        if fence is None:
            if opening:
                fence = opening.group(1)
                lines[number] = ""
        else:
            closing = opening is not None and len(opening.group(1)) >= len(fence)
            if closing and not line.strip().lstrip(fence[0]):
                fence = None
            lines[number] = ""
    kept = "\n".join(lines)
    if "`" not in kept:
        return kept
    return _without_code_spans(kept)


def _without_code_spans(text: str) -> str:
    """Inline code blanked: a run of backticks opens a span closed by the next run of the
    same length within the paragraph (CommonMark); an unmatched run is literal. Linear."""
    runs = [(match.start(), match.end()) for match in _BACKTICKS.finditer(text)]
    blanks = [match.start() for match in _BLANK_LINE.finditer(text)]
    by_length: dict[int, list[int]] = {}
    for index, (start, end) in enumerate(runs):
        by_length.setdefault(end - start, []).append(index)
    pieces: list[str] = []
    written = 0
    index = 0
    while index < len(runs):
        start, end = runs[index]
        same = by_length[end - start]
        position = bisect.bisect_right(same, index)
        closer = same[position] if position < len(same) else None
        if closer is None:
            index += 1
            continue
        close_start, close_end = runs[closer]
        blank = bisect.bisect_left(blanks, end)
        if blank < len(blanks) and blanks[blank] < close_start:  # not across a paragraph
            index += 1
            continue
        pieces.append(text[written:start])
        pieces.append(" " * (close_end - start))
        written = close_end
        index = closer + 1
    pieces.append(text[written:])
    return "".join(pieces)


def _markdown_target(destination: str, source_path: str) -> str | None:
    """The collection-relative path a markdown link points at, or None if it is not a link
    to a document (external, an anchor, an image or other non-markdown file)."""
    destination = destination.strip()
    if destination.startswith("<") and destination.endswith(">"):
        destination = destination[1:-1].strip()
    if not destination or destination.startswith(("#", "//")) or _SCHEME.match(destination):
        return None
    destination = destination.split("#", 1)[0].split("?", 1)[0]
    destination = unquote(destination).replace("\\", "/").strip()
    if not destination or len(destination) > _MAX_TARGET or "\x00" in destination:
        return None
    suffix = _SUFFIX.search(destination)
    if suffix and suffix.group(0).lower() not in MARKDOWN_SUFFIXES:
        return None
    if destination.startswith("/"):
        joined = destination.lstrip("/")
    else:
        joined = posixpath.join(posixpath.dirname(source_path), destination)
    normal = posixpath.normpath(joined)
    return None if normal in (".", "") else normal


def _wiki_target(inner: str) -> tuple[str, str | None] | None:
    """(name, alias) of a ``[[...]]`` body, or None for a link to a heading of the page."""
    name, _, alias = inner.partition("|")
    name = name.split("#", 1)[0].split("^", 1)[0].replace("\\", "/").strip()
    name = " ".join(name.split())
    if not name or len(name) > _MAX_TARGET or "\x00" in name:
        return None
    suffix = _SUFFIX.search(name)
    if suffix and suffix.group(0).lower() not in MARKDOWN_SUFFIXES:
        return None
    return name, (alias.strip() or None)


def extract_links(body: str, source_path: str) -> list[Link]:
    """Every document link in ``body`` (see the module doc), first occurrence kept, in
    order; ``source_path`` is the linking document's path within its collection."""
    # Most notes link nothing: three substring scans settle them without a regex.
    if "](" not in body and "[[" not in body and "]:" not in body:
        return []
    text = _without_code(body)
    found: dict[tuple[str, str], Link] = {}
    for match in _MARKDOWN_LINK.finditer(text):
        before = text[match.start() - 1] if match.start() else ""
        if before in ("!", "\\"):  # an image, or an escaped bracket
            continue
        target = _markdown_target(match.group(2), source_path)
        if target is not None:
            label = " ".join(match.group(1).split()) or None
            found.setdefault(("markdown", target), Link("markdown", target, label))
    if "]:" in text:
        for match in _DEFINITION.finditer(text):
            target = _markdown_target(match.group(2), source_path)
            if target is not None:
                found.setdefault(("markdown", target), Link("markdown", target, match.group(1)))
    if "[[" in text:
        for match in _WIKILINK.finditer(text):
            if match.start() and text[match.start() - 1] == "\\":
                continue
            parsed = _wiki_target(match.group(1))
            if parsed is not None:
                name, alias = parsed
                found.setdefault(("wiki", name), Link("wiki", name, alias))
    return list(found.values())


def _stem(path: str) -> str:
    """A path without its markdown suffix, lowercased: the key wikilinks match."""
    lowered = path.lower()
    for suffix in MARKDOWN_SUFFIXES:
        if lowered.endswith(suffix):
            return lowered[: -len(suffix)]
    return lowered


class Resolver:
    """Finds the document a link points at among a collection's active documents."""

    def __init__(self, documents: Iterable[tuple[int, str]]) -> None:
        self._by_path: dict[str, int] = {}
        self._by_path_lower: dict[str, int] = {}
        self._by_name: dict[str, list[tuple[str, int]]] = {}
        for doc_id, path in documents:
            self._by_path[path] = doc_id
            self._by_path_lower.setdefault(path.lower(), doc_id)
            name = posixpath.basename(_stem(path))
            self._by_name.setdefault(name, []).append((path, doc_id))

    def resolve(self, link: Link, source_path: str) -> int | None:
        """The id of the document ``link`` (written in ``source_path``) points at."""
        if link.kind == "markdown":
            target = link.target
            for candidate in (target, *(target + suffix for suffix in MARKDOWN_SUFFIXES)):
                found = self._by_path.get(candidate)
                if found is None:
                    found = self._by_path_lower.get(candidate.lower())
                if found is not None:
                    return found
            return None
        key = _stem(link.target).strip("/")
        folder_part, _, name = key.rpartition("/")
        candidates = self._by_name.get(name, [])
        if folder_part:
            candidates = [
                (path, doc_id)
                for path, doc_id in candidates
                if _stem(path) == key or _stem(path).endswith("/" + key)
            ]
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0][1]
        here = posixpath.dirname(source_path)
        return min(
            candidates,
            key=lambda item: (posixpath.dirname(item[0]) != here, len(item[0]), item[0]),
        )[1]


def _wiki_name(target: str) -> str:
    return posixpath.basename(_stem(target).strip("/"))


def _collection_documents(connection: Connection, collection: str) -> list[tuple[int, str]]:
    rows = connection.execute(
        "SELECT id, path FROM documents WHERE collection = ? AND active = 1", (collection,)
    )
    return [(int(doc_id), str(path)) for doc_id, path in rows]


def links_stored(connection: Connection) -> bool:
    """Whether the schema has ``document_links`` (a connection migrated to m012 or later;
    the index functions also run on older schemas while migrations are tested)."""
    return connection.catalog.has_table("document_links")


def forget_links(connection: Connection, doc_ids: Sequence[int]) -> None:
    """Documents taken out of the index: their own links go, links to them wait again, and
    every ``reference`` edge touching them is deleted. Call inside a write transaction."""
    if not doc_ids:
        return
    ids = list(doc_ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        connection.execute(f"DELETE FROM document_links WHERE source_id IN ({marks})", chunk)
        connection.execute(
            f"UPDATE document_links SET target_id = NULL WHERE target_id IN ({marks})", chunk
        )
        delete_relations(connection, chunk, relation_type=REFERENCE)


def write_links(connection: Connection, written: Sequence[WrittenDocument]) -> None:
    """Store the links of documents just written, unresolved for now; their old link rows
    and outgoing ``reference`` edges go. Call inside the transaction that wrote them, so a
    document's links are never older than its body; :func:`resolve_links` follows."""
    if not written:
        return
    ids = [document.doc_id for document in written]
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        connection.execute(f"DELETE FROM document_links WHERE source_id IN ({marks})", chunk)
        delete_relations(connection, chunk, relation_type=REFERENCE, outgoing_only=True)
    rows = [
        (document.doc_id, link.target, link.kind, link.text)
        for document in written
        for link in document.links
    ]
    if rows:
        connection.executemany(
            "INSERT INTO document_links (source_id, target, kind, link_text) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (source_id, target, kind) DO NOTHING",
            rows,
        )


def resolve_links(connection: Connection, collection: str, moved: Iterable[int] = ()) -> None:
    """Resolve one collection's waiting links and, when ``moved`` names documents that
    appeared, moved or left, the links a change of paths could affect (ones at a moved
    document, wikilinks of a moved name); ``reference`` edges follow every change. Call
    inside a write transaction, once per indexing pass that wrote or moved anything."""
    moved_ids = set(moved)
    select = (
        "SELECT l.source_id, s.path, l.target, l.kind, l.link_text, l.target_id "
        "FROM document_links l JOIN documents s ON s.id = l.source_id "
        "WHERE s.collection = ? AND s.active = 1"
    )
    if moved_ids:
        rows = connection.execute(select, (collection,)).fetchall()
    else:
        rows = connection.execute(select + " AND l.target_id IS NULL", (collection,)).fetchall()
    if not rows:
        return
    names = {posixpath.basename(_stem(path)) for (path,) in _paths_of(connection, moved_ids)}
    resolver = Resolver(_collection_documents(connection, collection))
    changed_sources: set[int] = set()
    updates: list[tuple[int | None, int, str, str]] = []
    for source_id, source_path, target, kind, text, target_id in rows:
        affected = (
            target_id is None
            or int(target_id) in moved_ids
            or (kind == "wiki" and _wiki_name(str(target)) in names)
        )
        if not affected:
            continue
        new_id = resolver.resolve(Link(str(kind), str(target), text), str(source_path))
        if new_id != target_id:
            updates.append((new_id, int(source_id), str(target), str(kind)))
            changed_sources.add(int(source_id))
    if not updates:
        return
    connection.executemany(
        "UPDATE document_links SET target_id = ? WHERE source_id = ? AND target = ? AND kind = ?",
        updates,
    )
    sources = sorted(changed_sources)
    delete_relations(connection, sources, relation_type=REFERENCE, outgoing_only=True)
    edges: set[tuple[int, int]] = set()
    for start in range(0, len(sources), 500):
        chunk = sources[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for source_id, target_id in connection.execute(
            f"SELECT source_id, target_id FROM document_links "
            f"WHERE source_id IN ({marks}) AND target_id IS NOT NULL",
            chunk,
        ):
            if source_id != target_id:
                edges.add((int(source_id), int(target_id)))
    insert_references(connection, sorted(edges))


def _paths_of(connection: Connection, doc_ids: set[int]) -> list[tuple[str]]:
    if not doc_ids:
        return []
    ids = sorted(doc_ids)
    found: list[tuple[str]] = []
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        found.extend(
            (str(row[0]),)
            for row in connection.execute(
                f"SELECT path FROM documents WHERE id IN ({marks})", chunk
            )
        )
    return found


def links_of(connection: Connection, doc_id: int) -> list[tuple[str, str, str | None, int | None]]:
    """A document's stored links: (kind, target, text, target document id or None)."""
    rows = connection.execute(
        "SELECT kind, target, link_text, target_id FROM document_links WHERE source_id = ? "
        "ORDER BY kind, target",
        (doc_id,),
    )
    return [
        (str(kind), str(target), text, None if target_id is None else int(target_id))
        for kind, target, text, target_id in rows
    ]
