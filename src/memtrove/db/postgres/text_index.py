"""The full-text index of a PostgreSQL vault, ranking exactly as SQLite FTS5 does.

:class:`PostgresTextIndex` is :class:`memtrove.db.text_index.TextIndex` over the tables of
:mod:`memtrove.db.postgres.text_store` (documents, archived documents, passages) and
:mod:`memtrove.db.postgres.text_entities` (entity names); no extension is needed.

Tokens are FTS5's own (:func:`memtrove.db.text_tokens.document_tokens`, the text prepared
as the SQLite index prepares it), and a parsed query becomes the phrases of the expression
:func:`memtrove.db.sqlite.text_index.build_match` writes, in its order (a required phrase
counts twice, an excluded word once, as in FTS5). A search fetches the postings of the
query's terms in SQL and scores them with FTS5's ``bm25()`` arithmetic, operation for
operation (:func:`bm25_scores`), so the scores are FTS5's to the last bit; ties go by
ascending row id, as FTS5 orders them.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from math import log
from typing import TYPE_CHECKING, Any, NamedTuple

from memtrove.db.postgres.text_store import COLUMNS, INDEXES, Postings, TextStore, storable
from memtrove.db.text_query import FIELD_WEIGHTS, ParsedQuery
from memtrove.db.text_tokens import document_tokens
from memtrove.db.varints import read_varints, write_varint
from memtrove.text import segment_cjk

if TYPE_CHECKING:
    from memtrove.db.postgres.connection import PostgresConnection
    from memtrove.db.postgres.text_entities import EntityIndex
    from memtrove.db.text_index import DocumentIndex, SearchIndex

__all__ = ["PostgresTextIndex", "bm25_scores"]

_K1 = 1.2
_B = 0.75
STRIDE = 1 << 16  # passage n of document d is row d * STRIDE + n (as on SQLite)

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


def _key(phrase: _Phrase, position: int) -> str:
    last = position == len(phrase.tokens) - 1
    return ("*" if phrase.prefix and last else "=") + phrase.tokens[position]


def _fetch(store: TextStore, idx: int, phrases: Sequence[_Phrase]) -> Postings:
    exact: set[str] = set()
    prefixes: set[str] = set()
    placed: set[str] = set()
    for phrase in phrases:
        for position, token in enumerate(phrase.tokens):
            (prefixes if _key(phrase, position)[0] == "*" else exact).add(token)
            if len(phrase.tokens) > 1:
                placed.add(token)
    return store.postings(idx, exact, prefixes, placed)


def _hits(phrase: _Phrase, postings: Postings, columns: Iterable[int] | None = None) -> Hits:
    """doc id -> column -> the phrase's hits there (start positions of its tokens in a row)."""
    if not phrase.tokens:
        return {}
    lists = [postings.get(_key(phrase, i), {}) for i in range(len(phrase.tokens))]
    first = lists[0]
    candidates = set(first)
    for other in lists[1:]:
        candidates &= other.keys()
    wanted = None if columns is None else set(columns)
    hits: Hits = {}
    for doc_id in candidates:
        found: dict[int, int] = {}
        head = first[doc_id]
        for col, count in enumerate(head.counts):
            if not count or (wanted is not None and col not in wanted):
                continue
            if len(lists) == 1:
                found[col] = count
                continue
            following = [set(other[doc_id].column_positions(col)) for other in lists[1:]]
            count = sum(
                1
                for start in head.column_positions(col)
                if all(start + i + 1 in places for i, places in enumerate(following))
            )
            if count:
                found[col] = count
        if found:
            hits[doc_id] = found
    return hits


def _matched(hits: Sequence[Hits], required: int, excluded: int) -> set[int]:
    """The rows the expression matches: every required phrase, one of the others (the
    required ones among them), no excluded one."""
    searched = len(hits) - excluded
    if required:
        matched = set(hits[0])
        for found in hits[1:required]:
            matched &= found.keys()
    else:
        matched = set()
        for found in hits[:searched]:
            matched |= found.keys()
    for found in hits[searched:]:
        matched -= found.keys()
    return matched


def bm25_scores(
    n_rows: int,
    tokens: Sequence[int],
    hits: Sequence[Hits],
    ids: Iterable[int],
    lengths: dict[int, int],
    weights: Sequence[float],
) -> list[tuple[int, float]]:
    """(row id, FTS5's ``bm25()``) of ``ids``, best (lowest) first, ties by id: FTS5's
    arithmetic operation for operation (``fts5_aux.c``), over ``n_rows`` rows holding
    ``tokens`` tokens per column, each phrase's ``hits`` and each row's length."""
    avgdl = float(sum(tokens)) / float(n_rows)
    idfs = []
    for found in hits:
        n_hit = len(found)
        idf = log((n_rows - n_hit + 0.5) / (n_hit + 0.5))
        idfs.append(1e-6 if idf <= 0.0 else idf)
    scored: list[tuple[float, int]] = []
    for doc_id in ids:
        length = float(lengths[doc_id])
        score = 0.0
        for idf, found in zip(idfs, hits, strict=True):
            frequency = 0.0
            for col, count in sorted(found.get(doc_id, {}).items()):
                for _ in range(count):  # one weight per hit, as FTS5 adds them
                    frequency += weights[col]
            score += idf * (
                (frequency * (_K1 + 1.0)) / (frequency + _K1 * (1 - _B + _B * length / avgdl))
            )
        scored.append((-1.0 * score, doc_id))
    scored.sort()
    return [(doc_id, score) for score, doc_id in scored]


class PostgresTextIndex:
    def __init__(self, connection: PostgresConnection) -> None:
        self._connection = connection
        self.store = TextStore(connection)

    @functools.cached_property
    def _entities(self) -> EntityIndex:
        from memtrove.db.postgres.text_entities import EntityIndex

        return EntityIndex(self._connection)

    def create(self) -> None:
        """Make the index's tables (nothing when they exist)."""
        self.store.create()
        self._entities.create()

    # -- searching ---------------------------------------------------------------------------

    def _score(
        self, idx: int, query: ParsedQuery, weights: Sequence[float], allowed: Any = None
    ) -> list[tuple[int, float]]:
        """Every matching row of ``idx`` scored, best first; ``allowed(ids)`` keeps some."""
        if query.empty:
            return []
        phrases, required, excluded = _phrases(query)
        totals = self.store.totals(idx)
        if totals is None or totals[0] <= 0:
            return []
        postings = _fetch(self.store, idx, phrases)
        hits = [_hits(phrase, postings) for phrase in phrases]
        ids = sorted(_matched(hits, required, excluded))
        if ids and allowed is not None:
            ids = allowed(ids)
        if not ids:
            return []
        lengths = self.store.sizes(idx, ids)
        return bm25_scores(totals[0], totals[1], hits, ids, lengths, weights)

    def _allowed(self, conditions: Sequence[str], params: Sequence[object], stride: int = 1) -> Any:
        def allowed(ids: list[int]) -> list[int]:
            where = "".join(condition + " AND " for condition in conditions)
            documents = sorted({row_id // stride for row_id in ids})
            kept = {
                int(row[0])
                for row in self._connection.execute(
                    f"SELECT d.id FROM documents d WHERE {where}d.id = ANY(?::bigint[])",
                    [*params, documents],
                )
            }
            return [row_id for row_id in ids if row_id // stride in kept]

        return allowed

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
        # SQLite joins ``documents`` for conditions and for the archived index
        allowed = self._allowed(conditions, params) if conditions or index == "archived" else None
        scored = self._score(INDEXES[index], query, weights, allowed)
        return scored if limit is None else scored[: max(0, int(limit))]

    def search_passages(
        self,
        query: ParsedQuery,
        limit: int,
        conditions: Sequence[str] = (),
        params: Sequence[object] = (),
    ) -> list[tuple[int, float, int]]:
        if limit <= 0:
            return []
        allowed = self._allowed(conditions, params, STRIDE) if conditions else None
        best: dict[int, tuple[float, int]] = {}
        for row_id, score in self._score(INDEXES["passages"], query, (1.0,), allowed):
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
        postings = _fetch(self.store, INDEXES["documents"], wanted)
        found: set[int] = set()
        for phrase in wanted:
            found |= _hits(phrase, postings, columns=(1,)).keys()
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

    def add_documents(
        self, rows: Iterable[tuple[int, str, str, str]], *, index: SearchIndex = "documents"
    ) -> None:
        self.store.add(
            INDEXES[index],
            (
                (doc_id, (filepath, segment_cjk(title), segment_cjk(body)))
                for doc_id, filepath, title, body in rows
            ),
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
        """Nothing to merge: rows taken out are gone from the tables at once (VACUUM, run
        by the server's autovacuum, returns their space)."""
        self.store.ready()

    # -- transactions (called by the connection) ---------------------------------------------

    def flush(self) -> None:
        self.store.flush()

    def discard(self) -> None:
        self.store.discard()
