"""The passage index (see :mod:`memtrove.db.passages`): BM25 over each document's sections,
so a long record is found by the section that matches. Filled here for the documents
already indexed."""

from collections.abc import Callable

from memtrove.db.connection import Connection
from memtrove.db.passages import rebuild_passages

NAME = "m020_passages"


def _fill(connection: Connection) -> None:
    rebuild_passages(connection)


STATEMENTS: tuple[str | Callable[[Connection], None], ...] = (
    "CREATE VIRTUAL TABLE passages_fts USING fts5("
    "body, tokenize = 'porter unicode61', content = '', contentless_delete = 1)",
    _fill,
)
