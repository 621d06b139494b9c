"""``write_step``: a savepoint inside the caller's transaction, a transaction of its own
outside one."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtrove.db.connection import Connection, open_connection, write_step, write_transaction


@pytest.fixture
def connection(tmp_path: Path) -> Connection:
    opened = open_connection(tmp_path / "steps.sqlite")
    opened.execute("CREATE TABLE t (v INTEGER)")
    return opened


def values(connection: Connection) -> list[int]:
    return [int(row[0]) for row in connection.execute("SELECT v FROM t ORDER BY v")]


def test_alone_it_commits_or_rolls_back_its_own_transaction(connection: Connection) -> None:
    with write_step(connection):
        connection.execute("INSERT INTO t VALUES (1)")
    assert not connection.in_transaction and values(connection) == [1]
    with pytest.raises(RuntimeError), write_step(connection):
        connection.execute("INSERT INTO t VALUES (2)")
        raise RuntimeError("refused")
    assert not connection.in_transaction and values(connection) == [1]


def test_inside_a_transaction_a_failed_step_undoes_only_itself(connection: Connection) -> None:
    with write_transaction(connection):
        connection.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(RuntimeError), write_step(connection):
            connection.execute("INSERT INTO t VALUES (2)")
            raise RuntimeError("refused")
        with write_step(connection):
            connection.execute("INSERT INTO t VALUES (3)")
        assert connection.in_transaction
    assert values(connection) == [1, 3]


def test_the_callers_rollback_takes_every_step_with_it(connection: Connection) -> None:
    with pytest.raises(RuntimeError), write_transaction(connection):
        with write_step(connection):
            connection.execute("INSERT INTO t VALUES (1)")
        raise RuntimeError("later failure")
    assert values(connection) == []
