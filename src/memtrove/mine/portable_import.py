"""``memtrove import FILE``: an export (:mod:`memtrove.mine.portable`) back into a vault.

The rule for the target: it must be empty (a new vault file, or one with nothing stored
yet), because every row keeps the ids of the source. Merging is refused rather than guessed
(:class:`~memtrove.errors.VaultNotEmptyError`); import into a new file instead.

Everything goes in one write transaction, read line by line (bounded memory:
one record at a time, at most :data:`MAX_LINE_BYTES` each), so a file that is cut short,
edited or malformed fails with one line naming its line number and leaves nothing written.
Checks: the header (format, version, migrations this memtrove knows, of either engine),
each line's JSON, record type and columns, each body against its content hash, the foreign
keys as each row lands, and at the end the ``end`` record and the header's count of every
table. A row the database refuses is named in one line, in the same words on every engine
(:func:`memtrove.db.postgres.connection.mapped_error` words PostgreSQL's as SQLite does).

Text that came from outside passes the vault's redactor before it is stored: a body the
redactor changes is stored redacted under its new hash (its documents follow it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, NamedTuple

from memtrove.db.connection import Connection
from memtrove.db.passages import write_passages
from memtrove.errors import PortableFormatError
from memtrove.files import Refused, open_regular
from memtrove.index.markdown import parse_markdown
from memtrove.index.preparing import fragment_rows
from memtrove.mine.portable import (
    ENTITIES,
    ENTITY_ROW,
    FORMAT,
    VECTORS,
    VERSION,
    decode_value,
    known_migrations,
    stored_tables,
)
from memtrove.mine.portable_vectors import VectorWriter

__all__ = [
    "MAX_LINE_BYTES",
    "ImportedFile",
    "Importer",
    "open_export",
    "read_lines",
    "vault_contents",
]

MAX_LINE_BYTES = 64 * 1024 * 1024  # a body is at most 5 MB; escaped JSON at most ~6x that
# What a vault holds once it is in use: any row in these makes it "not empty". Rows in the
# other tables (``memory_stores``' ``global``, whatever a migration seeds) are a new vault's
# own, and an import replaces them with the file's.
_DATA = (
    "content",
    "documents",
    "memory_entries",
    "memory_entry_versions",
    "memory_relations",
    "entity_nodes",
    "entity_triples",
    "predictions",
    "behaviors",
    "session_log",
    "context_usage",
)
# Free text from outside, redacted before it is stored (bodies are handled on their own).
_FREE_TEXT: dict[str, tuple[str, ...]] = {
    "documents": ("title", "domain", "workstream"),
    "memory_entry_versions": ("content", "label"),
    "memory_entries": ("label",),
    "session_log": ("summary",),
    "context_usage": ("query_text",),
    "hook_dedupe": ("prompt_preview",),
    "predictions": ("statement", "rationale"),
    "behaviors": ("statement", "rationale"),
    "prediction_matchers": ("description",),
    "behavior_matchers": ("description",),
    "prediction_provenance": ("detail",),
    "behavior_provenance": ("detail",),
    "entity_triples": ("object_literal", "source_fact"),
    "entity_nodes": ("description",),
    "memory_evolution": ("previous_context", "new_context", "reasoning"),
}


class ImportedFile(NamedTuple):
    """What an import read: the header, each table's records read and rows written (the
    same unless merging, where rows the vault already holds are kept)."""

    header: dict[str, Any]
    records: dict[str, int]
    added: dict[str, int]
    redacted: int


def read_lines(stream: IO[bytes]) -> Iterator[bytes]:
    """The file's lines, each at most :data:`MAX_LINE_BYTES` (a longer one is refused)."""
    number = 0
    while True:
        line = stream.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_LINE_BYTES:
            raise PortableFormatError(f"line {number}: longer than {MAX_LINE_BYTES} bytes")
        yield line


def vault_contents(connection: Connection) -> dict[str, int]:
    """The data tables (documents, entries, graph, rules, sessions) that hold rows here,
    with their counts: empty when the vault is new."""
    tables = set(stored_tables(connection))
    counts: dict[str, int] = {}
    for table in _DATA:
        if table in tables:
            count = int(connection.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0])
            if count:
                counts[table] = count
    return counts


def _check_names(number: int, values: dict[str, Any]) -> None:
    """A document's collection must be a name config.yaml could hold, and its path a
    relative one inside it: ``collection/path`` references and folders stay whole."""
    from memtrove.text import is_inside_path, is_written_name

    collection, path = values.get("collection"), values.get("path")
    if isinstance(collection, str) and not is_written_name(collection):
        raise format_error(number, f"documents: {collection[:80]!r} is not a collection name")
    if isinstance(path, str) and not is_inside_path(path):
        raise format_error(number, f"documents: {path[:80]!r} is not a path inside a collection")


_FLAGS = frozenset({"active", "pinned"})
_SHARES = frozenset({"quality_score", "confidence"})
_COUNTS = frozenset({"body_length", "file_size"})


def _check_ranges(number: int, values: dict[str, Any]) -> None:
    """A document's flags are 0 or 1, its scores from 0 to 1, its counts not negative."""
    for column, value in values.items():
        if value is None or isinstance(value, str):
            continue
        if column in _FLAGS:
            wrong = value not in (0, 1)
        elif column in _SHARES:
            wrong = not 0.0 <= value <= 1.0  # NaN too
        elif column in _COUNTS or column.endswith(("_count", "_attempts")):
            wrong = value < 0
        else:
            continue
        if wrong:
            raise format_error(number, f"documents.{column} holds {value!r:.40}, out of its range")


def error_message(error: Exception) -> str:
    """A failed insert in one line (the engines word broken constraints alike)."""
    return " ".join(str(error).split()) or type(error).__name__


def format_error(number: int, message: str) -> PortableFormatError:
    return PortableFormatError(f"line {number}: {message}")


def parse_line(number: int, line: bytes | str) -> dict[str, Any]:
    try:
        text = line.decode("utf-8") if isinstance(line, bytes) else line
    except UnicodeDecodeError:
        raise format_error(number, "not UTF-8 text") from None
    if number == 1:
        text = text.removeprefix("\ufeff")  # a byte-order mark an editor wrote
    if not text.strip():
        raise format_error(number, "an empty line (the file was edited?)")
    try:
        record = json.loads(text)
    except RecursionError:
        raise format_error(number, "JSON nested too deeply") from None
    except ValueError as error:
        raise format_error(
            number, f"not valid JSON ({error.args[0].split(':')[0]}; cut short?)"
        ) from None
    if not isinstance(record, dict):
        raise format_error(number, "not a JSON object")
    return record


def check_header(connection: Connection, record: dict[str, Any]) -> dict[str, Any]:
    if record.get("format") != FORMAT:
        raise format_error(1, f'not a memtrove export (no "format": "{FORMAT}" header)')
    version = record.get("version")
    if not isinstance(version, int) or version < 1 or version > VERSION:
        raise format_error(
            1, f"export version {version!r} is not one this memtrove reads ({VERSION})"
        )
    known = known_migrations(
        str(row[0]) for row in connection.execute("SELECT name FROM schema_migrations")
    )
    schema = record.get("schema")
    if not isinstance(schema, list) or not all(isinstance(name, str) for name in schema):
        raise format_error(1, "the header's schema is not a list of migration names")
    unknown = [name for name in schema if name not in known]
    if unknown:
        raise format_error(
            1, f"written by a newer memtrove (migration {unknown[0]} is unknown here)"
        )
    counts = record.get("counts")
    if not isinstance(counts, dict) or not all(
        isinstance(value, int) and not isinstance(value, bool) for value in counts.values()
    ):
        raise format_error(1, "the header's counts are not a table -> number object")
    return record


class Importer:
    def __init__(self, connection: Connection, redact: Callable[[str], str]) -> None:
        self.connection = connection
        self.redact = redact
        self.tables = set(stored_tables(connection))
        self.seeded = {  # tables a new vault starts with rows in
            table
            for table in self.tables - {*_DATA, ENTITIES}  # entity names: not a table
            if connection.execute(f'SELECT 1 FROM "{table}" LIMIT 1').fetchone() is not None
        }
        self.columns: dict[str, dict[str, tuple[type, ...]]] = {}
        self.statements: dict[tuple[str, tuple[str, ...]], str] = {}
        self.renamed: dict[str, str] = {}  # content hash -> hash of its redacted body
        self.redacted = 0
        self.records: dict[str, int] = {}  # records read, per table
        self.added: dict[str, int] = {}  # rows written, per table
        self.merging = False  # a merge skips rows whose key is taken and maps integer ids
        self.keys: dict[str, str | None] = {}  # table -> its integer id column, if any
        self.last_id: int | None = None  # the id the last insert gave (a merge's rows)
        self.vectors = VectorWriter(connection)

    def add(self, number: int, record: dict[str, Any]) -> None:
        table = record.pop("type")
        if table == VECTORS:
            self._vector(number, record)
            return
        if table not in self.tables:
            raise format_error(number, f"unknown record type {table!r}")
        fragments = record.pop("fragments", None) if table == "content" else None
        known = self.columns.get(table)
        if known is None:
            known = self._column_types(table)
            self.columns[table] = known
        for column in record:
            if column not in known:
                raise format_error(number, f"{table} has no column {column!r} (a newer memtrove?)")
        try:
            values = {column: decode_value(value) for column, value in record.items()}
        except ValueError as error:
            raise format_error(number, f"{table}: {error}") from None
        for column, value in values.items():
            wanted = known[column]
            if value is not None and wanted and not isinstance(value, wanted):
                raise format_error(
                    number, f"{table}.{column} holds {type(value).__name__} {value!r:.40}"
                )
        for column in _FREE_TEXT.get(table, ()):
            if isinstance(values.get(column), str):
                values[column] = self._redacted(values[column])
        if table == "content":
            fragments = self._content(number, values, fragments)
        elif table == "documents" and isinstance(values.get("hash"), str):
            values["hash"] = self.renamed.get(values["hash"], values["hash"])
        if table == "documents":
            _check_names(number, values)
            _check_ranges(number, values)
        self.records[table] = self.records.get(table, 0) + 1
        prepared = self._prepare(number, table, values)
        if prepared is None or not self._insert(number, table, prepared):
            return
        self.added[table] = self.added.get(table, 0) + 1
        if table == "content":
            self._fragments(number, str(values["hash"]), len(values["doc"]), fragments or [])
        elif table == "documents" and prepared.get("active") == 1:
            self._index_text(number, prepared)

    def _prepare(self, number: int, table: str, values: dict[str, Any]) -> dict[str, Any] | None:
        """The row to insert (None: nothing to insert). An import into an empty vault
        inserts every row as it is; a merge (:mod:`.portable_merge`) maps its ids."""
        return values

    def _vector(self, number: int, record: dict[str, Any]) -> None:
        self.records[VECTORS] = self.records.get(VECTORS, 0) + 1
        if self.vectors.add(number, record, self.renamed):
            self.added[VECTORS] = self.added.get(VECTORS, 0) + 1

    def _integer_key(self, table: str) -> str | None:
        """``table``'s integer id column, when its primary key is one."""
        if table not in self.keys:
            keys = [c for c in self.connection.catalog.column_info(table) if c.key]
            single = len(keys) == 1 and keys[0].declared.upper() == "INTEGER"
            self.keys[table] = keys[0].name if single else None
        return self.keys[table]

    def _column_types(self, table: str) -> dict[str, tuple[type, ...]]:
        """Each column and the Python types its declared type takes (empty: any), so that
        SQLite's loose typing does not store ``"yes"`` in an integer column."""
        if table == ENTITIES:
            return {ENTITY_ROW: (int,), "entity_id": (), "name": (), "entity_type": ()}
        types: dict[str, tuple[type, ...]] = {}
        for column in self.connection.catalog.column_info(table):
            declared = column.declared.upper()
            wanted: tuple[type, ...] = ()
            # What SQLite itself can leave in a column of that affinity: a real number in an
            # integer column, a blob in a text one; a blob column takes anything.
            if "INT" in declared or "REAL" in declared or "FLOA" in declared or "DOUB" in declared:
                wanted = (int, float)
            elif "TEXT" in declared or "CHAR" in declared or "CLOB" in declared:
                wanted = (str, bytes)
            types[column.name] = wanted
        return types

    def _redacted(self, text: str) -> str:
        cleaned = self.redact(text)
        if cleaned != text:
            self.redacted += 1
        return cleaned

    def _content(self, number: int, values: dict[str, Any], fragments: Any) -> list[Any]:
        body, stated = values.get("doc"), values.get("hash")
        if not isinstance(body, str) or not isinstance(stated, str):
            raise format_error(number, "content without its text or hash")
        if hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest() != stated:
            raise format_error(
                number, f"content {stated[:12]}: the text does not match its hash (edited?)"
            )
        cleaned = self._redacted(body)
        if cleaned == body:
            if not isinstance(fragments, list):
                raise format_error(number, "content without its fragments")
            return fragments
        renamed = hashlib.sha256(cleaned.encode("utf-8", "surrogatepass")).hexdigest()
        self.renamed[stated] = renamed
        values["doc"], values["hash"] = cleaned, renamed
        return [list(row) for row in fragment_rows(parse_markdown(cleaned), "")]

    def _fragments(self, number: int, body_hash: str, length: int, fragments: list[Any]) -> None:
        rows = []
        for fragment in fragments:
            if not (
                isinstance(fragment, list)
                and len(fragment) == 5
                and all(isinstance(value, int) for value in (fragment[0], fragment[3], fragment[4]))
                and 0 <= fragment[3] <= fragment[4] <= length
            ):
                raise format_error(number, f"content {body_hash[:12]}: a fragment out of its text")
            rows.append((body_hash, *fragment))
        try:
            self.connection.executemany(
                "INSERT INTO fragments (hash, seq, fragment_type, label, start_offset, "
                "end_offset) VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )
        except Exception as error:
            message = error_message(error)
            raise format_error(number, f"content {body_hash[:12]}: fragments: {message}") from None

    def _insert(self, number: int, table: str, values: dict[str, Any]) -> bool:
        if table == ENTITIES:
            return self._entity(number, values)
        columns = tuple(values)
        statement = self.statements.get((table, columns))
        key = self._integer_key(table) if self.merging else None
        if statement is None:
            statement = self._statement(table, columns)
            self.statements[(table, columns)] = statement
        try:
            if key is None:
                return self.connection.execute(statement, tuple(values.values())).rowcount != 0
            self.last_id = self.connection.insert(statement, tuple(values.values()), key=key)
        except Exception as error:  # constraint failures, wrong types: the line is at fault
            raise format_error(number, f"{table}: {error_message(error)}") from None
        return self.last_id is not None

    def _statement(self, table: str, columns: tuple[str, ...]) -> str:
        """The insert of ``columns`` into ``table``: a new vault's own rows (seeded by its
        migrations) give way to the file's, a merge keeps what the vault holds."""
        names = ", ".join(f'"{c}"' for c in columns)
        marks = ", ".join("?" for _ in columns)
        statement = f'INSERT INTO "{table}" ({names}) VALUES ({marks})'
        if self.merging:
            statement += " ON CONFLICT DO NOTHING"
        elif table in self.seeded:
            primary = self.connection.catalog.primary_key(table)
            others = [c for c in columns if c not in primary]
            target = ", ".join(f'"{c}"' for c in primary)
            update = ", ".join(f'"{c}" = excluded."{c}"' for c in others)
            statement += f" ON CONFLICT ({target}) " + (
                f"DO UPDATE SET {update}" if others else "DO NOTHING"
            )
        return statement

    def _entity(self, number: int, values: dict[str, Any]) -> bool:
        """An entity's name into the full-text index (at the file's row number, unless a
        merge leaves the number to the index)."""
        names = (values.get("entity_id"), values.get("name"), values.get("entity_type"))
        if not all(isinstance(value, str) for value in names):
            raise format_error(number, f"{ENTITIES}: an entity without its id, name or type")
        row = values.get(ENTITY_ROW)
        try:
            self.connection.text.add_entity(
                str(names[0]),
                str(names[1]),
                str(names[2]),
                row=row if isinstance(row, int) else None,
            )
        except Exception as error:
            raise format_error(number, f"{ENTITIES}: {error_message(error)}") from None
        return True

    def _index_text(self, number: int, values: dict[str, Any]) -> None:
        row = self.connection.execute(
            "SELECT doc FROM content WHERE hash = ?", (values["hash"],)
        ).fetchone()
        if row is None:
            raise format_error(number, "a document whose content is not in the file")
        text = str(row[0])
        length = values.get("body_length")
        # The indexed body is the text after its frontmatter, ``body_length`` characters long:
        # no need to parse the frontmatter again (unless the row says otherwise).
        if isinstance(length, int) and 0 < length <= len(text) and not self.renamed:
            body = text[len(text) - length :]
        else:
            body = parse_markdown(text).body
        self.connection.text.add_documents(
            [
                (
                    int(values["id"]),
                    f"{values['collection']}/{values['path']}",
                    str(values["title"]),
                    body,
                )
            ]
        )
        write_passages(self.connection, int(values["id"]), str(values["hash"]), text)


def open_export(path: Path) -> IO[bytes]:
    """The export file, opened for reading (a missing or unreadable one is a user error).
    The path the user named may be a link; what it names must be a regular file (a FIFO or
    a device is refused, never waited on or read without end)."""
    try:
        return open_regular(path)
    except Refused as refused:
        detail = f" ({refused.detail})" if refused.detail else ""
        raise PortableFormatError(f"cannot read {path}: {refused.reason}{detail}") from None
    except OSError as error:
        raise PortableFormatError(f"cannot read {path}: {error.strerror or error}") from None
