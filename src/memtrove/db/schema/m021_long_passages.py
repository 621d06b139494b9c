"""Passages for long documents only (:data:`memtrove.db.passages.LONG_CHARS`): a short
note is scored whole, so the passages m020 indexed for short documents are dropped."""

from collections.abc import Callable

from memtrove.db.connection import Connection
from memtrove.db.passages import LONG_CHARS, drop_passages

NAME = "m021_long_passages"


def _drop_short(connection: Connection) -> None:
    rows = connection.execute(
        "SELECT d.id FROM documents d JOIN content c ON c.hash = d.hash WHERE length(c.doc) < ?",
        (LONG_CHARS,),
    ).fetchall()
    for (doc_id,) in rows:
        drop_passages(connection, int(doc_id))


STATEMENTS: tuple[str | Callable[[Connection], None], ...] = (_drop_short,)
