"""The PostgreSQL server the tests use: a schema of its own per test (dropped after it), on
the server ``MEMTROVE_TEST_POSTGRES_URL`` names (default: the machine's, database ``test``).

A test asking for PostgreSQL fails, naming the server and how to start it, when it cannot be
reached; ``MEMTROVE_TEST_POSTGRES=off`` skips those tests instead (and leaves the ``vault``
fixture on SQLite alone).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

# Read at import: the suite's fixtures clear MEMTROVE_* variables around each test.
SERVER = os.environ.get("MEMTROVE_TEST_POSTGRES_URL", "postgresql://root@127.0.0.1:5432/test")
OFF = os.environ.get("MEMTROVE_TEST_POSTGRES", "").strip().lower() in ("off", "0", "no")


def reachable() -> None:
    """Skip when PostgreSQL is switched off for the tests; fail when it cannot be reached."""
    import psycopg

    if OFF:
        pytest.skip("MEMTROVE_TEST_POSTGRES=off")
    try:
        psycopg.connect(SERVER, connect_timeout=5).close()
    except psycopg.Error as error:
        pytest.fail(
            f"the PostgreSQL server at {SERVER} is not reachable ({error}); start it with "
            "`pg_ctlcluster --skip-systemctl-redirect 15 main start`"
        )


@contextmanager
def fresh_schema() -> Iterator[str]:
    """The URL of a vault in a new schema, dropped on exit."""
    reachable()
    schema = f"memtrove_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    separator = "&" if "?" in SERVER else "?"
    try:
        yield f"{SERVER}{separator}schema={schema}"
    finally:
        import psycopg

        with psycopg.connect(SERVER, autocommit=True) as raw:
            raw.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
