"""Where the PostgreSQL text index keeps its rows (:mod:`memtrove.db.postgres.text_index`).

Tables, one set for the ``documents``, ``archived`` and ``passages`` indexes (told apart by
``idx``: 0, 1, 2):

- ``text_rows (idx, doc_id, sizes)``: one row per indexed row, with the tokens of each
  column, as FTS5's ``docsize``.
- ``text_postings (idx, term, doc_id, counts, positions)``: one row per term of each row:
  its hits in each column (``counts``) and their token positions (from 0), column after
  column, as FTS5's ``detail=full`` index holds them. The primary key (idx, term, doc_id)
  serves term and prefix lookups (``term`` sorts bytewise, ``COLLATE "C"``, as FTS5's
  terms do); ``text_postings_doc`` serves removals.
- ``text_totals (idx, rows, tokens)``: the BM25 totals. As in a ``contentless_delete`` FTS5
  table, taking rows out does not lower them (:mod:`memtrove.db.sqlite.fts_totals`);
  :meth:`TextStore.recount` recounts.

Writes are buffered: :meth:`TextStore.add` keeps the rows of a transaction in memory and
:meth:`TextStore.flush` sends them with two ``COPY`` statements, before anything reads or
removes rows, before a savepoint and before the commit (the connection calls it), so every
statement still sees what the transaction wrote. A rolled-back transaction or savepoint
drops what it buffered (:meth:`TextStore.discard`). One ``COPY`` per batch of documents
instead of one per document is what makes a first index fast.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple

from memtrove.db.text_tokens import document_tokens

if TYPE_CHECKING:
    from memtrove.db.postgres.connection import PostgresConnection

__all__ = [
    "COLUMNS",
    "INDEXES",
    "Posting",
    "Postings",
    "TextStore",
    "storable",
]

INDEXES = {"documents": 0, "archived": 1, "passages": 2}
COLUMNS = {0: 3, 1: 3, 2: 1}  # columns of each index
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS text_rows (idx SMALLINT NOT NULL, doc_id BIGINT NOT NULL, "
    "sizes INT[] NOT NULL, PRIMARY KEY (idx, doc_id))",
    'CREATE TABLE IF NOT EXISTS text_postings (idx SMALLINT NOT NULL, term TEXT COLLATE "C" '
    "NOT NULL, doc_id BIGINT NOT NULL, counts INT[] NOT NULL, positions INT[] NOT NULL, "
    "PRIMARY KEY (idx, term, doc_id))",
    "CREATE INDEX IF NOT EXISTS text_postings_doc ON text_postings (idx, doc_id)",
    "CREATE TABLE IF NOT EXISTS text_totals (idx SMALLINT PRIMARY KEY, rows BIGINT NOT NULL, "
    "tokens BIGINT[] NOT NULL)",
)
_FLUSH_ROWS = 20_000  # postings buffered before a flush even inside a transaction


class Posting(NamedTuple):
    counts: tuple[int, ...]  # hits in each column
    positions: tuple[int, ...] | None  # their positions, column after column (when asked)

    def column_positions(self, col: int) -> tuple[int, ...]:
        assert self.positions is not None
        start = sum(self.counts[:col])
        return self.positions[start : start + self.counts[col]]


# term -> doc id -> posting
Postings = dict[str, dict[int, Posting]]


def storable(term: str) -> str:
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


def _array(values: Iterable[int]) -> str:
    return "{" + ",".join(map(str, values)) + "}"


class TextStore:
    __slots__ = ("_connection", "_pending_postings", "_pending_rows", "_pending_totals", "_ready")

    def __init__(self, connection: PostgresConnection) -> None:
        self._connection = connection
        self._ready = False
        self._pending_rows: list[str] = []
        self._pending_postings: list[str] = []
        self._pending_totals: dict[int, list[int]] = {}  # idx -> [rows, tokens per column]

    # -- tables ------------------------------------------------------------------------------

    def create(self) -> None:
        """Make the tables (nothing when they exist)."""
        for statement in SCHEMA:
            self._connection.execute(statement)
        self._ready = True

    def ready(self) -> None:
        """Flush what is buffered, making the tables first when they are missing: call it
        before reading any of them."""
        if not self._ready:
            row = self._connection.execute("SELECT to_regclass('text_totals')").fetchone()
            if row is None or row[0] is None:
                self.create()
            self._ready = True
        if self._pending_rows:
            self.flush()

    # -- writes ------------------------------------------------------------------------------

    def add(self, idx: int, rows: Iterable[tuple[int, Sequence[str]]]) -> None:
        """Buffer rows of (row id, text of each column, prepared for the tokenizer)."""
        columns = COLUMNS[idx]
        totals = self._pending_totals.setdefault(idx, [0] * (columns + 1))
        head = f"{idx}\t"
        for doc_id, texts in rows:
            places: dict[str, list[list[int]]] = {}
            sizes = []
            for col, text in enumerate(texts):
                tokens = document_tokens(text)
                for position, token in enumerate(tokens):
                    found = places.get(token)
                    if found is None:
                        found = places[token] = [[] for _ in range(columns)]
                    found[col].append(position)
                sizes.append(len(tokens))
                totals[col + 1] += len(tokens)
            totals[0] += 1
            tail = f"\t{int(doc_id)}\t"
            self._pending_postings.extend(
                head
                + _copy_text(storable(term))
                + tail
                + _array(len(hits) for hits in found)
                + "\t"
                + _array(position for hits in found for position in hits)
                + "\n"
                for term, found in places.items()
            )
            self._pending_rows.append(f"{idx}\t{int(doc_id)}\t{_array(sizes)}\n")
        if len(self._pending_postings) >= _FLUSH_ROWS or not self._connection.in_transaction:
            self.ready()

    def flush(self) -> None:
        """Send the buffered rows (inside the caller's transaction, if any)."""
        if not self._pending_rows:
            return
        if not self._ready:
            self.ready()  # makes the tables, then flushes
            return
        rows, postings = self._pending_rows, self._pending_postings
        totals = self._pending_totals
        self.discard()
        self._copy("text_rows (idx, doc_id, sizes)", rows)
        self._copy("text_postings (idx, term, doc_id, counts, positions)", postings)
        for idx, (count, *tokens) in sorted(totals.items()):
            self._connection.execute(
                "INSERT INTO text_totals (idx, rows, tokens) VALUES (?, ?, ?::bigint[]) "
                "ON CONFLICT (idx) DO UPDATE SET rows = text_totals.rows + excluded.rows, "
                "tokens = ARRAY(SELECT a + b FROM unnest(text_totals.tokens, excluded.tokens) "
                "AS t (a, b))",
                (idx, count, tokens),
            )

    def discard(self) -> None:
        """Forget the buffered rows (their transaction or savepoint was rolled back)."""
        self._pending_rows = []
        self._pending_postings = []
        self._pending_totals = {}

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

    def remove(self, idx: int, doc_ids: Sequence[int]) -> None:
        self.ready()
        if not doc_ids:
            return
        for table in ("text_postings", "text_rows"):
            self._connection.execute(
                f"DELETE FROM {table} WHERE idx = ? AND doc_id = ANY(?::bigint[])",
                (idx, list(doc_ids)),
            )

    def remove_ranges(self, idx: int, ranges: Sequence[tuple[int, int]]) -> None:
        """Take out the rows whose ids lie in one of the (first, last) ranges."""
        self.ready()
        for first, last in ranges:
            for table in ("text_postings", "text_rows"):
                self._connection.execute(
                    f"DELETE FROM {table} WHERE idx = ? AND doc_id BETWEEN ? AND ?",
                    (idx, first, last),
                )

    def clear(self, idx: int) -> None:
        self.ready()
        for table in ("text_postings", "text_rows", "text_totals"):
            self._connection.execute(f"DELETE FROM {table} WHERE idx = ?", (idx,))

    # -- reads -------------------------------------------------------------------------------

    def postings(
        self,
        idx: int,
        exact: Iterable[str],
        prefixes: Iterable[str],
        placed: Iterable[str],
    ) -> Postings:
        """Postings of the ``exact`` terms under ``=term``, and of every term starting with
        each of ``prefixes``, merged, under ``*prefix``; positions only for the terms and
        prefixes in ``placed`` (those of phrases of several tokens)."""
        self.ready()
        placed = set(placed)
        postings: Postings = {}
        wanted = sorted(set(exact))
        if wanted:
            rows = self._connection.execute(
                "SELECT term, doc_id, counts, CASE WHEN term = ANY(?::text[]) THEN positions "
                "END FROM text_postings WHERE idx = ? AND term = ANY(?::text[])",
                (sorted(placed), idx, wanted),
            )
            for term, doc_id, counts, positions in rows:
                postings.setdefault("=" + term, {})[doc_id] = Posting(
                    tuple(counts), None if positions is None else tuple(positions)
                )
        for prefix in sorted(set(prefixes)):
            with_positions = prefix in placed
            merged: dict[int, list[list[int]]] = {}
            rows = self._connection.execute(
                f"SELECT doc_id, counts, {'positions' if with_positions else 'NULL'} "
                "FROM text_postings WHERE idx = ? AND term >= ? AND starts_with(term, ?)",
                (idx, prefix, prefix),
            )
            columns = COLUMNS[idx]
            for doc_id, counts, positions in rows:
                found = merged.setdefault(doc_id, [[] for _ in range(columns)])
                start = 0
                for col, count in enumerate(counts):
                    if with_positions:
                        found[col].extend(positions[start : start + count])
                    else:
                        found[col].extend(range(count))  # only their number matters
                    start += count
            postings["*" + prefix] = {
                doc_id: Posting(
                    tuple(len(hits) for hits in found),
                    tuple(p for hits in found for p in sorted(hits)) if with_positions else None,
                )
                for doc_id, found in merged.items()
            }
        return postings

    def sizes(self, idx: int, doc_ids: Sequence[int]) -> dict[int, int]:
        """Each row's length in tokens (its columns together)."""
        self.ready()
        rows = self._connection.execute(
            "SELECT doc_id, sizes FROM text_rows WHERE idx = ? AND doc_id = ANY(?::bigint[])",
            (idx, list(doc_ids)),
        )
        return {int(doc_id): sum(int(size) for size in sizes) for doc_id, sizes in rows}

    def totals(self, idx: int) -> tuple[int, list[int]] | None:
        """The recorded (rows, tokens per column), None before any row."""
        self.ready()
        row = self._connection.execute(
            "SELECT rows, tokens FROM text_totals WHERE idx = ?", (idx,)
        ).fetchone()
        return None if row is None else (int(row[0]), [int(value) for value in row[1]])

    def set_totals(self, idx: int, rows: int, tokens: Sequence[int]) -> None:
        self.ready()
        self._connection.execute(
            "INSERT INTO text_totals (idx, rows, tokens) VALUES (?, ?, ?::bigint[]) "
            "ON CONFLICT (idx) DO UPDATE SET rows = excluded.rows, tokens = excluded.tokens",
            (idx, rows, list(tokens)),
        )

    def row_count(self, idx: int) -> int:
        self.ready()
        row = self._connection.execute(
            "SELECT COUNT(*) FROM text_rows WHERE idx = ?", (idx,)
        ).fetchone()
        return int(row[0])

    def recount(self, idx: int) -> None:
        """Make ``idx``'s totals exact again (the caller's transaction)."""
        self.ready()
        columns = COLUMNS[idx]
        sums = ", ".join(f"COALESCE(SUM(sizes[{col + 1}]), 0)" for col in range(columns))
        self._connection.execute(
            "INSERT INTO text_totals (idx, rows, tokens) "
            f"SELECT ?, COUNT(*), ARRAY[{sums}]::bigint[] FROM text_rows WHERE idx = ? "
            "ON CONFLICT (idx) DO UPDATE SET rows = excluded.rows, tokens = excluded.tokens",
            (idx, idx),
        )

    def term_counts(self, idx: int, terms: Sequence[str]) -> dict[str, int]:
        """Rows holding each of ``terms`` (as stored), for those held."""
        self.ready()
        rows = self._connection.execute(
            "SELECT term, COUNT(*) FROM text_postings WHERE idx = ? AND term = ANY(?::text[]) "
            "GROUP BY term",
            (idx, list(terms)),
        )
        return {str(term): int(count) for term, count in rows}

    def vocabulary(self, idx: int) -> Iterator[tuple[str, int]]:
        self.ready()
        rows = self._connection.execute(
            "SELECT term, COUNT(*) FROM text_postings WHERE idx = ? GROUP BY term ORDER BY term",
            (idx,),
        ).fetchall()
        return iter([(str(term), int(count)) for term, count in rows])

    def has_row(self, idx: int) -> str:
        """A SQL condition on ``{alias}.id``: the id has a row in ``idx``."""
        return f"EXISTS (SELECT 1 FROM text_rows WHERE idx = {int(idx)} AND doc_id = {{alias}}.id)"
