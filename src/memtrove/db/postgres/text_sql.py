"""The SQL and text formats of the PostgreSQL text index
(:mod:`memtrove.db.postgres.text_store`): the live entries of a query's terms, a query
phrase's term range, and terms as PostgreSQL text holds them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple, Protocol

from memtrove.db.engine import Connection

__all__ = [
    "K1",
    "B",
    "ServerConnection",
    "Slot",
    "consecutive",
    "live_entries",
    "storable",
    "term_slot",
]

_HIGHEST = "\U0010ffff"


class ServerConnection(Connection, Protocol):
    """The PostgreSQL connection as the text index uses it: the seam, and ``COPY``."""

    def copy_binary(self, target: str, chunks: Iterable[bytes], rows: int) -> None: ...


K1 = 1.2  # FTS5 bm25()'s constants
B = 0.75

# An entry is live unless its row was taken out of its segment. The first test, on no
# entry (computed once per statement), spares the per-entry lookup while the index holds no
# removed row, as it does between merges after additions only.
_DEAD = (
    "(NOT EXISTS (SELECT 1 FROM text_dead WHERE idx = {idx}) OR NOT EXISTS (SELECT 1 FROM "
    "text_dead t WHERE t.idx = p.idx AND t.doc_id = u.doc AND t.seg = p.seg))"
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
            f"AS u (doc, c0, c1, c2, len) WHERE p.idx = ? AND {condition} AND "
            + _DEAD.format(idx=int(idx))
        )
    if not parts:
        parts.append(
            "SELECT 0 AS slot, 0::bigint AS doc, 0 AS c0, 0 AS c1, 0 AS c2, 0 AS len WHERE false"
        )
    return " UNION ALL ".join(parts), params


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
