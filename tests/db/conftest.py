"""A PostgreSQL schema of its own for each test that asks for ``url`` (dropped after it),
on the server the environment names; such tests fail, naming the server, when it cannot be
reached (``MEMTROVE_TEST_POSTGRES=off`` skips them instead)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

# Read at import: the suite's fixtures clear MEMTROVE_* variables around each test.
SERVER = os.environ.get("MEMTROVE_TEST_POSTGRES_URL", "postgresql://root@127.0.0.1:5432/test")
SKIP = os.environ.get("MEMTROVE_TEST_POSTGRES") == "off"


def _reachable() -> None:
    import psycopg

    if SKIP:
        pytest.skip("MEMTROVE_TEST_POSTGRES=off")
    try:
        psycopg.connect(SERVER, connect_timeout=5).close()
    except psycopg.Error as error:
        pytest.fail(
            f"the PostgreSQL server at {SERVER} is not reachable ({error}); start it with "
            "`pg_ctlcluster --skip-systemctl-redirect 15 main start`"
        )


@pytest.fixture
def url() -> Iterator[str]:
    _reachable()
    schema = f"memtrove_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    yield f"{SERVER}?schema={schema}"
    import psycopg

    with psycopg.connect(SERVER, autocommit=True) as raw:
        raw.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
