"""The ``entities`` part of the PostgreSQL text index: entity names found by word prefixes,
as the SQLite vault's ``entities_fts`` (``unicode61 remove_diacritics 2``, names only)
finds and ranks them.

Tables: ``text_entities (row_id, entity_id, name, entity_type, size)``, one row per
indexed name in row order (a new one comes after every other, as an FTS5 rowid does), and
``text_entity_terms (term, row_id, positions)``, where each token of each name stands. A
prefix is looked up as a range of ``term`` (``COLLATE "C"``); ranking is FTS5's ``bm25()``
over the name column (:func:`bm25_scores`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from math import log
from typing import TYPE_CHECKING, Any

from memtrove.db.postgres.text_sql import K1 as _K1
from memtrove.db.postgres.text_sql import B as _B
from memtrove.db.postgres.text_sql import consecutive, storable, term_slot
from memtrove.db.text_tokens import name_tokens

if TYPE_CHECKING:
    from memtrove.db.postgres.text_sql import ServerConnection

__all__ = ["EntityIndex"]

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS text_entities (row_id BIGINT PRIMARY KEY, "
    "entity_id TEXT NOT NULL, name TEXT NOT NULL, entity_type TEXT NOT NULL, "
    "size INT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS text_entities_id ON text_entities (entity_id)",
    'CREATE TABLE IF NOT EXISTS text_entity_terms (term TEXT COLLATE "C" NOT NULL, '
    "row_id BIGINT NOT NULL, positions INT[] NOT NULL, PRIMARY KEY (term, row_id))",
    "CREATE INDEX IF NOT EXISTS text_entity_terms_row ON text_entity_terms (row_id)",
)


def bm25_scores(
    n_rows: int,
    tokens: Sequence[int],
    hits: Sequence[dict[int, dict[int, int]]],
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


class EntityIndex:
    __slots__ = ("_connection",)

    def __init__(self, connection: ServerConnection) -> None:
        self._connection = connection

    # -- rows --------------------------------------------------------------------------------

    def add(self, entity_id: str, name: str, entity_type: str, row: int | None) -> None:
        if row is None:
            found = self._connection.execute(
                "SELECT COALESCE(MAX(row_id), 0) + 1 FROM text_entities"
            ).fetchone()
            row = int(found[0])
        tokens = [storable(token) for token in name_tokens(name)]
        self._connection.execute(
            "INSERT INTO text_entities (row_id, entity_id, name, entity_type, size) "
            "VALUES (?, ?, ?, ?, ?)",
            (row, entity_id, name, entity_type, len(tokens)),
        )
        self._write_terms(row, tokens)

    def _write_terms(self, row: int, tokens: Sequence[str]) -> None:
        places: dict[str, list[int]] = {}
        for position, token in enumerate(tokens):
            places.setdefault(token, []).append(position)
        if places:
            self._connection.executemany(
                "INSERT INTO text_entity_terms (term, row_id, positions) VALUES (?, ?, ?)",
                [(term, row, positions) for term, positions in places.items()],
            )

    def rename(self, entity_id: str, name: str) -> None:
        rows = self._connection.execute(
            "SELECT row_id FROM text_entities WHERE entity_id = ?", (entity_id,)
        ).fetchall()
        tokens = [storable(token) for token in name_tokens(name)]
        for (row,) in rows:
            self._connection.execute("DELETE FROM text_entity_terms WHERE row_id = ?", (row,))
            self._connection.execute(
                "UPDATE text_entities SET name = ?, size = ? WHERE row_id = ?",
                (name, len(tokens), row),
            )
            self._write_terms(int(row), tokens)

    def rows(self) -> Iterator[tuple[int, str, str, str]]:
        found = self._connection.execute(
            "SELECT row_id, entity_id, name, entity_type FROM text_entities ORDER BY row_id"
        ).fetchall()
        return iter([(int(row), str(eid), str(name), str(kind)) for row, eid, name, kind in found])

    # -- matching ----------------------------------------------------------------------------

    def _phrases(self, prefixes: Sequence[str]) -> list[tuple[str, ...]]:
        phrases = []
        for prefix in prefixes:
            tokens = tuple(storable(token) for token in name_tokens(prefix))
            if tokens:
                phrases.append(tokens)
        return phrases

    def _hits(self, phrases: Sequence[tuple[str, ...]]) -> list[dict[int, int]]:
        """For each phrase (its last token a prefix): row -> hits in the name."""
        found: list[dict[int, int]] = []
        for tokens in phrases:
            lists: list[dict[int, list[int]]] = []
            for position, token in enumerate(tokens):
                if position == len(tokens) - 1:
                    rows = self._connection.execute(
                        "SELECT row_id, positions FROM text_entity_terms "
                        "WHERE term >= ? AND term < ?",
                        term_slot(token, True),
                    )
                else:
                    rows = self._connection.execute(
                        "SELECT row_id, positions FROM text_entity_terms WHERE term = ?",
                        (token,),
                    )
                merged: dict[int, list[int]] = {}
                for row, positions in rows:
                    merged.setdefault(int(row), []).extend(positions)
                lists.append({row: sorted(places) for row, places in merged.items()})
            rows_in = set(lists[0])
            for other in lists[1:]:
                rows_in &= other.keys()
            hits: dict[int, int] = {}
            for row in rows_in:
                count = consecutive(lists[0][row], [set(other[row]) for other in lists[1:]])
                if count:
                    hits[row] = count
            found.append(hits)
        return found

    def match(self, prefixes: Sequence[str], limit: int) -> list[tuple[Any, ...]]:
        phrases = self._phrases(prefixes)
        if not phrases or limit <= 0:
            return []
        matched: set[int] = set()
        for hits in self._hits(phrases):
            matched |= hits.keys()
        rows = sorted(matched)[:limit]
        if not rows:
            return []
        found = self._connection.execute(
            "SELECT e.row_id, n.entity_id, n.entity_type, n.name, n.mention_count, n.vault "
            "FROM text_entities e LEFT JOIN entity_nodes n ON n.entity_id = e.entity_id "
            "WHERE e.row_id = ANY(?::bigint[]) ORDER BY e.row_id",
            (rows,),
        ).fetchall()
        return [tuple(row[1:]) for row in found]

    def best(
        self, prefixes: Sequence[str], limit: int, vault: str
    ) -> list[tuple[str, str, str, int]]:
        phrases = self._phrases(prefixes)
        if not phrases or limit <= 0:
            return []
        hits = [{row: {0: count} for row, count in found.items()} for found in self._hits(phrases)]
        matched: set[int] = set()
        for found in hits:
            matched |= found.keys()
        if not matched:
            return []
        totals = self._connection.execute(
            "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM text_entities"
        ).fetchone()
        sizes = dict(
            self._connection.execute(
                "SELECT row_id, size FROM text_entities WHERE row_id = ANY(?::bigint[])",
                (sorted(matched),),
            ).fetchall()
        )
        scored = bm25_scores(
            int(totals[0]), [int(totals[1])], hits, sorted(matched), sizes, (1.0,)
        )[:limit]
        order = {row: rank for rank, (row, _) in enumerate(scored)}
        nodes = self._connection.execute(
            "SELECT e.row_id, n.entity_id, n.entity_type, n.name, n.mention_count "
            "FROM text_entities e JOIN entity_nodes n ON n.entity_id = e.entity_id "
            "WHERE e.row_id = ANY(?::bigint[]) AND n.vault = ?",
            (list(order), vault),
        ).fetchall()
        nodes.sort(key=lambda row: order[int(row[0])])
        return [(str(a), str(b), str(c), int(d)) for _, a, b, c, d in nodes]
