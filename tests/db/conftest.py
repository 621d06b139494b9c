"""A PostgreSQL schema of its own for each test that asks for ``url`` (dropped after it);
see :mod:`tests.postgres_server`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.postgres_server import SERVER, fresh_schema

__all__ = ["SERVER"]


@pytest.fixture
def url() -> Iterator[str]:
    with fresh_schema() as location:
        yield location
