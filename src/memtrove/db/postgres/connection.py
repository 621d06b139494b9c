"""The PostgreSQL engine's connection: psycopg 3, ``?`` placeholders, one writer at a time.

A vault on PostgreSQL is a schema of a database, named by a ``postgresql://`` URL whose
``schema`` query parameter (default ``memtrove``) picks the schema; every statement runs with
``search_path`` set to it. Statements are written once for both engines with ``?``
placeholders (:mod:`memtrove.db.engine`); :func:`translate` turns them into psycopg's ``%s``
(outside quoted text and names), and keeps the result for the next call.

Writes keep the SQLite vault's one-writer rule across processes and hosts: a write
transaction takes the vault's transaction-scoped advisory lock first (released by its
commit or rollback), so writers queue instead of failing on each other's rows;
:meth:`PostgresConnection.write_unless_locked` tries it without waiting. Driver errors
become the errors the rest of memtrove handles (:mod:`memtrove.db.connection`): a lock or
serialization failure an ``OperationalError`` that :func:`memtrove.db.connection.is_locked_error`
recognises, a broken constraint an ``IntegrityError``, anything else a ``DatabaseError``,
each with the server's one-line message.
"""

from __future__ import annotations

import contextlib
import functools
import re
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from memtrove.db.postgres.copying import quoted
from memtrove.db.sqlite.connection import DatabaseError, IntegrityError, OperationalError
from memtrove.errors import VaultBusyError, VaultNotFoundError, VaultOpenError
from memtrove.locations import shown_location, url_schema

if TYPE_CHECKING:
    import psycopg

    from memtrove.db.postgres.catalog import PostgresCatalog
    from memtrove.db.postgres.text_index import PostgresTextIndex
    from memtrove.db.postgres.vector_index import PostgresVectorIndex

__all__ = [
    "DEFAULT_SCHEMA",
    "PostgresConnection",
    "is_driver_error",
    "mapped_error",
    "open_postgres",
    "split_url",
    "translate",
]

DEFAULT_SCHEMA = "memtrove"
_LOCK_RETRY_SECONDS = 30.0
_ANALYZE_ROWS = 5_000  # rows written before the first ANALYZE (then twice as many each time)
_KEY = re.compile(r"Key \((.*?)\)=")  # the columns of a unique violation's detail
_TRANSLATED: dict[tuple[str, bool], str] = {}
_MAX_TRANSLATED = 4096


def translate(sql: str, named: bool = False) -> str:
    """``sql`` with each ``?`` placeholder (``named``: each ``:name``, as SQLite takes them
    with a mapping) in psycopg's form and each literal ``%`` doubled, quoted text
    (``'...'``) and names (``"..."``) left as they are, and ``::`` casts too."""
    key = (sql, named)
    done = _TRANSLATED.get(key)
    if done is not None:
        return done
    parts: list[str] = []
    quote = ""
    index = 0
    while index < len(sql):
        character = sql[index]
        index += 1
        if quote:
            if character == quote:
                quote = ""
            parts.append("%%" if character == "%" else character)
        elif character in "'\"":
            quote = character
            parts.append(character)
        elif character == "?" and not named:
            parts.append("%s")
        elif character == "%":
            parts.append("%%")
        elif character == ":" and named and sql[index : index + 1] == ":":
            parts.append("::")  # a cast
            index += 1
        elif (
            character == ":"
            and named
            and (sql[index : index + 1].isalpha() or sql[index : index + 1] == "_")
        ):
            end = index
            while end < len(sql) and (sql[end].isalnum() or sql[end] == "_"):
                end += 1
            parts.append(f"%({sql[index:end]})s")
            index = end
        else:
            parts.append(character)
    done = "".join(parts)
    if len(_TRANSLATED) < _MAX_TRANSLATED:
        _TRANSLATED[key] = done
    return done


def split_url(url: str) -> tuple[str, str]:
    """(the URL psycopg connects to, the vault's schema): ``schema`` leaves the query."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = url_schema(url, DEFAULT_SCHEMA)
    kept = urlencode([(key, value) for key, value in query if key != "schema"])
    if not schema or not schema.replace("_", "a").isalnum() or not schema[0].isalpha():
        raise VaultOpenError(
            f"the schema {schema!r} is not a plain name (letters, digits and _, a letter first)"
        )
    return urlunsplit(parts._replace(query=kept)), schema.lower()


def mapped_error(error: Exception) -> Exception:
    """A psycopg error as the error family memtrove handles (see the module doc)."""
    import psycopg.errors as codes

    message = " ".join(str(error).split()) or type(error).__name__
    if isinstance(error, codes.LockNotAvailable | codes.SerializationFailure):
        return OperationalError(f"database is locked: {message}")
    if isinstance(error, codes.DeadlockDetected | codes.QueryCanceled):
        return OperationalError(f"database is busy: {message}")
    if isinstance(error, codes.IntegrityError):
        return IntegrityError(_constraint_message(error, message))
    if isinstance(error, codes.OperationalError):
        return OperationalError(message)
    return DatabaseError(message)


def _constraint_message(error: Exception, message: str) -> str:
    """A broken constraint in SQLite's words, so that both engines report it alike
    (``FOREIGN KEY constraint failed``, ``UNIQUE constraint failed: table.column``, ``NOT
    NULL constraint failed: table.column``, ``CHECK constraint failed: name``), without
    PostgreSQL's detail, which can quote a whole row."""
    import psycopg.errors as codes

    diag = getattr(error, "diag", None)
    table = getattr(diag, "table_name", None) or ""
    if isinstance(error, codes.ForeignKeyViolation):
        return "FOREIGN KEY constraint failed"
    if isinstance(error, codes.UniqueViolation):
        found = _KEY.search(getattr(diag, "message_detail", None) or "")
        columns = found.group(1).split(", ") if found else []
        named = ", ".join(f"{table}.{column.strip(chr(34))}" for column in columns if column)
        return "UNIQUE constraint failed" + (f": {named}" if named else "")
    if isinstance(error, codes.NotNullViolation):
        return f"NOT NULL constraint failed: {table}.{getattr(diag, 'column_name', '')}"
    if isinstance(error, codes.CheckViolation):
        return f"CHECK constraint failed: {getattr(diag, 'constraint_name', '')}"
    return message


class PostgresConnection:
    """A vault's connection to PostgreSQL (autocommit outside :meth:`transaction`), with
    the seam of :mod:`memtrove.db.engine`."""

    dialect = "postgresql"

    def __init__(self, raw: psycopg.Connection[Any], schema: str, location: str) -> None:
        self.raw = raw
        self.schema = schema
        self.location = location  # the URL without its password, for messages
        # One advisory lock per vault: two vaults in one database never wait for each other.
        self.lock_key = zlib.crc32(f"memtrove:{schema}".encode()) - (1 << 31)
        # Opens the same session again (set by open_postgres) after the server dropped it.
        self._reconnect: Callable[[], psycopg.Connection[Any]] | None = None
        self._written = 0  # rows written by this connection (see _after_commit)
        self._analyze_at = _ANALYZE_ROWS

    # -- statements ------------------------------------------------------------------------

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        idle = self.raw.closed or not self.in_transaction
        try:
            return self._send(sql, parameters)
        except Exception as error:
            if not is_driver_error(error):
                raise
            if idle and self.raw.broken and self._reconnect is not None:
                # The server dropped the connection (a restart, a failover, an idle
                # timeout) between transactions: nothing was lost, so connect again once.
                try:
                    self.raw = self._reconnect()
                except Exception as again:
                    if is_driver_error(again):
                        raise mapped_error(again) from None
                    raise
                try:
                    return self._send(sql, parameters)
                except Exception as retried:
                    if is_driver_error(retried):
                        raise mapped_error(retried) from None
                    raise
            raise mapped_error(error) from None

    def _send(self, sql: str, parameters: Any) -> Any:
        if isinstance(parameters, Mapping):
            cursor = self.raw.execute(translate(sql, named=True), dict(parameters))
        elif parameters:
            cursor = self.raw.execute(translate(sql), tuple(parameters))
        else:
            cursor = self.raw.execute(sql)  # no parameters: sent as is
        if cursor.rowcount > 0 and cursor.description is None:  # rows written
            self._written += cursor.rowcount
        return cursor

    def _after_commit(self) -> None:
        """After a commit that brought the rows written since the planner's statistics
        were last gathered past a threshold (doubling each time): ``ANALYZE`` the vault's
        tables. Without it, right after a first index the planner takes its new tables
        for empty until autovacuum comes by, and a vector query joins 10k documents row by
        row (3.6 s a query instead of 0.3 s)."""
        if self._written < self._analyze_at:
            return
        self._analyze_at = max(self._analyze_at, self._written * 2)
        with contextlib.suppress(Exception):
            self.raw.execute(self._analyze_statement())

    def _analyze_statement(self) -> str:
        """``ANALYZE`` of the vault's own tables (a bare ``ANALYZE`` would take every table
        of the database), without their array and binary columns: the planner has no use
        for statistics of posting lists or vectors, and gathering them is most of the cost."""
        statement = self.__dict__.get("_analyze_sql")
        if statement is None:
            rows = self.raw.execute(
                "SELECT c.table_name, c.column_name FROM information_schema.columns c "
                "JOIN information_schema.tables t ON t.table_schema = c.table_schema "
                "AND t.table_name = c.table_name WHERE c.table_schema = %s "
                "AND t.table_type = 'BASE TABLE' AND c.data_type NOT IN ('ARRAY', 'bytea') "
                "ORDER BY c.table_name, c.ordinal_position",
                (self.schema,),
            ).fetchall()
            columns: dict[str, list[str]] = {}
            for table, column in rows:
                columns.setdefault(str(table), []).append(quoted(str(column)))
            targets = [
                f"{quoted(self.schema)}.{quoted(table)} ({', '.join(names)})"
                for table, names in columns.items()
            ]
            statement = f"ANALYZE {', '.join(targets)}" if targets else "SELECT 1"
            self.__dict__["_analyze_sql"] = statement
        return str(statement)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Any:
        rows = [tuple(row) for row in parameters]
        cursor = self.raw.cursor()
        try:
            if rows:
                cursor.executemany(translate(sql), rows)
                self._written += len(rows)
        except Exception as error:
            if is_driver_error(error):
                raise mapped_error(error) from None
            raise
        return cursor

    def copy_binary(self, target: str, chunks: Iterable[bytes], rows: int) -> None:
        """A stream in ``COPY``'s binary format (signature to trailer, ``rows`` rows) into
        ``target``, sent piece by piece (the server reads while the caller builds)."""
        try:
            cursor = self.raw.cursor()
            with cursor, cursor.copy(f"COPY {target} FROM STDIN (FORMAT BINARY)") as copy:
                for chunk in chunks:
                    copy.write(chunk)
            self._written += rows
        except Exception as error:
            if is_driver_error(error):
                raise mapped_error(error) from None
            raise

    def insert_rows(
        self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
    ) -> None:
        """New rows, sent with ``COPY`` (the driver formats them)."""
        if not rows:
            return
        names = ", ".join(quoted(column) for column in columns)
        try:
            cursor = self.raw.cursor()
            with cursor, cursor.copy(f"COPY {quoted(table)} ({names}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            self._written += len(rows)
        except Exception as error:
            if is_driver_error(error):
                raise mapped_error(error) from None
            raise

    def insert(self, sql: str, parameters: Any = (), /, *, key: str = "id") -> int | None:
        """The new row's ``key`` (``RETURNING``), None when the insert added no row."""
        row = self.execute(f'{sql} RETURNING "{key}"', parameters).fetchone()
        return None if row is None else int(row[0])

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return self.raw.info.transaction_status != TransactionStatus.IDLE

    def close(self) -> None:
        self.raw.close()

    # -- transactions ----------------------------------------------------------------------

    @contextlib.contextmanager
    def transaction(self, *, retry_seconds: float | None = None) -> Iterator[PostgresConnection]:
        """A write transaction holding the vault's advisory lock; VaultBusyError when the
        lock stays taken past ``retry_seconds`` (30 s by default)."""
        wait = _LOCK_RETRY_SECONDS if retry_seconds is None else max(0.0, retry_seconds)
        self.execute("BEGIN")
        try:
            self._take_lock(wait)
            yield self
            self._flush_text()
        except BaseException:
            self._rollback()
            raise
        else:
            self.execute("COMMIT")
            self._after_commit()

    def _take_lock(self, wait: float) -> None:
        deadline = time.monotonic() + wait
        while True:
            row = self.execute("SELECT pg_try_advisory_xact_lock(?)", (self.lock_key,)).fetchone()
            if row and row[0]:
                return
            if time.monotonic() >= deadline:
                raise VaultBusyError("the vault stayed locked by another writer; try again")
            time.sleep(0.02)

    def _flush_text(self) -> None:
        """Send the text index's buffered rows (before a commit or a savepoint)."""
        text = self.__dict__.get("text")
        if text is not None:
            text.flush()

    def _rollback(self) -> None:
        text = self.__dict__.get("text")
        if text is not None:
            text.discard()
        with contextlib.suppress(Exception):
            if self.in_transaction:
                self.execute("ROLLBACK")

    @contextlib.contextmanager
    def savepoint(self) -> Iterator[PostgresConnection]:
        if not self.in_transaction:
            with self.transaction():
                yield self
            return
        self._flush_text()
        self.execute("SAVEPOINT write_step")
        try:
            yield self
        except BaseException:
            text = self.__dict__.get("text")
            if text is not None:
                text.discard()  # all of it came after the savepoint
            self.execute("ROLLBACK TO SAVEPOINT write_step")
            self.execute("RELEASE SAVEPOINT write_step")
            raise
        self.execute("RELEASE SAVEPOINT write_step")

    @contextlib.contextmanager
    def read_snapshot(self) -> Iterator[PostgresConnection]:
        """Every statement in the block reads one snapshot."""
        self.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        try:
            yield self
        finally:
            self._rollback()

    def write_unless_locked(self, action: Callable[[], object]) -> bool:
        self.execute("BEGIN")
        try:
            row = self.execute("SELECT pg_try_advisory_xact_lock(?)", (self.lock_key,)).fetchone()
            if not (row and row[0]):
                self._rollback()
                return False
            action()
            self._flush_text()
            self.execute("COMMIT")
            self._after_commit()
        except BaseException:
            self._rollback()
            raise
        return True

    def bulk_writes(self) -> contextlib.AbstractContextManager[None]:
        # The statistics are gathered as the rows written double (_after_commit), inside a
        # bulk load too: without them, the planner reads a collection's rows one by one
        # against a list of 1,000 paths (seen on a first index of 100,000 notes).
        return contextlib.nullcontext()

    def clock(self) -> datetime:
        """The server's time (``clock_timestamp()``), the one clock every host shares."""
        value = self.execute("SELECT clock_timestamp()").fetchone()[0]
        return value.astimezone(UTC) if isinstance(value, datetime) else datetime.now(UTC)

    # -- the engine's interfaces -----------------------------------------------------------

    @functools.cached_property
    def catalog(self) -> PostgresCatalog:
        from memtrove.db.postgres.catalog import PostgresCatalog

        return PostgresCatalog(self)

    @functools.cached_property
    def text(self) -> PostgresTextIndex:
        from memtrove.db.postgres.text_index import PostgresTextIndex

        return PostgresTextIndex(self)

    @functools.cached_property
    def vectors(self) -> PostgresVectorIndex:
        """The vector index, on pgvector when the database has it, else BYTEA (see
        :func:`memtrove.db.postgres.pgvector_index.open_vector_index`)."""
        from memtrove.db.postgres.pgvector_index import open_vector_index

        return open_vector_index(self)


def is_driver_error(error: Exception) -> bool:
    import psycopg

    return isinstance(error, psycopg.Error)


def open_postgres(
    url: str, *, create: bool = True, busy_timeout_ms: int = 5000
) -> PostgresConnection:
    """The vault at ``url`` (its schema made when missing and ``create``); VaultOpenError
    in one line when the server cannot be reached or refuses, VaultNotFoundError when the
    schema is missing and not ``create``."""
    try:
        import psycopg
    except ImportError:
        raise VaultOpenError(
            "a postgresql:// vault needs psycopg: pip install 'memtrove[postgres]'"
        ) from None
    target, schema = split_url(url)
    host_only = urlsplit(target)._replace(netloc=urlsplit(target).hostname or "")
    shown = shown_location(urlunsplit(host_only))  # nor a password= parameter

    def session() -> psycopg.Connection[Any]:
        raw = psycopg.connect(target, autocommit=True, connect_timeout=10)
        raw.execute(f'SET search_path TO "{schema}"')
        raw.execute(f"SET lock_timeout = {int(busy_timeout_ms)}")
        # A vault's statements are short: starting parallel workers costs more than it saves.
        raw.execute("SET max_parallel_workers_per_gather = 0")
        return raw

    try:
        raw = session()
    except psycopg.Error as error:
        detail = " ".join(str(error).split())
        raise VaultOpenError(f"cannot reach the PostgreSQL vault {shown}: {detail}") from None
    connection = PostgresConnection(raw, schema, shown)
    connection._reconnect = session
    try:
        if create:
            connection.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        if not connection.catalog.schema_exists():
            raise VaultNotFoundError(f"no vault schema {schema!r} in {shown}")
    except BaseException:
        connection.close()
        raise
    return connection
