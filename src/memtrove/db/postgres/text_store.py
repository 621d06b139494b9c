"""Where the PostgreSQL text index keeps its rows, and its BM25 query
(:mod:`memtrove.db.postgres.text_index`).

The index is built as FTS5 builds its own: in *segments*. Each flush (the rows a
transaction wrote) becomes one segment holding, for each of its terms, one row of arrays;
segments are merged as they pile up; a removed row is marked dead in its segment until a
merge drops it. Inserting a document is then a share of a few hundred array rows per
batch instead of a few hundred rows of its own, and a search reads a handful of rows per
term.

Tables (``idx`` tells the indexes apart: ``documents`` 0, ``archived`` 1, ``passages`` 2):

- ``text_rows (idx, doc_id, seg, sizes)``: each live row, the segment holding it, and the
  tokens of each of its columns (FTS5's ``docsize``).
- ``text_postings (idx, term, seg, docs, c0, c1, c2, lengths, positions)``: for each term
  of each segment, the rows holding it, their hits in each column, their lengths in tokens
  (so that BM25 needs nothing else) and their positions (``positions``: row after row,
  column after column, ascending, 4 bytes each, big-endian; a row's share follows from its
  counts), read only for phrases of several tokens. ``term`` sorts bytewise (``COLLATE
  "C"``), as FTS5's terms do, so a prefix is a range of the primary key. The arrays are
  stored uncompressed (m029).
- ``text_segments (idx, seg, level)`` and ``text_dead (idx, doc_id, seg)``: the segments,
  and the rows taken out of them since their last merge.
- ``text_totals (idx, rows, tokens)``: the BM25 totals. As in a ``contentless_delete`` FTS5
  table, taking rows out does not lower them (:mod:`memtrove.db.sqlite.fts_totals`);
  :meth:`TextStore.recount` recounts.

Writes are buffered: :meth:`TextStore.add` keeps a transaction's rows in memory (their
tokens as numbers) and :meth:`TextStore.flush` writes them as one segment with binary
``COPY`` (:mod:`memtrove.db.postgres.text_batch`) before anything reads or
removes rows, before a savepoint and before the commit (the connection calls it), so
every statement still sees what its transaction wrote; a rolled-back transaction or
savepoint drops what it buffered (:meth:`TextStore.discard`).

BM25 is computed in SQL (:meth:`TextStore.scores`) with FTS5's arithmetic in FTS5's order
of operations (IEEE doubles, the phrases summed in order), so the scores are FTS5's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memtrove.db.postgres.text_batch import Batch
    from memtrove.db.postgres.text_sql import ServerConnection
    from memtrove.db.text_tokens import Tokenized

from memtrove.db.postgres.text_sql import Slot, live_entries, term_slot

__all__ = ["COLUMNS", "INDEXES", "TABLES", "TextStore"]

TABLES = ("text_segments", "text_rows", "text_postings", "text_dead", "text_totals")
INDEXES = {"documents": 0, "archived": 1, "passages": 2}
COLUMNS = {0: 3, 1: 3, 2: 1}  # columns of each index
# For a merge: a postings row's entries (``u``: doc, c0, c1, c2, len), with where each one's
# positions lie in its ``positions`` (``b.blob``, read once per row): ``size`` bytes from
# byte ``at``.
_ENTRIES = (
    "CROSS JOIN LATERAL (SELECT p.positions || ''::bytea AS blob) b "
    "CROSS JOIN LATERAL (SELECT e.doc, e.c0, e.c1, e.c2, e.len, "
    "4 * (e.c0 + e.c1 + e.c2) AS size, "
    "(4 * (SUM(e.c0 + e.c1 + e.c2) OVER (ORDER BY e.k) - (e.c0 + e.c1 + e.c2)))::int AS at "
    "FROM unnest(p.docs, p.c0, p.c1, p.c2, p.lengths) WITH ORDINALITY "
    "AS e (doc, c0, c1, c2, len, k)) u"
)
_FLUSH_ROWS = 5_000  # rows buffered before a flush even inside a transaction
_FANOUT = 8  # segments of one level merged into one of the next
# A segment's level: 0 under 8 rows, 1 under 64, 2 from 64 (merged only by optimize: a first
# index writes segments of a few hundred rows, and rewriting them costs as much as writing).
_LEVELS = (8, 64)
_TOP = len(_LEVELS)


def _level(rows: int) -> int:
    return sum(rows >= bound for bound in _LEVELS)


class TextStore:
    """The tables of the module doc (made by the vault's migrations)."""

    __slots__ = ("_connection", "_pending")

    def __init__(self, connection: ServerConnection) -> None:
        self._connection = connection
        self._pending: dict[int, Batch] = {}

    def ready(self) -> None:
        """Write what is buffered: call it before reading any of the tables."""
        if self._pending:
            self.flush()

    # -- writes ------------------------------------------------------------------------------

    def add(
        self,
        idx: int,
        rows: Iterable[tuple[int, Sequence[str]]],
        tokens: Sequence[Tokenized | None] = (),
    ) -> None:
        """Buffer rows of (row id, text of each column, prepared for the tokenizer); a row
        whose ``tokens`` (in the order of ``rows``) are given is not tokenized again."""
        batch = self._pending.get(idx)
        if batch is None:
            from memtrove.db.postgres.text_batch import Batch  # numpy: writers only

            batch = self._pending[idx] = Batch(COLUMNS[idx])
        for number, (doc_id, texts) in enumerate(rows):
            given = tokens[number] if number < len(tokens) else None
            if given is None or not batch.add_tokenized(doc_id, given):
                batch.add(doc_id, texts)
        queued = sum(len(batch) for batch in self._pending.values())
        if queued >= _FLUSH_ROWS or not self._connection.in_transaction:
            self.ready()

    def flush(self) -> None:
        """Write the buffered rows as one segment per index (inside the caller's
        transaction, if any), then merge segments that piled up."""
        if not self._pending:
            return
        from memtrove.db.postgres.text_batch import copies

        pending, self._pending = self._pending, {}
        for idx, batch in sorted(pending.items()):
            seg = int(self._connection.execute("SELECT nextval('text_segment_ids')").fetchone()[0])
            for target, rows, chunks in copies(batch, idx, seg):
                self._connection.copy_binary(target, chunks, rows)
            self._connection.execute(
                "INSERT INTO text_segments (idx, seg, level) VALUES (?, ?, ?)",
                (idx, seg, _level(len(batch))),
            )
            count, *tokens = batch.totals
            self._connection.execute(
                "INSERT INTO text_totals (idx, rows, tokens) VALUES (?, ?, ?::bigint[]) "
                "ON CONFLICT (idx) DO UPDATE SET rows = text_totals.rows + excluded.rows, "
                "tokens = ARRAY(SELECT a + b FROM unnest(text_totals.tokens, excluded.tokens) "
                "AS t (a, b))",
                (idx, count, tokens),
            )
            self._merge(idx)

    def discard(self) -> None:
        """Forget the buffered rows (their transaction or savepoint was rolled back)."""
        self._pending = {}

    def _merge(self, idx: int) -> None:
        """Merge the segments of a level that has :data:`_FANOUT` of them into one of the
        next level, dropping their dead entries; repeated up the levels."""
        while True:
            row = self._connection.execute(
                "SELECT level, array_agg(seg ORDER BY seg) FROM text_segments WHERE idx = ? "
                "AND level < ? GROUP BY level HAVING COUNT(*) >= ? ORDER BY level LIMIT 1",
                (idx, _TOP, _FANOUT),
            ).fetchone()
            if row is None:
                return
            self.merge_segments(idx, [int(seg) for seg in row[1]])

    def merge_segments(self, idx: int, segs: Sequence[int]) -> None:
        """Rewrite segments ``segs`` of ``idx`` as one new segment."""
        seg = int(self._connection.execute("SELECT nextval('text_segment_ids')").fetchone()[0])
        self._connection.execute(
            "INSERT INTO text_postings (idx, term, seg, docs, c0, c1, c2, lengths, positions) "
            "SELECT p.idx, p.term, ?, array_agg(u.doc ORDER BY u.doc), "
            "array_agg(u.c0 ORDER BY u.doc), array_agg(u.c1 ORDER BY u.doc), "
            "array_agg(u.c2 ORDER BY u.doc), array_agg(u.len ORDER BY u.doc), "
            "string_agg(substring(b.blob FROM u.at + 1 FOR u.size), ''::bytea ORDER BY u.doc) "
            f"FROM text_postings p {_ENTRIES} "
            "WHERE p.idx = ? AND p.seg = ANY(?::bigint[]) AND NOT EXISTS (SELECT 1 FROM "
            "text_dead t WHERE t.idx = p.idx AND t.doc_id = u.doc AND t.seg = p.seg) "
            "GROUP BY p.idx, p.term",
            (seg, idx, list(segs)),
        )
        self._connection.execute(
            "UPDATE text_rows SET seg = ? WHERE idx = ? AND seg = ANY(?::bigint[])",
            (seg, idx, list(segs)),
        )
        for table in ("text_postings", "text_dead", "text_segments"):
            self._connection.execute(
                f"DELETE FROM {table} WHERE idx = ? AND seg = ANY(?::bigint[])", (idx, list(segs))
            )
        rows = self._connection.execute(
            "SELECT COUNT(*) FROM text_rows WHERE idx = ? AND seg = ?", (idx, seg)
        ).fetchone()
        self._connection.execute(
            "INSERT INTO text_segments (idx, seg, level) VALUES (?, ?, ?)",
            (idx, seg, _level(int(rows[0]))),
        )

    def optimize(self, idx: int) -> None:
        """Merge every segment of ``idx`` into one, dropping every dead entry."""
        self.ready()
        rows = self._connection.execute(
            "SELECT seg, level FROM text_segments WHERE idx = ?", (idx,)
        ).fetchall()
        if len(rows) > 1 or not self._no_dead(idx):
            self.merge_segments(idx, [int(seg) for seg, _ in rows])

    def remove(self, idx: int, doc_ids: Sequence[int]) -> None:
        self.ready()
        if doc_ids:
            self._remove_where(idx, "doc_id = ANY(?::bigint[])", (list(doc_ids),))

    def remove_ranges(self, idx: int, ranges: Sequence[tuple[int, int]]) -> None:
        """Take out the rows whose ids lie in one of the (first, last) ranges."""
        self.ready()
        for first, last in ranges:
            self._remove_where(idx, "doc_id BETWEEN ? AND ?", (first, last))

    def _remove_where(self, idx: int, condition: str, params: Sequence[object]) -> None:
        self._connection.execute(
            "WITH gone AS (DELETE FROM text_rows WHERE idx = ? AND "
            f"{condition} RETURNING idx, doc_id, seg) "
            "INSERT INTO text_dead (idx, doc_id, seg) SELECT idx, doc_id, seg FROM gone "
            "ON CONFLICT DO NOTHING",
            (idx, *params),
        )

    def clear(self, idx: int) -> None:
        self.ready()
        for table in (
            "text_postings",
            "text_rows",
            "text_dead",
            "text_segments",
            "text_totals",
        ):
            self._connection.execute(f"DELETE FROM {table} WHERE idx = ?", (idx,))

    # -- reads -------------------------------------------------------------------------------

    def scores(
        self,
        idx: int,
        slots: Sequence[Slot | None],
        extra: Sequence[tuple[int, int, int, int, int, int]],
        required: int,
        excluded: int,
        weights: Sequence[float],
        *,
        documents: bool = False,
        conditions: Sequence[str] = (),
        params: Sequence[object] = (),
        stride: int = 1,
        limit: int | None = None,
    ) -> list[tuple[int, float]]:
        """(row id, FTS5's ``bm25()``) of every row the phrases match (the first ``limit``
        when given), best first, ties by
        id. Slot ``i`` is phrase ``i``: its terms (a :class:`Slot`), or None when its hits
        are given in ``extra`` as (slot, row, hits per column, length), for phrases of
        several tokens. The first ``required`` phrases must all match, else one of the
        others; none of the last ``excluded`` may. ``documents`` keeps only rows with a
        ``documents`` row (``d``, id = row id // ``stride``) meeting ``conditions``."""
        from memtrove.db.postgres.text_scoring import Matched, fetch_postings, rank

        self.ready()
        row = self._connection.execute(
            "SELECT rows, tokens, EXISTS (SELECT 1 FROM text_dead WHERE idx = ?) "
            "FROM text_totals WHERE idx = ?",
            (idx, idx),
        ).fetchone()
        if row is None or int(row[0]) <= 0 or not slots:
            return []
        n_rows, tokens = int(row[0]), [int(value) for value in row[1]]
        avgdl = float(sum(tokens)) / float(n_rows)
        postings = fetch_postings(self._connection, idx, slots, bool(row[2]))
        docs, scores = rank(
            postings, Matched(slots, extra, required, excluded, weights), n_rows, avgdl
        )
        ranked = list(zip(docs.tolist(), scores.tolist(), strict=True))
        if documents:
            ranked = self._meeting(ranked, conditions, params, stride, limit)
        return ranked if limit is None else ranked[: max(0, int(limit))]

    def _meeting(
        self,
        ranked: list[tuple[int, float]],
        conditions: Sequence[str],
        params: Sequence[object],
        stride: int,
        limit: int | None,
    ) -> list[tuple[int, float]]:
        """The ranked rows whose ``documents`` row (``d``) meets ``conditions``, in order;
        checked a page at a time, so a short list needs only its first pages."""
        where = "".join(" AND " + condition for condition in conditions)
        kept: list[tuple[int, float]] = []
        start, page = 0, 2 * limit + 20 if limit is not None else len(ranked)
        while start < len(ranked):
            chunk = ranked[start : start + page]
            start, page = start + page, page * 4
            ids = sorted({doc // stride for doc, _ in chunk})
            found = {
                int(found_id)
                for (found_id,) in self._connection.execute(
                    f"SELECT d.id FROM documents d WHERE d.id = ANY(?::bigint[]){where}",
                    [ids, *params],
                )
            }
            kept += [(doc, score) for doc, score in chunk if doc // stride in found]
            if limit is not None and len(kept) >= limit:
                break
        return kept

    def places(
        self, idx: int, tokens: Sequence[str], prefix: bool
    ) -> dict[int, list[list[list[int]]]]:
        """For the rows holding every one of ``tokens`` (the last a prefix when ``prefix``):
        row -> token -> column -> positions."""
        self.ready()
        slots = [
            term_slot(token, prefix and i == len(tokens) - 1) for i, token in enumerate(tokens)
        ]
        import numpy as np  # searching only

        columns = COLUMNS[idx]
        ranges = " OR ".join("(term >= ? AND term < ?)" for _ in slots)
        # The phrase's terms' postings, positions included, in one round trip; the rows
        # holding every token are found here (a semi-join on the server can go quadratic
        # when one of the tokens is in most rows).
        rows = self._connection.execute(
            "SELECT term, seg, docs, c0, c1, c2, positions FROM text_postings "
            f"WHERE idx = ? AND ({ranges})",
            [idx, *(bound for slot in slots for bound in (slot.lo, slot.hi))],
        ).fetchall()
        removed: set[tuple[int, int]] = set()
        if not self._no_dead(idx):
            from memtrove.db.postgres.text_scoring import removed_entries

            removed = removed_entries(self._connection, idx, {int(row[1]) for row in rows})
        entries = []  # (slots the term fills, docs, counts per column, where each starts, blob)
        holding: list[set[int]] = [set() for _ in slots]
        for term, seg, docs, c0, c1, c2, blob in rows:
            filled = [i for i, slot in enumerate(slots) if slot.lo <= term < slot.hi]
            docs_array = np.asarray(docs, dtype=np.int64)
            if removed:
                live = np.fromiter(
                    ((int(doc), int(seg)) not in removed for doc in docs), dtype=bool
                )
            else:
                live = np.ones(len(docs_array), dtype=bool)
            counts = np.asarray([c0, c1, c2], dtype=np.int64)[:columns]
            starts = np.concatenate(([0], np.cumsum(counts.sum(axis=0))))
            entries.append((filled, docs_array, live, counts, starts, bytes(blob)))
            for i in filled:
                holding[i].update(docs_array[live].tolist())
        candidates = set.intersection(*holding) if holding else set()
        found: dict[int, list[list[list[int]]]] = {}
        if not candidates:
            return found
        wanted = np.fromiter(sorted(candidates), dtype=np.int64)
        for filled, docs_array, live, counts, starts, blob in entries:
            chosen = np.flatnonzero(live & np.isin(docs_array, wanted))
            if not len(chosen):
                continue
            positions = np.frombuffer(blob, dtype=">i4").astype(np.int64)
            for at in chosen.tolist():
                doc_id = int(docs_array[at])
                per_token = found.get(doc_id)
                if per_token is None:
                    per_token = found[doc_id] = [[[] for _ in range(columns)] for _ in slots]
                start = int(starts[at])
                spans = []
                for col in range(columns):
                    count = int(counts[col, at])
                    spans.append(positions[start : start + count].tolist())
                    start += count
                for i in filled:
                    for col in range(columns):
                        per_token[i][col].extend(spans[col])
        if prefix:  # the prefix's terms, one after the other
            for per_token in found.values():
                for col_positions in per_token[-1]:
                    col_positions.sort()
        return found

    def term_hits(self, idx: int, slot: Slot) -> dict[int, tuple[int, int, int]]:
        """Live row -> hits per column of the terms of ``slot``."""
        self.ready()
        sql, params = live_entries([(0, slot)], idx)
        rows = self._connection.execute(
            f"SELECT doc, SUM(c0), SUM(c1), SUM(c2) FROM ({sql}) AS live GROUP BY doc", params
        )
        return {int(doc): (int(a), int(b), int(c)) for doc, a, b, c in rows}

    def lengths(self, idx: int, doc_ids: Sequence[int]) -> dict[int, int]:
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
        """Live rows holding each of ``terms`` (as stored), for those held."""
        self.ready()
        if self._no_dead(idx):  # the arrays' sizes say it
            rows = self._connection.execute(
                "SELECT term, SUM(cardinality(docs)) FROM text_postings WHERE idx = ? "
                "AND term = ANY(?::text[]) GROUP BY term",
                (idx, list(terms)),
            )
        else:
            rows = self._connection.execute(
                "SELECT p.term, COUNT(*) FROM text_postings p "
                "CROSS JOIN LATERAL unnest(p.docs) AS u (doc) "
                "WHERE p.idx = ? AND p.term = ANY(?::text[]) AND NOT EXISTS (SELECT 1 FROM "
                "text_dead t WHERE t.idx = p.idx AND t.doc_id = u.doc AND t.seg = p.seg) "
                "GROUP BY p.term",
                (idx, list(terms)),
            )
        return {str(term): int(count) for term, count in rows}

    def vocabulary(self, idx: int) -> Iterator[tuple[str, int]]:
        self.ready()
        if self._no_dead(idx):  # the arrays' sizes say it
            sql = (
                "SELECT term, SUM(cardinality(docs)) FROM text_postings WHERE idx = ? "
                "GROUP BY term ORDER BY term"
            )
        else:
            sql = (
                "SELECT p.term, COUNT(*) FROM text_postings p "
                "CROSS JOIN LATERAL unnest(p.docs) AS u (doc) WHERE p.idx = ? "
                "AND NOT EXISTS (SELECT 1 FROM text_dead t WHERE t.idx = p.idx "
                "AND t.doc_id = u.doc AND t.seg = p.seg) GROUP BY p.term ORDER BY p.term"
            )
        rows = self._connection.execute(sql, (idx,)).fetchall()
        return iter([(str(term), int(count)) for term, count in rows])

    def _no_dead(self, idx: int) -> bool:
        """Whether no segment of ``idx`` holds a removed row's entries."""
        row = self._connection.execute(
            "SELECT 1 FROM text_dead WHERE idx = ? LIMIT 1", (idx,)
        ).fetchone()
        return row is None

    def has_row(self, idx: int) -> str:
        """A SQL condition on ``{alias}.id``: the id has a row in ``idx``."""
        return f"EXISTS (SELECT 1 FROM text_rows WHERE idx = {int(idx)} AND doc_id = {{alias}}.id)"
