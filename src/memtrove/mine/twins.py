"""The same exchange mined from two sources is kept once.

A session often exists twice: Claude Code's JSON lines and a terminal capture of it (or a
Markdown export), and ``mine`` of a folder holding both would make every exchange two
results that crowd each other out of the top of a search. Two exchanges are *twins* when
they come from different conversations (two sources), their titles (the first line of the
user's message) are the same once case, spacing and punctuation are set aside, and their
words agree: the words of their text, tool-call lines and speaker labels left out, overlap by
at least :data:`MIN_OVERLAP` (Jaccard), or the title is long enough (:data:`LONG_TITLE`
characters) that two people typing it is no coincidence and neither side has prose of its
own. A short title ("yes", "continue") never makes twins.

The first one mined is kept; the later one is skipped and counted (``same exchange as
another source``), in the same run or a later one (twins are looked up among the mined
collection's documents by title). Mining the same sources again keeps the same one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from memtrove.db.connection import Connection
from memtrove.mine.writer import ExchangeDocument

__all__ = ["LONG_TITLE", "MIN_OVERLAP", "TWIN", "Twins"]

TWIN = "same exchange as another source"
MIN_OVERLAP = 0.8
MIN_TITLE = 12
LONG_TITLE = 40
_WORD = re.compile(r"[^\W_]{3,}")
_LABEL = re.compile(r"^\*\*[^*\n]{1,80}:\*\* ?", re.M)
_FRONTMATTER = re.compile(r"\A---\n[\s\S]*?\n---\n")
_SOURCE = re.compile(r"^source: (\"(?:[^\"\\\n]|\\.)*\")$", re.M)


def _key(title: str) -> str:
    return " ".join(_WORD.findall(title.lower()))


def _words(body: str) -> frozenset[str]:
    """The words of a rendered exchange, without frontmatter, speaker labels and tool lines."""
    text = _LABEL.sub("", _FRONTMATTER.sub("", body))
    lines = (line for line in text.splitlines() if not line.lstrip().startswith("["))
    return frozenset(word.lower() for line in lines for word in _WORD.findall(line))


def _source(body: str) -> str:
    """The ``source`` a stored exchange's frontmatter names ("" when none)."""
    import json

    head = _FRONTMATTER.match(body)
    found = _SOURCE.search(head.group()) if head else None
    try:
        return str(json.loads(found.group(1))) if found else ""
    except ValueError:
        return ""


def _twins(title_key: str, ours: frozenset[str], theirs: frozenset[str], prompt: int) -> bool:
    union = ours | theirs
    if union and len(ours & theirs) / len(union) >= MIN_OVERLAP:
        return True
    # tool calls only on both sides: the long title the user typed is the evidence
    return len(title_key) >= LONG_TITLE and len(ours) <= prompt and len(theirs) <= prompt


class Twins:
    """Finds a document's twin among what this run kept and the collection holds.

    Only a title key and a path are kept per exchange (bounded memory); words are read and
    compared only when two sources share a title, from the vault (the writer's batch in
    hand is written first, ``flush``). A dry run writes nothing, so it finds twins only
    among the documents already stored."""

    def __init__(
        self,
        connection: Connection,
        collection: str,
        lock: AbstractContextManager[Any],
        flush: Callable[[], None],
    ) -> None:
        self._connection = connection
        self._collection = collection
        self._lock = lock
        self._flush = flush
        self._seen: dict[str, list[tuple[str, str]]] = {}  # key -> (source, path) kept
        self._stored: dict[str, list[str]] | None = None  # key -> paths stored before

    def twin(self, document: ExchangeDocument) -> bool:
        """Whether ``document`` is a twin of one already kept or stored (then it is not
        kept); else it is remembered as kept."""
        key = _key(document.title)
        if len(key) < MIN_TITLE:
            return False
        source = str((document.frontmatter or {}).get("source", ""))
        ours = [path for other, path in self._seen.get(key, ()) if other == source]
        theirs = [path for other, path in self._seen.get(key, ()) if other != source]
        paths = {*theirs, *self._stored_paths(key)} - {document.path, *ours}
        if paths:
            if theirs:
                self._flush()  # so that this run's documents can be read back
            words = _words(document.text)
            prompt = len(_WORD.findall(document.title))
            for body in self._bodies(sorted(paths)):
                if _source(body) != source and _twins(key, words, _words(body), prompt):
                    return True
        self._seen.setdefault(key, []).append((source, document.path))
        return False

    def _stored_paths(self, key: str) -> list[str]:
        """The paths of the collection's active documents of title ``key`` (the titles are
        read once a run)."""
        if self._stored is None:
            self._stored = {}
            with self._lock:
                rows = self._connection.execute(
                    "SELECT path, title FROM documents WHERE collection = ? AND active = 1",
                    (self._collection,),
                ).fetchall()
            for path, title in rows:
                self._stored.setdefault(_key(str(title)), []).append(str(path))
        return self._stored.get(key, [])

    def _bodies(self, paths: list[str]) -> list[str]:
        bodies: list[str] = []
        with self._lock:
            for path in paths:
                row = self._connection.execute(
                    "SELECT c.doc FROM documents d JOIN content c ON c.hash = d.hash "
                    "WHERE d.collection = ? AND d.path = ? AND d.active = 1",
                    (self._collection, path),
                ).fetchone()
                if row is not None:
                    bodies.append(str(row[0]))
        return bodies
