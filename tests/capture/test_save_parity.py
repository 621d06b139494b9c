"""saveMemory parity through the Vault's capture: a memory saved again is counted on the
first copy (``duplicate_count``), within 30 minutes by its normalized body, within 7 days
by type and title; on SQLite and PostgreSQL, with the loopback fake model server."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.hooks.transcript import read_turns
from memtrove.models.registry import ModelSettings
from tests.capture.transcripts import OTHER_SESSION, SESSION, SESSION_ONE, write_transcript
from tests.conftest import ENGINES
from tests.fakes.model_server import ModelServer
from tests.postgres_server import vault_schema

MILESTONE = """<observations>
<observation><type>milestone</type><title>Redis 7 everywhere</title>
<narrative>{narrative}</narrative>
<facts><fact>Redis 7 serves the session cache</fact></facts><confidence>0.8</confidence>
</observation>
<observation><type>problem</type><title>Session cache times out under load</title>
<narrative>Redis timeouts after 2000 ms when the connection pool is exhausted.</narrative>
<facts><fact>The pool was exhausted under load</fact></facts><confidence>0.8</confidence>
</observation>
</observations>"""

NARRATIVE = "The session cache now runs on Redis 7 in every region."
RESPACED = "The session  cache now runs on REDIS 7\nin every region."
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture(params=ENGINES)
def smart(
    request: pytest.FixtureRequest, tmp_path: Path, model_server: ModelServer
) -> Iterator[Vault]:
    settings = ModelSettings(llm_url=model_server.url)
    if request.param == "sqlite":
        vault = Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "c", models=settings)
        yield vault
        vault.close()
        return
    with vault_schema() as location:
        vault = Vault.open(location, config_dir=tmp_path / "c", models=settings)
        yield vault
        vault.close()


def observations(vault: Vault) -> list[tuple[str, int]]:
    rows = vault._connection.execute(
        "SELECT title, duplicate_count FROM documents WHERE path LIKE 'agent/observations/%' "
        "AND active = 1 ORDER BY title, id"
    ).fetchall()
    return [(str(title), int(count)) for title, count in rows]


def capture(vault: Vault, session: str, transcript: Path, at: datetime) -> int:
    vault._clock = lambda: at
    report = vault.capture.capture_observations(session, read_turns(str(transcript)))
    assert report.source == "observer", report
    return len(report.documents)


def test_a_memory_saved_again_is_counted_not_written_twice(
    smart: Vault, model_server: ModelServer, tmp_path: Path
) -> None:
    one = write_transcript(tmp_path / "one.jsonl", SESSION_ONE)
    two = write_transcript(tmp_path / "two.jsonl", SESSION_ONE)
    model_server.set_chat_reply(lambda _: MILESTONE.format(narrative=NARRATIVE))
    capture(smart, SESSION, one, START)
    assert observations(smart) == [
        ("Redis 7 everywhere", 1),
        ("Session cache times out under load", 1),
    ]
    # The same memory but for case and spacing, from another session.
    model_server.set_chat_reply(lambda _: MILESTONE.format(narrative=RESPACED))
    capture(smart, OTHER_SESSION, two, START + timedelta(minutes=20))
    # The milestone (always_new) by its normalized body within 30 minutes; the problem
    # (dedup_check) by its type and title.
    assert observations(smart) == [
        ("Redis 7 everywhere", 2),
        ("Session cache times out under load", 2),
    ]
    row = smart._connection.execute(
        "SELECT last_seen_at FROM documents WHERE title = 'Redis 7 everywhere'"
    ).fetchone()
    assert row[0] == "2026-03-02T09:20:00Z"


def test_past_the_window_the_same_body_is_a_new_memory(
    smart: Vault, model_server: ModelServer, tmp_path: Path
) -> None:
    one = write_transcript(tmp_path / "one.jsonl", SESSION_ONE)
    two = write_transcript(tmp_path / "two.jsonl", SESSION_ONE)
    model_server.set_chat_reply(lambda _: MILESTONE.format(narrative=NARRATIVE))
    capture(smart, SESSION, one, START)
    model_server.set_chat_reply(lambda _: MILESTONE.format(narrative=RESPACED))
    capture(smart, OTHER_SESSION, two, START + timedelta(minutes=31))
    assert observations(smart) == [
        ("Redis 7 everywhere", 1),
        ("Redis 7 everywhere", 1),
        ("Session cache times out under load", 2),
    ]


def test_an_observations_facts_and_narrative_are_fragments_of_their_own(
    smart: Vault, model_server: ModelServer, tmp_path: Path, notes: Path
) -> None:
    from tests.conftest import write

    write(notes, "cache.md", "# Cache\n\nThe session cache lives in Redis.\n")
    smart.add_collection(notes, name="notes")
    smart.update()
    smart.embed()
    model_server.set_chat_reply(lambda _: MILESTONE.format(narrative=NARRATIVE))
    capture(smart, SESSION, write_transcript(tmp_path / "one.jsonl", SESSION_ONE), START)
    rows = smart._connection.execute(
        "SELECT f.fragment_type, f.start_offset, f.end_offset, c.doc FROM documents d "
        "JOIN fragments f ON f.hash = d.hash JOIN content c ON c.hash = d.hash "
        "WHERE d.title = 'Redis 7 everywhere' ORDER BY f.seq"
    ).fetchall()
    assert [(kind, str(text)[start:end]) for kind, start, end, text in rows][1:] == [
        ("narrative", NARRATIVE),
        ("fact", "Redis 7 serves the session cache"),
    ]
    embedded = smart._connection.execute(
        "SELECT fragment_type FROM content_vectors v JOIN documents d ON d.hash = v.hash "
        "WHERE d.title = 'Redis 7 everywhere' ORDER BY v.seq"
    ).fetchall()
    assert [kind for (kind,) in embedded] == ["full", "narrative", "fact"]
