"""The full-text index of a PostgreSQL vault, ranking exactly as SQLite FTS5 does.

Covers the ``documents`` and ``archived`` indexes of :class:`memtrove.db.text_index.TextIndex`
(adding, removing, counting, searching, the BM25 totals); passages and entities are not
here yet.

Tables (one set for every index, told apart by ``idx``):

- ``text_rows (idx, doc_id, sizes)``: one row per indexed document, with the tokens of each
  column (path, title, body), as FTS5's ``docsize``.
- ``text_postings (idx, term, doc_id, col, positions)``: where each term stands in each
  column of each row (token positions from 0), as FTS5's ``detail=full`` index; its
  primary key (idx, term, ...) serves the term and prefix lookups (``term`` sorts bytewise,
  ``COLLATE "C"``, as FTS5's terms do).
- ``text_totals (idx, rows, tokens)``: the BM25 totals (rows, tokens per column). As in a
  ``contentless_delete`` FTS5 table, taking rows out does not lower them
  (:mod:`memtrove.db.sqlite.fts_totals`); :meth:`PostgresTextIndex.recount_totals` recounts.

Tokens are FTS5's own (:func:`memtrove.db.text_tokens.document_tokens`, the text prepared
as the SQLite index prepares it), and a parsed query becomes the phrases of the expression
:func:`memtrove.db.sqlite.text_index.build_match` writes, in its order (a required phrase
counts twice, an excluded word once, as in FTS5). A search fetches the postings of the
query's terms in SQL and scores in Python with FTS5's ``bm25()`` arithmetic, operation for
operation, so the scores are FTS5's to the last bit; ties go by ascending doc id, as FTS5
orders them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from math import log
from typing import TYPE_CHECKING, NamedTuple

from memtrove.db.text_query import FIELD_WEIGHTS, ParsedQuery
from memtrove.db.text_tokens import document_tokens
from memtrove.text import segment_cjk

if TYPE_CHECKING:
    from memtrove.db.postgres.connection import PostgresConnection
    from memtrove.db.text_index import DocumentIndex, SearchIndex

__all__ = ["PostgresTextIndex"]

COLUMNS = 3
_K1 = 1.2
_B = 0.75
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS text_rows (idx TEXT NOT NULL, doc_id BIGINT NOT NULL, "
    "sizes BIGINT[] NOT NULL, PRIMARY KEY (idx, doc_id))",
    'CREATE TABLE IF NOT EXISTS text_postings (idx TEXT NOT NULL, term TEXT COLLATE "C" '
    "NOT NULL, doc_id BIGINT NOT NULL, col SMALLINT NOT NULL, positions INT[] NOT NULL, "
    "PRIMARY KEY (idx, term, doc_id, col))",
    "CREATE INDEX IF NOT EXISTS text_postings_doc ON text_postings (idx, doc_id)",
    "CREATE TABLE IF NOT EXISTS text_totals (idx TEXT PRIMARY KEY, rows BIGINT NOT NULL, "
    "tokens BIGINT[] NOT NULL)",
)
_INDEXES = ("documents", "archived")

# term -> doc id -> column -> positions
Postings = dict[str, dict[int, dict[int, list[int]]]]


class _Phrase(NamedTuple):
    tokens: tuple[str, ...]
    prefix: bool  # the last token is a prefix


def _storable(term: str) -> str:
    """A term as PostgreSQL text can hold it (no NUL, no lone surrogate): as it is, except
    in those rare cases, escaped."""
    if "\x00" not in term and (
        term.isascii() or not any("\ud800" <= ch <= "\udfff" for ch in term)
    ):
        return term
    raw = term.encode("utf-8", "surrogateescape")
    return raw.decode("utf-8", "backslashreplace").replace("\x00", "\\x00")


def _copy_text(value: str) -> str:
    """``value`` as a field of ``COPY``'s text format."""
    if value.isalnum():
        return value
    return (
        value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    )


def _tokens(text: str) -> tuple[str, ...]:
    return tuple(_storable(token) for token in document_tokens(text))


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


def _hits(phrase: _Phrase, postings: Postings) -> dict[int, dict[int, int]]:
    """doc id -> column -> the phrase's hits there (start positions of its tokens in a row)."""
    if not phrase.tokens:
        return {}
    lists = [postings.get(token, {}) for token in phrase.tokens[:-1]]
    last_key = ("*" if phrase.prefix else "=") + phrase.tokens[-1]
    lists.append(postings.get(last_key, {}))
    first = lists[0]
    candidates = set(first)
    for other in lists[1:]:
        candidates &= other.keys()
    hits: dict[int, dict[int, int]] = {}
    for doc_id in candidates:
        columns: dict[int, int] = {}
        for col, starts in first[doc_id].items():
            following = [set(other[doc_id].get(col, ())) for other in lists[1:]]
            count = sum(
                1
                for start in starts
                if all(start + i + 1 in positions for i, positions in enumerate(following))
            )
            if count:
                columns[col] = count
        if columns:
            hits[doc_id] = columns
    return hits


class PostgresTextIndex:
    __slots__ = ("_connection", "_ready")

    def __init__(self, connection: PostgresConnection) -> None:
        self._connection = connection
        self._ready = False

    def create(self) -> None:
        """Make the index's tables (nothing when they exist)."""
        for statement in _SCHEMA:
            self._connection.execute(statement)
        self._ready = True

    def _ensure(self) -> None:
        if not self._ready:
            row = self._connection.execute("SELECT to_regclass('text_totals')").fetchone()
            if row is None or row[0] is None:
                self.create()
            self._ready = True

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
        if query.empty:
            return []
        self._ensure()
        phrases, required, excluded = _phrases(query)
        totals = self._connection.execute(
            "SELECT rows, tokens FROM text_totals WHERE idx = ?", (index,)
        ).fetchone()
        if totals is None or int(totals[0]) <= 0:
            return []
        postings = self._postings(index, phrases)
        hits = [_hits(phrase, postings) for phrase in phrases]
        # The rows the expression matches: every required phrase, one of the others (the
        # required ones among them), no excluded one.
        searched = len(phrases) - excluded
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
        if not matched:
            return []
        ids = sorted(matched)
        if conditions or index == "archived":  # SQLite joins documents for these
            where = "".join(condition + " AND " for condition in conditions)
            rows = self._connection.execute(
                f"SELECT d.id FROM documents d WHERE {where}d.id = ANY(?::bigint[])",
                [*params, ids],
            ).fetchall()
            ids = sorted(int(row[0]) for row in rows)
        sizes = dict(
            self._connection.execute(
                "SELECT doc_id, sizes FROM text_rows WHERE idx = ? AND doc_id = ANY(?::bigint[])",
                (index, ids),
            ).fetchall()
        )
        # FTS5's bm25(), operation for operation (fts5_aux.c).
        n_rows = int(totals[0])
        avgdl = float(sum(int(size) for size in totals[1])) / float(n_rows)
        idfs = []
        for found in hits:
            n_hit = len(found)
            idf = log((n_rows - n_hit + 0.5) / (n_hit + 0.5))
            idfs.append(1e-6 if idf <= 0.0 else idf)
        weights = FIELD_WEIGHTS if index == "documents" else (1.0,) * COLUMNS
        scored: list[tuple[float, int]] = []
        for doc_id in ids:
            length = float(sum(int(size) for size in sizes[doc_id]))
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
        if limit is not None:
            scored = scored[: max(0, int(limit))]
        return [(doc_id, score) for score, doc_id in scored]

    def _postings(self, index: str, phrases: Sequence[_Phrase]) -> Postings:
        """Postings of the phrases' tokens: exact tokens by themselves; a prefix's under
        ``*prefix`` (every term starting with it, merged), and under ``=term`` for the last
        token of a phrase that is not a prefix."""
        exact: set[str] = set()
        prefixes: set[str] = set()
        for phrase in phrases:
            if not phrase.tokens:
                continue
            exact.update(phrase.tokens[:-1])
            (prefixes if phrase.prefix else exact).add(phrase.tokens[-1])
        postings: Postings = {}
        if exact:
            rows = self._connection.execute(
                "SELECT term, doc_id, col, positions FROM text_postings "
                "WHERE idx = ? AND term = ANY(?::text[])",
                (index, sorted(exact)),
            )
            for term, doc_id, col, positions in rows:
                postings.setdefault(term, {}).setdefault(doc_id, {})[col] = positions
        for term in exact:
            postings["=" + term] = postings.get(term, {})
        for prefix in sorted(prefixes):
            merged: dict[int, dict[int, list[int]]] = {}
            rows = self._connection.execute(
                "SELECT doc_id, col, positions FROM text_postings "
                "WHERE idx = ? AND term >= ? AND starts_with(term, ?)",
                (index, prefix, prefix),
            )
            for doc_id, col, positions in rows:
                merged.setdefault(doc_id, {}).setdefault(col, []).extend(positions)
            for columns in merged.values():
                for col in columns:
                    columns[col].sort()
            postings["*" + prefix] = merged
        return postings

    # -- statistics --------------------------------------------------------------------------

    def document_count(self) -> int:
        self._ensure()
        row = self._connection.execute(
            "SELECT COUNT(*) FROM text_rows WHERE idx = 'documents'"
        ).fetchone()
        return int(row[0])

    def term_counts(self, terms: Iterable[str]) -> dict[str, int]:
        self._ensure()
        wanted = list(dict.fromkeys(terms))
        counts = dict.fromkeys(wanted, 0)
        stored = {_storable(term): term for term in wanted}
        rows = self._connection.execute(
            "SELECT term, COUNT(DISTINCT doc_id) FROM text_postings "
            "WHERE idx = 'documents' AND term = ANY(?::text[]) GROUP BY term",
            (list(stored),),
        )
        for term, count in rows:
            counts[stored[term]] = int(count)
        return counts

    # -- rows --------------------------------------------------------------------------------

    def add_documents(
        self, rows: Iterable[tuple[int, str, str, str]], *, index: SearchIndex = "documents"
    ) -> None:
        self._ensure()
        documents: list[str] = []
        postings: list[str] = []
        totals = [0] * COLUMNS
        for doc_id, filepath, title, body in rows:
            sizes = []
            for col, text in enumerate((filepath, segment_cjk(title), segment_cjk(body))):
                places: dict[str, list[int]] = {}
                tokens = document_tokens(text)
                for position, token in enumerate(tokens):
                    places.setdefault(token, []).append(position)
                head = f"{index}\t"
                tail = f"\t{int(doc_id)}\t{col}\t{{"
                postings.extend(
                    head
                    + _copy_text(_storable(term))
                    + tail
                    + ",".join(map(str, positions))
                    + "}\n"
                    for term, positions in places.items()
                )
                sizes.append(len(tokens))
                totals[col] += len(tokens)
            documents.append(f"{index}\t{int(doc_id)}\t{{{','.join(map(str, sizes))}}}\n")
        if not documents:
            return
        self._copy("text_rows (idx, doc_id, sizes)", documents)
        self._copy("text_postings (idx, term, doc_id, col, positions)", postings)
        self._connection.execute(
            "INSERT INTO text_totals (idx, rows, tokens) VALUES (?, ?, ?::bigint[]) "
            "ON CONFLICT (idx) DO UPDATE SET rows = text_totals.rows + excluded.rows, "
            "tokens = ARRAY(SELECT a + b FROM unnest(text_totals.tokens, excluded.tokens) "
            "AS t (a, b))",
            (index, len(documents), totals),
        )

    def _copy(self, target: str, lines: Sequence[str]) -> None:
        """Lines of ``COPY``'s text format into ``target``: many times faster than inserts."""
        from memtrove.db.postgres.connection import is_driver_error, mapped_error

        try:
            cursor = self._connection.raw.cursor()
            with cursor, cursor.copy(f"COPY {target} FROM STDIN") as copy:
                copy.write("".join(lines))
        except Exception as error:
            if is_driver_error(error):
                raise mapped_error(error) from None
            raise

    def remove_documents(
        self, doc_ids: Iterable[int], *, index: DocumentIndex = "documents"
    ) -> None:
        """Take rows out; like a ``contentless_delete`` FTS5 table, leaves the totals as
        they are (:meth:`recount_totals` makes them exact again)."""
        if index not in _INDEXES:
            raise ValueError(f"the PostgreSQL text index has no {index!r} index")
        self._ensure()
        ids = [int(doc_id) for doc_id in doc_ids]
        if not ids:
            return
        for table in ("text_postings", "text_rows"):
            self._connection.execute(
                f"DELETE FROM {table} WHERE idx = ? AND doc_id = ANY(?::bigint[])", (index, ids)
            )

    # -- BM25 totals -------------------------------------------------------------------------

    def recount_totals(self, indexes: Sequence[DocumentIndex]) -> None:
        self._ensure()
        with self._connection.transaction():
            for index in indexes:
                if index not in _INDEXES:
                    raise ValueError(f"the PostgreSQL text index has no {index!r} index")
                self._connection.execute(
                    "INSERT INTO text_totals (idx, rows, tokens) "
                    "SELECT ?, COUNT(*), ARRAY[COALESCE(SUM(sizes[1]), 0), "
                    "COALESCE(SUM(sizes[2]), 0), COALESCE(SUM(sizes[3]), 0)]::bigint[] "
                    "FROM text_rows WHERE idx = ? "
                    "ON CONFLICT (idx) DO UPDATE SET rows = excluded.rows, "
                    "tokens = excluded.tokens",
                    (index, index),
                )
