"""The full-text index of a PostgreSQL vault, ranking exactly as SQLite FTS5 does.

:class:`PostgresTextIndex` is :class:`memtrove.db.text_index.TextIndex` over the tables of
:mod:`memtrove.db.postgres.text_store` (documents, archived documents, passages) and
:mod:`memtrove.db.postgres.text_entities` (entity names); no extension is needed.

Tokens are FTS5's own (:func:`memtrove.db.text_tokens.document_tokens`, the text prepared
as the SQLite index prepares it), and a parsed query becomes the phrases of the expression
:func:`memtrove.db.sqlite.text_index.build_match` writes, in its order (a required phrase
counts twice, an excluded word once, as in FTS5). A search fetches the postings of the
query's terms and scores them with FTS5's ``bm25()`` arithmetic in SQL, operation for
operation (:meth:`memtrove.db.postgres.text_store.TextStore.scores`), so the scores are
FTS5's to the last bit; ties go by ascending row id, as FTS5 orders them.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from memtrove.db.postgres.text_sql import Slot, consecutive, storable, term_slot
from memtrove.db.postgres.text_store import COLUMNS, INDEXES, TextStore
from memtrove.db.text_index import MAX_PASSAGES
from memtrove.db.text_query import FIELD_WEIGHTS, ParsedQuery
from memtrove.db.text_tokens import document_tokens
from memtrove.db.varints import read_varints, write_varint
from memtrove.text import segment_cjk

if TYPE_CHECKING:
    from memtrove.db.postgres.text_entities import EntityIndex
    from memtrove.db.postgres.text_sql import ServerConnection
    from memtrove.db.text_index import DocumentIndex, SearchIndex
    from memtrove.db.text_tokens import Tokenized

__all__ = ["PostgresTextIndex"]

STRIDE = MAX_PASSAGES + 1  # passage n of document d is row d * STRIDE + n (as on SQLite)

# doc id -> column -> hits of a phrase there
Hits = dict[int, dict[int, int]]


class _Phrase(NamedTuple):
    tokens: tuple[str, ...]
    prefix: bool  # the last token is a prefix


def _tokens(text: str) -> tuple[str, ...]:
    return tuple(storable(token) for token in document_tokens(text))


def _phrases(query: ParsedQuery) -> tuple[list[_Phrase], int, int]:
    """The phrases of :func:`~memtrove.db.sqlite.text_index.build_match`'s expression in its
    order, the number of required ones (first) and of excluded ones (last)."""
    required = [_Phrase(_tokens(segment_cjk(phrase).strip()), False) for phrase in query.phrases]
    optional = [_Phrase(_tokens(segment_cjk(term).strip()), False) for term in query.terms]
    optional += [_Phrase(_tokens(prefix), True) for prefix in query.prefixes]
    excluded = [_Phrase(_tokens(word), False) for word in query.excluded]
    if required and optional:
        phrases = required + required + optional
    elif required:
        phrases = list(required)
    else:
        phrases = optional
    return phrases + excluded, len(required), len(excluded)


def _phrase_hits(store: TextStore, idx: int, phrase: _Phrase) -> Hits:
    """doc id -> column -> the hits of a phrase of several tokens (its tokens at
    consecutive positions), from the rows' stored positions."""
    hits: Hits = {}
    for doc_id, tokens in store.places(idx, phrase.tokens, phrase.prefix).items():
        found: dict[int, int] = {}
        for col, starts in enumerate(tokens[0]):
            count = consecutive(starts, [set(token[col]) for token in tokens[1:]])
            if count:
                found[col] = count
        if found:
            hits[doc_id] = found
    return hits


def _hits(store: TextStore, idx: int, phrase: _Phrase) -> Hits:
    """doc id -> column -> hits of any phrase."""
    if not phrase.tokens:
        return {}
    if len(phrase.tokens) > 1:
        return _phrase_hits(store, idx, phrase)
    found = store.term_hits(idx, term_slot(phrase.tokens[0], phrase.prefix))
    return {
        doc_id: {col: count for col, count in enumerate(counts) if count}
        for doc_id, counts in found.items()
    }


class PostgresTextIndex:
    def __init__(self, connection: ServerConnection) -> None:
        self._connection = connection
        self.store = TextStore(connection)

    @functools.cached_property
    def _entities(self) -> EntityIndex:
        from memtrove.db.postgres.text_entities import EntityIndex

        return EntityIndex(self._connection)

    # -- searching ---------------------------------------------------------------------------

    def _score(
        self,
        idx: int,
        query: ParsedQuery,
        weights: Sequence[float],
        *,
        documents: bool = False,
        conditions: Sequence[str] = (),
        params: Sequence[object] = (),
        stride: int = 1,
        limit: int | None = None,
    ) -> list[tuple[int, float]]:
        """Every matching row of ``idx`` scored (the first ``limit``), best first (the
        store's SQL); phrases of
        several tokens are matched here, from the rows' positions."""
        if query.empty:
            return []
        phrases, required, excluded = _phrases(query)
        slots: list[Slot | None] = []
        extra: list[tuple[int, int, int, int, int, int]] = []
        placed: list[tuple[int, Hits]] = []
        for number, phrase in enumerate(phrases):
            if len(phrase.tokens) == 1:
                slots.append(term_slot(phrase.tokens[0], phrase.prefix))
                continue
            slots.append(None)
            if phrase.tokens:
                placed.append((number, _phrase_hits(self.store, idx, phrase)))
        if placed:
            lengths = self.store.lengths(idx, sorted({d for _, hits in placed for d in hits}))
            for number, hits in placed:
                for doc_id, columns in hits.items():
                    c0, c1, c2 = (columns.get(col, 0) for col in range(3))
                    extra.append((number, doc_id, c0, c1, c2, lengths[doc_id]))
        return self.store.scores(
            idx,
            slots,
            extra,
            required,
            excluded,
            weights,
            documents=documents,
            conditions=conditions,
            params=params,
            stride=stride,
            limit=limit,
        )

    def search(
        self,
        query: ParsedQuery,
        limit: int | None,
        *,
        index: SearchIndex = "documents",
        conditions: Sequence[str] = (),
        params: Sequence[object] = (),
    ) -> list[tuple[int, float]]:
        weights = FIELD_WEIGHTS if index == "documents" else (1.0,) * 3
        scored = self._score(
            INDEXES[index],
            query,
            weights,
            # SQLite joins ``documents`` for conditions and for the archived index
            documents=bool(conditions) or index == "archived",
            conditions=conditions,
            params=params,
            limit=limit,
        )
        return scored

    def search_passages(
        self,
        query: ParsedQuery,
        limit: int,
        conditions: Sequence[str] = (),
        params: Sequence[object] = (),
    ) -> list[tuple[int, float, int]]:
        if limit <= 0:
            return []
        best: dict[int, tuple[float, int]] = {}
        scored = self._score(
            INDEXES["passages"],
            query,
            (1.0,),
            documents=bool(conditions),
            conditions=conditions,
            params=params,
            stride=STRIDE,
        )
        for row_id, score in scored:
            doc = row_id // STRIDE
            if doc not in best:  # best first, and the lowest passage among equals
                best[doc] = (score, row_id % STRIDE)
        ranked = sorted((score, doc, passage) for doc, (score, passage) in best.items())
        return [(doc, abs(score), passage) for score, doc, passage in ranked[: int(limit)]]

    def title_matches(self, phrases: Sequence[str], limit: int) -> list[int]:
        wanted = [_Phrase(_tokens(phrase), False) for phrase in phrases if phrase]
        wanted = [phrase for phrase in wanted if phrase.tokens]
        if not wanted or limit <= 0:
            return []
        found: set[int] = set()
        for phrase in wanted:
            hits = _hits(self.store, INDEXES["documents"], phrase)
            found.update(doc_id for doc_id, columns in hits.items() if columns.get(1))
        return sorted(found)[: int(limit)]

    def indexed_condition(self, alias: str) -> str:
        return self.store.has_row(INDEXES["documents"]).format(alias=alias)

    # -- statistics --------------------------------------------------------------------------

    def document_count(self) -> int:
        return self.store.row_count(INDEXES["documents"])

    def term_counts(self, terms: Iterable[str]) -> dict[str, int]:
        wanted = list(dict.fromkeys(terms))
        stored = {storable(term): term for term in wanted}
        counts = dict.fromkeys(wanted, 0)
        for term, count in self.store.term_counts(INDEXES["documents"], list(stored)).items():
            counts[stored[term]] = count
        return counts

    def vocabulary(self) -> Iterator[tuple[str, int]]:
        return self.store.vocabulary(INDEXES["documents"])

    # -- rows --------------------------------------------------------------------------------

    takes_tokens = True

    def add_documents(
        self,
        rows: Iterable[tuple[int, str, str, str]],
        *,
        index: SearchIndex = "documents",
        tokens: Sequence[Tokenized | None] = (),
    ) -> None:
        self.store.add(
            INDEXES[index],
            (
                (doc_id, (filepath, segment_cjk(title), segment_cjk(body)))
                for doc_id, filepath, title, body in rows
            ),
            tokens,
        )

    def add_passages(self, doc_id: int, texts: Sequence[str]) -> None:
        base = int(doc_id) * STRIDE
        self.store.add(
            INDEXES["passages"],
            ((base + number, (segment_cjk(text),)) for number, text in enumerate(texts)),
        )

    def remove_documents(
        self, doc_ids: Iterable[int], *, index: DocumentIndex = "documents"
    ) -> None:
        """Take rows out; like a ``contentless_delete`` FTS5 table, leaves the totals as
        they are (:meth:`recount_totals` makes them exact again)."""
        ids = [int(doc_id) for doc_id in doc_ids]
        if index == "passages":
            ranges = [(doc * STRIDE, doc * STRIDE + STRIDE - 1) for doc in ids]
            self.store.remove_ranges(INDEXES[index], ranges)
        else:
            self.store.remove(INDEXES[index], ids)

    def clear(self, index: DocumentIndex) -> None:
        self.store.clear(INDEXES[index])

    # -- entities ----------------------------------------------------------------------------

    def add_entity(
        self, entity_id: str, name: str, entity_type: str, *, row: int | None = None
    ) -> None:
        self._entities.add(entity_id, name, entity_type, row)

    def rename_entity(self, entity_id: str, name: str) -> None:
        self._entities.rename(entity_id, name)

    def entity_rows(self) -> Iterator[tuple[int, str, str, str]]:
        return self._entities.rows()

    def match_entities(self, prefixes: Sequence[str], limit: int) -> list[tuple[Any, ...]]:
        return self._entities.match(prefixes, limit)

    def best_entities(
        self, prefixes: Sequence[str], limit: int, vault: str
    ) -> list[tuple[str, str, str, int]]:
        return self._entities.best(prefixes, limit, vault)

    # -- BM25 totals and housekeeping --------------------------------------------------------

    def recount_totals(self, indexes: Sequence[DocumentIndex]) -> None:
        with self._connection.transaction():
            for index in indexes:
                self.store.recount(INDEXES[index])

    def settle_totals(self, indexes: Sequence[DocumentIndex] = ("documents", "passages")) -> bool:
        drifted = []
        for index in indexes:
            totals = self.store.totals(INDEXES[index])
            recorded = 0 if totals is None else totals[0]
            if recorded != self.store.row_count(INDEXES[index]):
                drifted.append(index)
        if drifted:
            self.recount_totals(drifted)
        return bool(drifted)

    def totals_record(self, index: DocumentIndex = "documents") -> bytes | None:
        """The totals in FTS5's record format (row count, tokens per column, as varints),
        so that an export carries the same bytes from either engine."""
        totals = self.store.totals(INDEXES[index])
        if totals is None:
            return None
        rows, tokens = totals
        return write_varint(rows) + b"".join(write_varint(total) for total in tokens)

    def restore_totals_record(self, record: bytes, index: DocumentIndex = "documents") -> None:
        values = read_varints(bytes(record))
        columns = COLUMNS[INDEXES[index]]
        if not values:
            return
        tokens = (values[1:] + [0] * columns)[:columns]
        self.store.set_totals(INDEXES[index], values[0], tokens)

    def compact(self, indexes: Sequence[DocumentIndex]) -> None:
        """Merge each index's segments into one, dropping the entries of rows taken out
        (their terms stay in their segments until then); the server's VACUUM then returns
        the space of the rewritten rows."""
        for index in indexes:
            self.store.optimize(INDEXES[index])

    # -- transactions (called by the connection) ---------------------------------------------

    def flush(self) -> None:
        self.store.flush()

    def discard(self) -> None:
        self.store.discard()
