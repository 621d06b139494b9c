"""Session and hook tracking: dedupe windows, turn indexes, prompts, one-transaction logging,
locked vaults, and two processes logging at once."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memtrove import DocumentNotFoundError, InvalidQueryError, Vault, VaultBusyError
from memtrove.db.connection import open_connection
from memtrove.db.postgres import connection as postgres_connection
from memtrove.db.sqlite import connection as connection_module
from memtrove.lifecycle.sessions import prompt_hash
from tests.conftest import sqlite_only, where, write

NOW = datetime(2026, 3, 10, 12, 0, 0, tzinfo=UTC)
HOOK = "context-surfacing"


class Clock:
    """A settable clock for the vault's session windows."""

    def __init__(self, moment: datetime = NOW) -> None:
        self.moment = moment

    def __call__(self) -> datetime:
        return self.moment

    def advance(self, seconds: float) -> None:
        self.moment += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def tracked(vault: Vault, notes: Path, clock: Clock) -> Vault:
    for name in ("a", "b", "c", "d"):
        write(notes, f"{name}.md", f"# Note {name}\n\nText of note {name}.\n")
    vault.add_collection(notes, name="notes")
    vault.update()
    vault._clock = clock
    return vault


def doc_ids(vault: Vault, *names: str) -> list[int]:
    return [vault.get(f"notes/{name}.md").doc_id for name in names]


def rows(vault: Vault, sql: str, *params: object) -> list[tuple[object, ...]]:
    return [tuple(row) for row in vault._connection.execute(sql, params).fetchall()]


# -- hook_seen ------------------------------------------------------------------------------


def test_hook_seen_within_the_window(tracked: Vault, clock: Clock) -> None:
    assert tracked.sessions.hook_seen(HOOK, "How do we rotate tokens?") is False
    assert tracked.sessions.hook_seen(HOOK, "  How do we rotate tokens?\n") is True  # trimmed
    assert (
        tracked.sessions.hook_seen("another-hook", "How do we rotate tokens?") is False
    )  # per hook
    assert tracked.sessions.hook_seen(HOOK, "how do we rotate tokens?") is False  # case matters
    clock.advance(599)
    assert tracked.sessions.hook_seen(HOOK, "How do we rotate tokens?") is True
    clock.advance(601)  # each sighting is recorded: the window restarts from the last one
    assert tracked.sessions.hook_seen(HOOK, "How do we rotate tokens?") is False
    clock.advance(30)
    assert tracked.sessions.hook_seen(HOOK, "How do we rotate tokens?", window_seconds=10) is False
    assert tracked.sessions.hook_seen(HOOK, "How do we rotate tokens?", window_seconds=0) is False


def test_hook_seen_records_hash_and_preview(tracked: Vault) -> None:
    prompt = "  " + "x" * 300 + "  "
    tracked.sessions.hook_seen(HOOK, prompt)
    [(name, digest, preview, seen)] = rows(tracked, "SELECT * FROM hook_dedupe")
    assert name == HOOK and digest == hashlib.sha256(("x" * 300).encode()).hexdigest()
    assert digest == prompt_hash(prompt) and preview == "x" * 120
    assert seen == "2026-03-10T12:00:00Z"


def test_hook_seen_reads_old_timestamps(tracked: Vault) -> None:
    """A row written long ago (by another process, say) is outside the window."""
    tracked._clock = lambda: datetime.now(UTC)
    tracked._connection.execute(
        "INSERT INTO hook_dedupe VALUES (?, ?, 'old', '2020-01-01T00:00:00Z')",
        (HOOK, prompt_hash("old prompt")),
    )
    assert tracked.sessions.hook_seen(HOOK, "old prompt") is False
    assert tracked.sessions.hook_seen(HOOK, "old prompt") is True


# -- turn_index and recent_queries ----------------------------------------------------------


def test_turn_index_counts_earlier_rows_of_the_hook(tracked: Vault) -> None:
    assert tracked.sessions.turn_index("s1") == 0
    for turn in range(3):
        assert tracked.sessions.turn_index("s1") == turn
        tracked.sessions.log_context_usage("s1", HOOK, turn_index=turn, query_text=f"prompt {turn}")
    tracked.sessions.log_context_usage("s1", "memory_pin")
    tracked.sessions.log_context_usage("s2", HOOK)
    assert tracked.sessions.turn_index("s1") == 3
    assert tracked.sessions.turn_index("s1", "memory_pin") == 1
    assert tracked.sessions.turn_index("s2") == 1
    assert tracked.sessions.turn_index("unknown") == 0


def test_recent_queries_newest_first_within_the_window(tracked: Vault, clock: Clock) -> None:
    tracked.sessions.log_context_usage("s1", HOOK, query_text="first")
    clock.advance(60)
    tracked.sessions.log_context_usage("s1", HOOK, query_text=None)  # a gated turn: no text
    tracked.sessions.log_context_usage("s1", HOOK, query_text="")
    tracked.sessions.log_context_usage("s1", "postcompact-inject", query_text="not a prompt")
    tracked.sessions.log_context_usage("s2", HOOK, query_text="other session")
    clock.advance(60)
    tracked.sessions.log_context_usage("s1", HOOK, query_text="second")
    tracked.sessions.log_context_usage("s1", HOOK, query_text="third")  # same second: by id
    assert tracked.sessions.recent_queries("s1") == ["third", "second"]
    assert tracked.sessions.recent_queries("s1", limit=5) == ["third", "second", "first"]
    assert tracked.sessions.recent_queries("s1", limit=0) == []
    assert tracked.sessions.recent_queries("s1", within_seconds=30, limit=5) == ["third", "second"]
    clock.advance(600 - 120 + 1)  # "first" is now 601 s old
    assert tracked.sessions.recent_queries("s1", limit=5) == ["third", "second"]
    clock.advance(3600)
    assert tracked.sessions.recent_queries("s1") == []
    assert tracked.sessions.recent_queries("nobody") == []
    with pytest.raises(InvalidQueryError):
        tracked.sessions.recent_queries("s1", limit=-1)


# -- log_context_usage ----------------------------------------------------------------------


def test_log_context_usage_writes_every_table(tracked: Vault) -> None:
    a, b, c = doc_ids(tracked, "a", "b", "c")
    usage = tracked.sessions.log_context_usage(
        "s1",
        HOOK,
        injected=[(a, 0.9), (b, 0.5), (c, 0.25), (a, 0.1)],  # a twice: counted once
        estimated_tokens=120,
        turn_index=0,
        query_text="notes please",
    )
    [row] = rows(tracked, "SELECT * FROM context_usage")
    assert row == (
        usage, "s1", "2026-03-10T12:00:00Z", HOOK,
        json.dumps(["notes/a.md", "notes/b.md", "notes/c.md"]), 120, 0, 0, "notes please",
    )  # fmt: skip
    query_hash = hashlib.sha256(b"notes please").hexdigest()
    assert rows(
        tracked,
        "SELECT doc_id, query_hash, search_score, session_id, usage_id, turn_index, "
        "surfaced_at, was_referenced FROM recall_events ORDER BY doc_id",
    ) == [
        (a, query_hash, 0.9, "s1", usage, 0, "2026-03-10T12:00:00Z", 0),
        (b, query_hash, 0.5, "s1", usage, 0, "2026-03-10T12:00:00Z", 0),
        (c, query_hash, 0.25, "s1", usage, 0, "2026-03-10T12:00:00Z", 0),
    ]
    stats = rows(tracked, "SELECT * FROM recall_stats WHERE doc_id = ?", a)
    assert stats[0][:8] == (
        a, 1, 1, 1, 0.9, 0.9, "2026-03-10T12:00:00Z", "2026-03-10T12:00:00Z"
    )  # fmt: skip
    assert rows(tracked, "SELECT doc_a, doc_b, count FROM co_activations ORDER BY 1, 2") == [
        (a, b, 1), (a, c, 1), (b, c, 1)
    ]  # fmt: skip
    [record] = tracked.sessions.session_log()
    assert record.to_dict() == {
        "session_id": "s1",
        "started_at": "2026-03-10T12:00:00Z",
        "last_seen_at": "2026-03-10T12:00:00Z",
        "turns": 1,
        "injected_documents": 3,
        "estimated_tokens": 120,
        "handoff_path": None,
        "summary": None,
        "files_changed": [],
        "ended_at": None,
        "machine": None,  # recorded by session-start, not by a prompt's usage row
    }


def test_log_context_usage_is_one_transaction(tracked: Vault) -> None:
    sqlite_only(tracked, "its statement trace")
    a, b = doc_ids(tracked, "a", "b")
    statements: list[str] = []
    tracked._connection.set_trace_callback(statements.append)
    try:
        tracked.sessions.log_context_usage(
            "s1", HOOK, injected=[(a, 0.5), (b, 0.4)], query_text="q"
        )
    finally:
        tracked._connection.set_trace_callback(None)
    begins = [n for n, sql in enumerate(statements) if sql.startswith("BEGIN")]
    commits = [n for n, sql in enumerate(statements) if sql.startswith("COMMIT")]
    assert [statements[n] for n in begins] == ["BEGIN IMMEDIATE"] and len(commits) == 1
    inside = "\n".join(statements[begins[0] : commits[0]])
    written = set(re.findall(r"(?:INSERT INTO|^UPDATE) (\w+)", inside, re.M))
    assert written == {
        "context_usage", "recall_events", "recall_stats", "co_activations", "session_log"
    }  # fmt: skip
    outside = statements[: begins[0]] + statements[commits[0] + 1 :]
    assert not [sql for sql in outside if sql.startswith(("INSERT", "UPDATE", "DELETE"))]


def test_an_unknown_document_writes_nothing(tracked: Vault) -> None:
    [a] = doc_ids(tracked, "a")
    with pytest.raises(DocumentNotFoundError, match="999999"):
        tracked.sessions.log_context_usage("s1", HOOK, injected=[(a, 0.5), (999999, 0.4)])
    for table in ("context_usage", "recall_events", "recall_stats", "co_activations"):
        assert rows(tracked, f"SELECT COUNT(*) FROM {table}") == [(0,)]
    assert tracked.sessions.session_log() == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"injected": [(1, float("nan"))]}, "not a number"),
        ({"estimated_tokens": -1}, "estimated_tokens"),
        ({"turn_index": -1}, "turn_index"),
    ],
)
def test_log_context_usage_checks_its_arguments(
    tracked: Vault, kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(InvalidQueryError, match=message):
        tracked.sessions.log_context_usage("s1", HOOK, **kwargs)  # type: ignore[arg-type]


def test_recall_stats_accumulate(tracked: Vault, clock: Clock) -> None:
    a, b = doc_ids(tracked, "a", "b")
    tracked.sessions.log_context_usage("s1", HOOK, injected=[(a, 0.5)], query_text="one")
    tracked.sessions.log_context_usage("s1", HOOK, injected=[(a, 0.7)], query_text="one")
    clock.advance(86400 * 3)
    tracked.sessions.log_context_usage("s2", HOOK, injected=[(a, 0.2), (b, 0.3)], query_text="two")
    tracked.sessions.log_context_usage("s2", HOOK, injected=[(a, 0.1)])  # no query: no hash
    (
        recalls, unique, days, total, best, first, last, diversity, spacing, negative
    ) = rows(tracked, "SELECT * FROM recall_stats WHERE doc_id = ?", a)[0][1:]  # fmt: skip
    assert (recalls, unique, days) == (4, 2, 2)
    assert total == pytest.approx(1.5) and best == pytest.approx(0.7)
    assert (first, last) == ("2026-03-10T12:00:00Z", "2026-03-13T12:00:00Z")
    assert diversity == pytest.approx(2 / 5)
    assert 0 < float(str(spacing)) < 1 and negative == 0
    assert rows(tracked, "SELECT query_hash FROM recall_events WHERE usage_id = 4") == [("",)]
    b_stats = "SELECT recall_count, unique_queries FROM recall_stats WHERE doc_id = ?"
    assert rows(tracked, b_stats, b) == [(1, 1)]


def test_session_log_counts_and_order(tracked: Vault, clock: Clock) -> None:
    a, b, c = doc_ids(tracked, "a", "b", "c")
    tracked.sessions.log_context_usage("old", HOOK, injected=[(a, 0.5)], estimated_tokens=10)
    clock.advance(10)
    tracked.sessions.log_context_usage(
        "new", HOOK, injected=[(a, 0.5), (b, 0.5)], estimated_tokens=20
    )
    clock.advance(10)
    tracked.sessions.log_context_usage(
        "new", HOOK, injected=[(b, 0.5), (c, 0.5)], estimated_tokens=30
    )
    tracked.sessions.log_context_usage(
        "new", "postcompact-inject", estimated_tokens=5
    )  # not a turn
    records = tracked.sessions.session_log()
    assert [r.session_id for r in records] == ["new", "old"]
    new = records[0]
    assert (new.turns, new.injected_documents, new.estimated_tokens) == (2, 3, 55)
    assert (new.started_at, new.last_seen_at) == ("2026-03-10T12:00:10Z", "2026-03-10T12:00:20Z")
    assert [r.session_id for r in tracked.sessions.session_log(limit=1)] == ["new"]
    with pytest.raises(InvalidQueryError):
        tracked.sessions.session_log(limit=0)


def test_co_activation_counts(tracked: Vault) -> None:
    a, b, c, d = doc_ids(tracked, "a", "b", "c", "d")
    tracked.sessions.log_context_usage("s1", HOOK, injected=[(a, 0.5), (b, 0.5), (c, 0.5)])
    tracked.sessions.log_context_usage("s1", HOOK, injected=[(c, 0.5), (a, 0.5)])
    tracked.sessions.log_context_usage("s1", HOOK, injected=[(d, 0.5)])  # alone: no pair
    assert [tracked.sessions.co_activation_count(doc) for doc in (a, b, c, d)] == [3, 2, 3, 0]
    assert tracked.sessions.co_activation_count(123456) == 0


# -- locked vaults --------------------------------------------------------------------------


@contextlib.contextmanager
def held_lock(location: Path | str) -> Iterator[None]:
    """Another connection holding the vault's write lock (a write transaction)."""
    other = open_connection(location)
    try:
        with other.transaction():
            yield
    finally:
        other.close()


def _busy_vault(tmp_path: Path, clock: Clock, vault: Vault) -> Vault:
    opened = Vault.open(where(vault), config_dir=tmp_path / "config", busy_timeout_ms=50)
    opened._clock = clock
    return opened


def test_hook_seen_on_a_locked_vault_answers_false(
    tmp_path: Path, tracked: Vault, clock: Clock
) -> None:
    tracked.sessions.hook_seen(HOOK, "seen before the lock")
    with _busy_vault(tmp_path, clock, tracked) as busy:
        with held_lock(where(tracked)):
            started = time.monotonic()
            assert busy.sessions.hook_seen(HOOK, "seen before the lock") is False  # fails open
            assert busy.sessions.hook_seen(HOOK, "a new prompt") is False
            assert time.monotonic() - started < 2
        assert busy.sessions.hook_seen(HOOK, "seen before the lock") is True
        assert busy.sessions.hook_seen(HOOK, "a new prompt") is False  # not recorded while locked


def test_log_context_usage_waits_for_a_lock(tmp_path: Path, tracked: Vault, clock: Clock) -> None:
    [a] = doc_ids(tracked, "a")
    taken = threading.Event()

    def hold() -> None:
        with held_lock(where(tracked)):
            taken.set()
            time.sleep(0.4)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert taken.wait(30)
        with _busy_vault(tmp_path, clock, tracked) as busy:
            usage = busy.sessions.log_context_usage("s1", HOOK, injected=[(a, 0.5)])
    finally:
        holder.join()
    assert rows(tracked, "SELECT id FROM context_usage") == [(usage,)]


def test_log_context_usage_raises_busy_after_its_deadline(
    tmp_path: Path, tracked: Vault, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connection_module, "_LOCK_RETRY_SECONDS", 0.3)
    monkeypatch.setattr(postgres_connection, "_LOCK_RETRY_SECONDS", 0.3)
    with (
        _busy_vault(tmp_path, clock, tracked) as busy,
        held_lock(where(tracked)),
        pytest.raises(VaultBusyError),
    ):
        busy.sessions.log_context_usage("s1", HOOK)
    assert rows(tracked, "SELECT COUNT(*) FROM context_usage") == [(0,)]


# -- concurrency ----------------------------------------------------------------------------

WRITER = """
import sys, time
from memtrove import Vault
path, config, name, start, count, ids = sys.argv[1:7]
ids = [int(i) for i in ids.split(",")]
with Vault.open(path, config_dir=config, busy_timeout_ms=100) as vault:
    while time.time() < float(start):
        time.sleep(0.001)
    for n in range(int(count)):
        injected = [(ids[(n + k) % len(ids)], 0.5) for k in range(3)]
        vault.sessions.log_context_usage(
            "shared", "context-surfacing", injected=injected, estimated_tokens=10,
            turn_index=n, query_text=f"{name} {n}",
        )
"""


def _check_totals(vault: Vault, writers: int, count: int) -> None:
    total = writers * count
    assert rows(vault, "SELECT COUNT(*) FROM context_usage") == [(total,)]
    assert rows(vault, "SELECT COUNT(*) FROM recall_events") == [(total * 3,)]
    assert rows(vault, "SELECT SUM(recall_count) FROM recall_stats") == [(total * 3,)]
    assert rows(vault, "SELECT SUM(count) FROM co_activations") == [(total * 3,)]
    [record] = vault.sessions.session_log()
    assert (record.turns, record.estimated_tokens, record.injected_documents) == (
        total, total * 10, 4
    )  # fmt: skip


def test_two_processes_logging_at_once_lose_nothing(tmp_path: Path, tracked: Vault) -> None:
    ids = ",".join(str(doc) for doc in doc_ids(tracked, "a", "b", "c", "d"))
    start = str(time.time() + 1.5)
    count = 40
    vault_args = [str(where(tracked)), str(tmp_path / "config")]
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, *vault_args, name, start, str(count), ids],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("first", "second")
    ]
    for process in processes:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
    _check_totals(tracked, 2, count)


def test_threads_with_their_own_vaults_lose_nothing(tmp_path: Path, tracked: Vault) -> None:
    ids = doc_ids(tracked, "a", "b", "c", "d")
    count = 25
    errors: list[BaseException] = []
    barrier = threading.Barrier(3)

    def work(name: str) -> None:
        try:
            with Vault.open(
                where(tracked), config_dir=tmp_path / "config", busy_timeout_ms=20
            ) as own:
                barrier.wait()
                for n in range(count):
                    injected = [(ids[(n + k) % len(ids)], 0.5) for k in range(3)]
                    own.sessions.log_context_usage(
                        "shared", HOOK, injected=injected, estimated_tokens=10, turn_index=n
                    )
                    own.sessions.hook_seen(HOOK, f"{name} {n}")
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(f"t{n}",)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    _check_totals(tracked, 3, count)
