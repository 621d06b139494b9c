"""The full-text index of a SQLite vault (:class:`memtrove.db.text_index.TextIndex`): FTS5.

Tables: ``documents_fts`` and ``archived_fts`` (filepath, title, body; Porter stems,
contentless, rowid = ``documents.id``), ``passages_fts`` (:mod:`memtrove.db.sqlite.passages`),
``entities_fts`` (entity id and type unindexed, name), and ``documents_vocab``, the
``fts5vocab`` view of ``documents_fts``'s terms. CJK text is split into single characters
on the way in (:func:`memtrove.text.segment_cjk`), since FTS5's tokenizer keeps a CJK run
as one token.

User text never reaches FTS5's query grammar: :func:`build_match` writes a MATCH
expression from a parsed query in which every token is a quoted string, so ``AND``,
``NEAR``, ``:``, ``^``, parentheses and stray quotes are plain words or separators, never
syntax errors. ``documents`` ranks by ``bm25()`` with the column weights of
:data:`memtrove.db.text_query.FIELD_WEIGHTS`, ``archived`` by FTS5's plain rank. Without
conditions a search reads ``documents_fts`` alone and FTS5 sorts by rank itself, the
fastest path it has. The BM25 totals of a contentless table drift as rows are deleted;
:mod:`memtrove.db.sqlite.fts_totals` recounts them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from memtrove.db.text_query import FIELD_WEIGHTS, ParsedQuery
from memtrove.errors import InvalidQueryError
from memtrove.text import segment_cjk

if TYPE_CHECKING:  # sqlean.py mirrors the standard library's sqlite3 module exactly
    from sqlite3 import OperationalError

    from memtrove.db.engine import Connection
    from memtrove.db.text_index import DocumentIndex, SearchIndex
    from memtrove.db.text_tokens import Tokenized
else:
    from sqlean import OperationalError

__all__ = ["TABLES", "SqliteTextIndex", "build_match"]

TABLES = {"documents": "documents_fts", "archived": "archived_fts", "passages": "passages_fts"}
_RANKING = "bm25({}, {}, {})".format(*FIELD_WEIGHTS)
_SEARCH = (
    "SELECT rowid, rank FROM documents_fts WHERE documents_fts MATCH ? "
    "AND rank MATCH ? ORDER BY rank"
)
_SEARCH_FILTERED = (
    "SELECT documents_fts.rowid, documents_fts.rank FROM documents_fts "
    "JOIN documents d ON d.id = documents_fts.rowid "
    "WHERE documents_fts MATCH ? AND documents_fts.rank MATCH ? AND "
)
_SEARCH_ARCHIVED = (
    "SELECT a.rowid, a.rank FROM archived_fts a JOIN documents d ON d.id = a.rowid "
    "WHERE archived_fts MATCH ?"
)
_MATCH_ENTITIES = """
    SELECT n.entity_id, n.entity_type, n.name, n.mention_count, n.vault
    FROM (SELECT entity_id FROM entities_fts WHERE entities_fts MATCH ? LIMIT ?) AS f
    LEFT JOIN entity_nodes n ON n.entity_id = f.entity_id
    """
_BEST_ENTITIES = """
    SELECT n.entity_id, n.entity_type, n.name, n.mention_count
    FROM (SELECT entity_id, rank FROM entities_fts WHERE entities_fts MATCH ?
          ORDER BY rank LIMIT ?) AS f
    CROSS JOIN entity_nodes n ON n.entity_id = f.entity_id
    WHERE n.vault = ?
    ORDER BY f.rank
    """


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def build_match(parsed: ParsedQuery) -> str | None:
    """The FTS5 MATCH expression for a parsed query, or None when nothing is searchable."""
    if parsed.empty:
        return None
    optional = [_quote(segment_cjk(term).strip()) for term in parsed.terms]
    optional += [_quote(prefix) + "*" for prefix in parsed.prefixes]
    required = [_quote(segment_cjk(phrase).strip()) for phrase in parsed.phrases]
    if required and optional:
        # Phrases are required; the bare terms only add to the ranking (the OR-group is
        # always satisfied by the phrases themselves).
        expression = " AND ".join(required) + " AND (" + " OR ".join(required + optional) + ")"
    elif required:
        expression = " AND ".join(required)
    else:
        expression = "(" + " OR ".join(optional) + ")"
    if parsed.excluded:
        expression = (
            f"({expression}) NOT (" + " OR ".join(_quote(word) for word in parsed.excluded) + ")"
        )
    return expression


def _prefix_match(prefixes: Sequence[str]) -> str:
    return " OR ".join(_quote(prefix) + "*" for prefix in prefixes)


def _refused(error: OperationalError) -> bool:
    """Whether FTS5 refused a MATCH expression (rather than the database failing)."""
    text = str(error).lower()
    return "fts5" in text or "syntax" in text


class SqliteTextIndex:
    __slots__ = ("_connection",)

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

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
        match = build_match(query)
        if match is None:
            return []
        arguments: list[object]
        if index == "archived":
            where = "".join(" AND " + condition for condition in conditions)
            sql = _SEARCH_ARCHIVED + where + " ORDER BY a.rank"
            arguments = [match, *params]
        elif conditions:
            sql = _SEARCH_FILTERED + " AND ".join(conditions) + " ORDER BY documents_fts.rank"
            arguments = [match, _RANKING, *params]
        else:  # documents_fts alone: FTS5 sorts by rank itself, the fastest path it has
            sql, arguments = _SEARCH, [match, _RANKING]
        if limit is not None:
            sql += " LIMIT ?"
            arguments.append(int(limit))
        try:
            rows: list[tuple[int, float]] = self._connection.execute(sql, arguments).fetchall()
        except OperationalError as error:
            if _refused(error):
                raise InvalidQueryError(str(error)) from error
            raise
        return rows

    def search_passages(
        self,
        query: ParsedQuery,
        limit: int,
        conditions: Sequence[str] = (),
        params: Sequence[object] = (),
    ) -> list[tuple[int, float, int]]:
        match = build_match(query)
        if match is None:
            return []
        try:
            from memtrove.db.sqlite.passages import search_passages

            return search_passages(self._connection, match, limit, conditions, params)
        except OperationalError as error:
            if _refused(error):
                raise InvalidQueryError(str(error)) from error
            raise

    def title_matches(self, phrases: Sequence[str], limit: int) -> list[int]:
        expression = " OR ".join(f"title : {_quote(phrase)}" for phrase in phrases if phrase)
        if not expression:
            return []
        try:
            rows = self._connection.execute(
                "SELECT rowid FROM documents_fts WHERE documents_fts MATCH ? LIMIT ?",
                (expression, limit),
            ).fetchall()
        except OperationalError:
            return []
        return [int(row[0]) for row in rows]

    def indexed_condition(self, alias: str) -> str:
        return f"EXISTS (SELECT 1 FROM documents_fts WHERE rowid = {alias}.id)"

    # -- statistics --------------------------------------------------------------------------

    def document_count(self) -> int:
        # Counted on FTS5's ``docsize`` shadow table (one small row per indexed document),
        # which SQLite counts from its b-tree in microseconds; counting ``documents`` scans.
        row = self._connection.execute("SELECT COUNT(*) FROM documents_fts_docsize").fetchone()
        return int(row[0])

    def term_counts(self, terms: Iterable[str]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for term in terms:  # one indexed lookup each; IN would scan the vocabulary
            row = self._connection.execute(
                "SELECT doc FROM documents_vocab WHERE term = ?", (term,)
            ).fetchone()
            counts[term] = int(row[0]) if row else 0
        return counts

    def vocabulary(self) -> Iterator[tuple[str, int]]:
        return iter(self._connection.execute("SELECT term, doc FROM documents_vocab"))

    # -- rows --------------------------------------------------------------------------------

    takes_tokens = False  # FTS5 tokenizes

    def add_documents(
        self,
        rows: Iterable[tuple[int, str, str, str]],
        *,
        index: SearchIndex = "documents",
        tokens: Sequence[Tokenized | None] = (),
    ) -> None:
        table = TABLES[index]
        self._connection.executemany(
            f"INSERT INTO {table} (rowid, filepath, title, body) VALUES (?, ?, ?, ?)",
            [
                (doc_id, filepath, segment_cjk(title), segment_cjk(body))
                for doc_id, filepath, title, body in rows
            ],
        )

    def add_passages(self, doc_id: int, texts: Sequence[str]) -> None:
        from memtrove.db.sqlite.passages import add_passages  # (not on a search's path)

        add_passages(self._connection, doc_id, texts)

    def remove_documents(
        self, doc_ids: Iterable[int], *, index: DocumentIndex = "documents"
    ) -> None:
        if index == "passages":
            from memtrove.db.sqlite.passages import remove_passages

            remove_passages(self._connection, doc_ids)
            return
        table = TABLES[index]
        for doc_id in doc_ids:
            self._connection.execute(f"DELETE FROM {table} WHERE rowid = ?", (doc_id,))

    def clear(self, index: DocumentIndex) -> None:
        if index == "passages":
            from memtrove.db.sqlite.passages import clear_passages

            clear_passages(self._connection)
            return
        table = TABLES[index]
        self._connection.execute(f"INSERT INTO {table} ({table}) VALUES ('delete-all')")

    # -- entities ----------------------------------------------------------------------------

    def add_entity(
        self, entity_id: str, name: str, entity_type: str, *, row: int | None = None
    ) -> None:
        if row is None:
            self._connection.execute(
                "INSERT INTO entities_fts (entity_id, name, entity_type) VALUES (?, ?, ?)",
                (entity_id, name, entity_type),
            )
        else:
            self._connection.execute(
                "INSERT INTO entities_fts (rowid, entity_id, name, entity_type) "
                "VALUES (?, ?, ?, ?)",
                (row, entity_id, name, entity_type),
            )

    def rename_entity(self, entity_id: str, name: str) -> None:
        self._connection.execute(
            "UPDATE entities_fts SET name = ? WHERE entity_id = ?", (name, entity_id)
        )

    def entity_rows(self) -> Iterator[tuple[int, str, str, str]]:
        return iter(
            self._connection.execute(
                "SELECT rowid, entity_id, name, entity_type FROM entities_fts ORDER BY rowid"
            )
        )

    def match_entities(self, prefixes: Sequence[str], limit: int) -> list[tuple[Any, ...]]:
        if not prefixes:
            return []
        rows: list[tuple[Any, ...]] = self._connection.execute(
            _MATCH_ENTITIES, (_prefix_match(prefixes), limit)
        ).fetchall()
        return rows

    def best_entities(
        self, prefixes: Sequence[str], limit: int, vault: str
    ) -> list[tuple[str, str, str, int]]:
        if not prefixes:
            return []
        rows: list[tuple[str, str, str, int]] = self._connection.execute(
            _BEST_ENTITIES, (_prefix_match(prefixes), limit, vault)
        ).fetchall()
        return rows

    # -- BM25 totals and housekeeping --------------------------------------------------------

    def recount_totals(self, indexes: Sequence[DocumentIndex]) -> None:
        from memtrove.db.sqlite import fts_totals

        fts_totals.repair_fts_totals(self._connection, [TABLES[index] for index in indexes])

    def settle_totals(self, indexes: Sequence[DocumentIndex] = ("documents", "passages")) -> bool:
        from memtrove.db.sqlite import fts_totals

        return fts_totals.settle_fts_totals(self._connection, [TABLES[index] for index in indexes])

    def totals_record(self, index: DocumentIndex = "documents") -> bytes | None:
        from memtrove.db.sqlite import fts_totals

        return fts_totals.read_totals_record(self._connection, TABLES[index])

    def restore_totals_record(self, record: bytes, index: DocumentIndex = "documents") -> None:
        from memtrove.db.sqlite import fts_totals

        fts_totals.write_totals_record(self._connection, record, TABLES[index])

    def compact(self, indexes: Sequence[DocumentIndex]) -> None:
        for index in indexes:
            table = TABLES[index]
            self._connection.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
