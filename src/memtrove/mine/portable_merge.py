"""``memtrove import FILE --merge``: an export added to a vault that is in use.

The rule: what the vault already holds wins, and nothing of it changes.

- A document whose collection and path the vault already has is kept as the vault's (its
  row, body, pins, counters); rows of the file that point at it point at the vault's row.
  Every other document is added with a new id (and its docid, or a free one if another
  document has it).
- Rows with an integer id (sessions' context usage, entry versions, facts, evolution) get
  new ids; every column that refers to a row of the file (by its foreign keys, plus
  ``documents.invalidated_by`` / ``superseded_by``) is mapped to that row's id here. A key
  that is another row's id (a memory entry's or recall stats' ``doc_id``) is mapped the
  same way, never given anew.
- Rows keyed by text (entities, rules, sessions, stores) or by the rows they join (edges,
  mentions, recall stats) are added when the key is free and skipped otherwise; a row with
  an integer id is skipped when the vault already had one equal in every other column. So
  merging the same file twice adds nothing the second time.

A row that refers to a row of the file that was not added (one the vault already had under
its own key) is skipped when the reference is required (a mention of a document), and keeps a
NULL when it is optional (a recall event's context-usage row). Every line is checked as in a
plain import, and the whole merge is one transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memtrove.db.connection import Connection
from memtrove.index.documents import free_docid
from memtrove.mine.portable import ENTITIES, ENTITY_ROW
from memtrove.mine.portable_import import Importer

__all__ = ["Merger"]

# References to documents that the schema does not declare as foreign keys.
_UNDECLARED = {"documents": (("invalidated_by", "documents"), ("superseded_by", "documents"))}


class Merger(Importer):
    """An :class:`Importer` that maps ids instead of keeping them."""

    def __init__(self, connection: Connection, redact: Callable[[str], str]) -> None:
        super().__init__(connection, redact)
        self.merging = True
        self.ids: dict[str, dict[Any, Any]] = {}  # table -> the file's id -> the id here
        self.references: dict[str, list[tuple[str, str]]] = {}
        self.new_entities: set[str] = set()
        self.not_null: dict[str, set[str]] = {}
        self.existing: dict[tuple[str, tuple[str, ...]], dict[tuple[Any, ...], Any]] = {}
        self.pending: tuple[str, str | None, Any] = ("", None, None)

    def _references(self, table: str) -> list[tuple[str, str]]:
        if table not in self.references:
            declared = [
                (key.column, key.target) for key in self.connection.catalog.foreign_keys(table)
            ]
            self.references[table] = declared + list(_UNDECLARED.get(table, ()))
        return self.references[table]

    def _required(self, table: str) -> set[str]:
        if table not in self.not_null:
            self.not_null[table] = {
                column.name
                for column in self.connection.catalog.column_info(table)
                if column.not_null
            }
        return self.not_null[table]

    def _prepare(self, number: int, table: str, values: dict[str, Any]) -> dict[str, Any] | None:
        if table == ENTITIES:
            if values.get("entity_id") not in self.new_entities:
                return None
            return {k: v for k, v in values.items() if k != ENTITY_ROW}
        key = self._integer_key(table)
        old = values.get(key) if key is not None else None  # the file's id of the row
        for column, parent in self._references(table):
            value = values.get(column)
            if value is None or self._integer_key(parent) is None:
                continue  # a text key (entity ids, rule ids) is the same here
            mapped = self.ids.get(parent, {}).get(value)
            if mapped is None and column in self._required(table):
                return None  # it points at a row that was not added: nothing to attach to
            values[column] = mapped
        if key is not None and any(column == key for column, _ in self._references(table)):
            # The key is another row's id (a document's memory entry, its recall stats),
            # mapped above: kept, never left to the database.
            self.pending = (table, key, old)
            return values
        if key is not None:
            values.pop(key, None)
        if key is not None and table != "documents":
            same = self._same_row(table, key, values)
            if same is not None:  # merged before: the row is here already
                self.ids.setdefault(table, {})[old] = same
                return None
        if table == "documents":
            kept = self.connection.execute(
                "SELECT id FROM documents WHERE collection = ? AND path = ?",
                (values.get("collection"), values.get("path")),
            ).fetchone()
            if kept is not None:
                self.ids.setdefault("documents", {})[old] = int(kept[0])
                return None
            taken = self.connection.execute(
                "SELECT 1 FROM documents WHERE docid = ?", (values.get("docid"),)
            ).fetchone()
            if taken is not None:
                values["docid"] = free_docid(self.connection, str(values.get("hash")))
        self.pending = (table, key, old)
        return values

    def _held(self, table: str, key: str, value: Any) -> bool:
        """Whether the vault holds the row of ``table`` whose ``key`` is ``value``."""
        found = self.connection.execute(
            f'SELECT 1 FROM "{table}" WHERE "{key}" = ?', (value,)
        ).fetchone()
        return found is not None

    def _same_row(self, table: str, key: str, values: dict[str, Any]) -> Any:
        """The id of a row of ``table`` equal to ``values`` in every column they name, if
        the vault held one before this merge (read once per table, then looked up)."""
        columns = tuple(values)
        index = self.existing.get((table, columns))
        if index is None:
            names = ", ".join(f'"{c}"' for c in columns)
            index = {
                tuple(row[1:]): row[0]
                for row in self.connection.execute(f'SELECT "{key}", {names} FROM "{table}"')
            }
            self.existing[(table, columns)] = index
        return index.get(tuple(values.values()))

    def _insert(self, number: int, table: str, values: dict[str, Any]) -> bool:
        added = super()._insert(number, table, values)
        table, key, old = self.pending if table != ENTITIES else (table, None, None)
        if key is not None and old is not None and key in values:  # a key kept (mapped)
            if added or self._held(table, key, values[key]):
                self.ids.setdefault(table, {})[old] = values[key]
        elif added and key is not None and old is not None:
            self.ids.setdefault(table, {})[old] = self.last_id
            if table == "documents":
                values["id"] = self.last_id  # the full-text row's id
        if added and table == "entity_nodes":
            self.new_entities.add(str(values.get("entity_id")))
        return added
