"""The SQL and text formats of the PostgreSQL text index
(:mod:`memtrove.db.postgres.text_store`): the BM25 query, a query phrase's term range, terms
as PostgreSQL text holds them, and ``COPY`` fields."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple, Protocol

from memtrove.db.engine import Connection

__all__ = [
    "K1",
    "SCORES",
    "B",
    "ServerConnection",
    "Slot",
    "consecutive",
    "copy_text",
    "int_array",
    "live_entries",
    "storable",
    "term_slot",
    "text_array",
]

_HIGHEST = "\U0010ffff"


class ServerConnection(Connection, Protocol):
    """The PostgreSQL connection as the text index uses it: the seam, and ``COPY``."""

    def copy_in(self, target: str, data: str) -> None: ...


K1 = 1.2  # FTS5 bm25()'s constants
B = 0.75

_DEAD = (
    "NOT EXISTS (SELECT 1 FROM text_dead t WHERE t.idx = p.idx AND t.doc_id = u.doc "
    "AND t.seg = p.seg)"
)


def live_entries(slots: Sequence[tuple[int, Slot]], idx: int) -> tuple[str, list[object]]:
    """SQL of the live entries (slot, doc, c0, c1, c2, length) of each slot's terms, one
    subquery per slot (so that each one is planned as the index range it is), and its
    parameters."""
    parts: list[str] = []
    params: list[object] = []
    for number, slot in slots:
        if slot.hi == slot.lo + "\x01":
            condition = "p.term = ?"
            params += [idx, slot.lo]
        else:
            condition = "p.term >= ? AND p.term < ?"
            params += [idx, slot.lo, slot.hi]
        parts.append(
            f"SELECT {int(number)} AS slot, u.doc, u.c0, u.c1, u.c2, u.len FROM text_postings p "
            "CROSS JOIN LATERAL unnest(p.docs, p.c0, p.c1, p.c2, p.lengths) "
            f"AS u (doc, c0, c1, c2, len) WHERE p.idx = ? AND {condition} AND {_DEAD}"
        )
    if not parts:
        parts.append(
            "SELECT 0 AS slot, 0::bigint AS doc, 0 AS c0, 0 AS c1, 0 AS c2, 0 AS len WHERE false"
        )
    return " UNION ALL ".join(parts), params


# BM25 of each matching row: FTS5's arithmetic (fts5_aux.c), the phrases added in order.
SCORES = """
WITH raw AS ({live}
    UNION ALL
    SELECT * FROM unnest(?::int[], ?::bigint[], ?::int[], ?::int[], ?::int[], ?::int[])),
hits AS (SELECT slot, doc, SUM(c0)::float8 * ?::float8 + SUM(c1)::float8 * ?::float8
                           + SUM(c2)::float8 * ?::float8 AS f, MIN(len) AS len
         FROM raw GROUP BY slot, doc),
counted AS (SELECT slot, doc, f, len, COUNT(*) OVER (PARTITION BY slot) AS n FROM hits),
parts AS (
    SELECT doc, slot, (CASE WHEN i.idf <= 0.0 THEN 1e-6::float8 ELSE i.idf END)
               * ((f * ?::float8) / (f + ?::float8 * (?::float8
                  + ?::float8 * len::float8 / ?::float8))) AS v
    FROM counted CROSS JOIN LATERAL (SELECT ln(((?::bigint - n)::float8 + 0.5::float8)
                                               / (n::float8 + 0.5::float8)) AS idf) AS i),
scored AS (
    SELECT doc,
           COUNT(*) FILTER (WHERE slot < ?) AS required,
           COUNT(*) FILTER (WHERE slot < ?) AS searched,
           COUNT(*) FILTER (WHERE slot >= ?) AS excluded,
           -1.0::float8 * ({ordered}) AS score
    FROM parts GROUP BY doc)
SELECT s.doc, s.score FROM scored s{join}
WHERE s.excluded = 0 AND {matched}{where}
"""


class Slot(NamedTuple):
    """One phrase of a query for :meth:`TextStore.scores`: the terms in ``[lo, hi)`` (a term
    alone, or every term with a prefix)."""

    lo: str
    hi: str


def storable(term: str) -> str:
    """A term as PostgreSQL text can hold it (no NUL, no lone surrogate): as it is, except
    in those rare cases, escaped."""
    if "\x00" not in term and (
        term.isascii() or not any("\ud800" <= ch <= "\udfff" for ch in term)
    ):
        return term
    raw = term.encode("utf-8", "surrogateescape")
    return raw.decode("utf-8", "backslashreplace").replace("\x00", "\\x00")


def copy_text(value: str) -> str:
    """``value`` as a field of ``COPY``'s text format."""
    if value.isalnum():
        return value
    return (
        value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    )


def int_array(values: Iterable[int]) -> str:
    return "{" + ",".join(map(str, values)) + "}"


def _array_element(term: str) -> str:
    if term.isalnum():
        return '"' + term + '"'  # quoted: an element spelled null is not NULL
    return '"' + term.replace("\\", "\\\\").replace('"', '\\"') + '"'


def text_array(terms: Iterable[str]) -> str:
    """A text array as a field of ``COPY``'s text format."""
    return copy_text("{" + ",".join(map(_array_element, terms)) + "}")


def term_slot(term: str, prefix: bool) -> Slot:
    """The slot of a term alone, or of every term starting with it."""
    if not prefix:
        return Slot(term, term + "\x01")
    if not term:
        return Slot("", _HIGHEST)
    last = ord(term[-1])
    if last >= 0x10FFFF:
        return Slot(term, term + _HIGHEST)
    following = last + 1 if not 0xD7FF <= last < 0xDFFF else 0xE000
    return Slot(term, term[:-1] + chr(following))


def consecutive(starts: Iterable[int], following: Sequence[set[int]]) -> int:
    """How many of a phrase's first-token positions ``starts`` have each next token right
    after it (``following``: the positions of the second token, the third...): its hits."""
    return sum(
        1 for start in starts if all(start + i + 1 in places for i, places in enumerate(following))
    )
