"""The full-text index (BM25) of a vault, as every engine provides it.

Contract: :class:`TextIndex` (``connection.text``) holds four indexes. ``documents``: one
row per searchable document (its id, ``collection/path``, title and body without its
frontmatter); only active documents have one. ``archived``: the same row of each archived
document. ``passages``: the sections of long documents (:mod:`memtrove.db.passages`), each
numbered within its document. ``entities``: the names of the graph's entities.

Everything goes in engine-neutral: a parsed query (:class:`memtrove.db.text_query.ParsedQuery`;
the engine writes its own query language from it), ids, the plain text of each column
(the engine prepares it for its tokenizer, CJK included), and conditions over the
``documents`` table aliased ``d`` with their ``?`` parameters
(:func:`memtrove.retrieval.filters.filter_sql`). Everything comes out as plain tuples.
Scores are BM25 as the engine reports it: negative, lower is better (``|score|`` is the
relevance). A query the engine refuses raises :class:`memtrove.errors.InvalidQueryError`.

Writes run inside the caller's transaction, except :meth:`TextIndex.recount_totals` and
:meth:`TextIndex.settle_totals`, which take one of their own, after the caller's commit.
The SQLite index is :class:`memtrove.db.sqlite.text_index.SqliteTextIndex` (FTS5).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from memtrove.db.text_query import ParsedQuery

if TYPE_CHECKING:  # the tokenizer's tables take a while to build: never on a hook's path
    from memtrove.db.text_tokens import Tokenized

__all__ = ["MAX_PASSAGES", "DocumentIndex", "SearchIndex", "TextIndex"]

DocumentIndex = Literal["documents", "archived", "passages"]
SearchIndex = Literal["documents", "archived"]
MAX_PASSAGES = (1 << 16) - 1  # passages a document may have in the ``passages`` index


class TextIndex(Protocol):
    # -- searching ---------------------------------------------------------------------------

    def search(
        self,
        query: ParsedQuery,
        limit: int | None,
        *,
        index: SearchIndex = "documents",
        conditions: Sequence[str] = (),
        params: Sequence[object] = (),
    ) -> list[tuple[int, float]]:
        """(doc id, BM25) of the rows matching ``query``, best first, at most ``limit``
        (None: all). ``documents`` weighs its columns by
        :data:`memtrove.db.text_query.FIELD_WEIGHTS`; ``archived`` weighs them alike.
        ``conditions`` (over ``documents d``) keep only the documents they allow; without
        any the search never reads ``documents``."""
        ...

    def search_passages(
        self,
        query: ParsedQuery,
        limit: int,
        conditions: Sequence[str] = (),
        params: Sequence[object] = (),
    ) -> list[tuple[int, float, int]]:
        """(doc id, ``|BM25|`` of its best passage, that passage's number), best first, for
        at most ``limit`` documents; ``conditions`` as in :meth:`search`."""
        ...

    def title_matches(self, phrases: Sequence[str], limit: int) -> list[int]:
        """At most ``limit`` documents whose title holds one of ``phrases`` (lowercase words
        joined by spaces), in no particular order; empty when the engine cannot search
        for them."""
        ...

    def indexed_condition(self, alias: str) -> str:
        """A SQL condition true for the rows of ``documents`` (aliased ``alias``) that have
        a row in the ``documents`` index: the searchable ones."""
        ...

    # -- statistics --------------------------------------------------------------------------

    def document_count(self) -> int:
        """Rows in the ``documents`` index: the N of BM25's IDF."""
        ...

    def term_counts(self, terms: Iterable[str]) -> dict[str, int]:
        """How many rows of the ``documents`` index hold each term, as the index stores
        terms (Porter stems); 0 for a term it does not hold."""
        ...

    def vocabulary(self) -> Iterator[tuple[str, int]]:
        """Every term of the ``documents`` index with the number of rows holding it."""
        ...

    # -- rows --------------------------------------------------------------------------------

    takes_tokens: bool
    """Whether :meth:`add_documents` makes use of rows tokenized beforehand (an index that
    tokenizes in Python: an indexer's helper process can do it while this one writes)."""

    def add_documents(
        self,
        rows: Iterable[tuple[int, str, str, str]],
        *,
        index: SearchIndex = "documents",
        tokens: Sequence[Tokenized | None] = (),
    ) -> None:
        """Index rows of (doc id, ``collection/path``, title, body); an id must have no
        row there yet. ``tokens``, when the index :attr:`takes_tokens`: for each row in
        order, :func:`~memtrove.db.text_tokens.tokenized` of its path, title and body
        (after :func:`~memtrove.text.segment_cjk`), or None."""
        ...

    def add_passages(self, doc_id: int, texts: Sequence[str]) -> None:
        """Index document ``doc_id``'s passages (numbered from 0 in order, at most
        :data:`MAX_PASSAGES`); it must have none there yet."""
        ...

    def remove_documents(
        self, doc_ids: Iterable[int], *, index: DocumentIndex = "documents"
    ) -> None:
        """Take the rows of ``doc_ids`` (for ``passages``: all their passages) out of
        ``index``; an id without any is fine."""
        ...

    def clear(self, index: DocumentIndex) -> None:
        """Take every row out of ``index``."""
        ...

    # -- entities ----------------------------------------------------------------------------

    def add_entity(
        self, entity_id: str, name: str, entity_type: str, *, row: int | None = None
    ) -> None:
        """Index an entity's name; ``row`` gives its row number (an import keeping the
        source's order), otherwise it comes after every other."""
        ...

    def rename_entity(self, entity_id: str, name: str) -> None:
        """Index entity ``entity_id`` under ``name`` instead."""
        ...

    def entity_rows(self) -> Iterator[tuple[int, str, str, str]]:
        """Every row of the ``entities`` index as (row number, entity id, name, type), in
        row order."""
        ...

    def match_entities(self, prefixes: Sequence[str], limit: int) -> list[tuple[Any, ...]]:
        """(entity id, type, name, mention count, vault) from ``entity_nodes`` of the first
        ``limit`` entities whose name has a word starting with one of ``prefixes``, in row
        order, unranked; an indexed entity without a node comes as a row of None."""
        ...

    def best_entities(
        self, prefixes: Sequence[str], limit: int, vault: str
    ) -> list[tuple[str, str, str, int]]:
        """(entity id, type, name, mention count) of ``vault``'s entities among the best
        ``limit`` matches of ``prefixes`` (as :meth:`match_entities`), best first."""
        ...

    # -- BM25 totals and housekeeping --------------------------------------------------------

    def recount_totals(self, indexes: Sequence[DocumentIndex]) -> None:
        """Make each index's BM25 totals (rows, tokens per column) exact again, in a
        transaction of its own; needed after rows were taken out."""
        ...

    def settle_totals(self, indexes: Sequence[DocumentIndex] = ("documents", "passages")) -> bool:
        """:meth:`recount_totals` for the indexes whose totals drifted (cheap to tell);
        True when any was recounted."""
        ...

    def totals_record(self, index: DocumentIndex = "documents") -> bytes | None:
        """``index``'s BM25 totals as the engine stores them (None: none yet), for an
        export to carry them as they are."""
        ...

    def restore_totals_record(self, record: bytes, index: DocumentIndex = "documents") -> None:
        """Put back totals read by :meth:`totals_record` (the caller's transaction)."""
        ...

    def compact(self, indexes: Sequence[DocumentIndex]) -> None:
        """Rewrite each index's storage so that text taken out of it is gone from disk."""
        ...
