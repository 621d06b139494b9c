"""decision-extractor's capture through the Vault: documents, triples, causal links and
contradictions, with the loopback fake model server and without any LLM."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.capture.contradictions import FLOOR, PENALTY
from memtrove.hooks.transcript import read_turns
from memtrove.models.registry import ModelSettings
from tests.capture.transcripts import (
    OTHER_SESSION,
    SESSION,
    SESSION_ONE,
    SESSION_TWO,
    write_transcript,
)
from tests.fakes.model_server import ModelServer

OBSERVED = """```xml
<observations>
<observation><type>problem</type><title>Session cache times out under load</title>
<narrative>Redis timeouts after 2000 ms when the connection pool is exhausted.</narrative>
<facts><fact>The pool was exhausted under load</fact></facts><confidence>0.8</confidence>
</observation>
<observation><type>decision</type><title>Use Redis with a bigger connection pool</title>
<narrative>The session cache keeps Redis; the connection pool grows to 50 under load.</narrative>
<facts><fact>Redis pool size is 50</fact></facts>
<triples><triple><subject>session cache</subject><predicate>uses</predicate><object>Redis</object></triple>
<triple><subject>session cache</subject><predicate>likes</predicate><object>Redis</object></triple></triples>
<confidence>0.9</confidence></observation>
<observation><type>preference</type><title>Avoid long cache timeouts</title>
<narrative>Don't use cache timeouts over 500 ms.</narrative>
<triples><triple><subject>user</subject><predicate>avoids</predicate><object>long cache timeouts</object></triple></triples>
</observation>
</observations>
```"""


def rows(vault: Vault, sql: str, *args: object) -> list[tuple[object, ...]]:
    return [tuple(row) for row in vault._connection.execute(sql, args).fetchall()]


def snapshot(vault: Vault) -> list[list[tuple[object, ...]]]:
    tables = ("documents", "entity_triples", "memory_relations", "session_log")
    return [rows(vault, f"SELECT * FROM {table} ORDER BY 1") for table in tables]


@pytest.fixture
def transcripts(tmp_path: Path) -> tuple[str, str]:
    one = write_transcript(tmp_path / "one.jsonl", SESSION_ONE)
    two = write_transcript(tmp_path / "two.jsonl", SESSION_TWO)
    return str(one), str(two)


@pytest.fixture
def smart(tmp_path: Path, model_server: ModelServer) -> Iterator[Vault]:
    settings = ModelSettings(llm_url=model_server.url)
    vault = Vault.open(tmp_path / "smart.sqlite", config_dir=tmp_path / "config", models=settings)
    yield vault
    vault.close()


def replying(
    observer: str, verdict: str = '{"contradicts": true, "confidence": 0.9}'
) -> Callable[[str], str]:
    def reply(prompt: str) -> str:
        return verdict if "Does the NEW decision contradict" in prompt else observer

    return reply


def test_without_an_llm_the_heuristic_writes_marked_observations(
    vault: Vault, transcripts: tuple[str, str]
) -> None:
    report = vault.capture.capture_observations(SESSION, read_turns(transcripts[0]))
    assert report.source == "heuristic" and report.observations >= 3 and report.triples == 0
    paths = [str(p) for (p,) in rows(vault, "SELECT path FROM documents ORDER BY id")]
    observations = [p for p in paths if p.startswith("agent/observations/")]
    day = vault._clock().strftime("%Y-%m-%d")
    assert all(p.startswith(f"agent/observations/{day}-9f1e2d3c-") for p in observations)
    assert f"agent/decisions/{day}-9f1e2d3c.md" in paths
    body = vault.get(f"_memtrove/{observations[0]}").body
    head = body.split("\n---\n")[0]
    for key in ("title:", 'type: "observation"', "observation_type:", "session_id:",
                "authored_at:", "facts:", 'source: "heuristic"', "confidence:"):  # fmt: skip
        assert key in head, key
    # The cursor: the same turns again write nothing.
    before = snapshot(vault)
    again = vault.capture.capture_observations(SESSION, read_turns(transcripts[0]))
    assert again.turns == 0 and snapshot(vault)[:3] == before[:3]


def test_the_observer_writes_observations_triples_and_causal_links(
    smart: Vault, model_server: ModelServer, transcripts: tuple[str, str]
) -> None:
    model_server.set_chat_reply(replying(OBSERVED))
    report = smart.capture.capture_observations(SESSION, read_turns(transcripts[0]))
    assert report.source == "observer" and report.observations == 3 and report.llm_error is None
    # Canonical predicates only: "likes" is skipped; the problem's type is not eligible.
    facts = rows(smart, "SELECT predicate, object_literal FROM entity_triples ORDER BY id")
    assert facts == [("uses", None), ("avoids", "long cache timeouts")]
    assert report.triples == 2
    causal = rows(
        smart, "SELECT source_id, target_id FROM memory_relations WHERE relation_type = 'causal'"
    )
    titles = {int(str(i)): str(t) for i, t in rows(smart, "SELECT id, title FROM documents")}
    assert [(titles[int(str(a))], titles[int(str(b))]) for a, b in causal] == [
        ("Session cache times out under load", "Use Redis with a bigger connection pool")
    ]
    paths = [str(p) for (p,) in rows(smart, "SELECT path FROM documents")]
    assert any(p.startswith("agent/antipatterns/") for p in paths)
    prompt = model_server.requests_to("chat")[0].body["messages"][0]["content"]
    assert "<transcript>" in prompt and "connection pool" in prompt


@pytest.mark.parametrize(
    "fault",
    ["garbage", "http500", "slow", "degenerate", "truncated-nothing"],
)
def test_every_observer_failure_falls_back_to_the_heuristic(
    smart: Vault, model_server: ModelServer, transcripts: tuple[str, str], fault: str
) -> None:
    if fault == "garbage":
        model_server.set_chat_reply("I cannot help with that.")
    elif fault == "truncated-nothing":
        model_server.set_chat_reply("<observations><observation><type>decision</type><title>Cut")
    else:
        model_server.set_mode("chat", fault)
    report = smart.capture.capture_observations(
        SESSION, read_turns(transcripts[0]), time_budget=1.0
    )
    assert report.source == "heuristic" and report.llm_error
    sources = {str(s) for (s,) in rows(smart, "SELECT path FROM documents")}
    assert sources and all("observer" not in smart.get(f"_memtrove/{p}").body.split("---")[1]
                           for p in sources)  # fmt: skip


def test_a_failed_write_leaves_nothing_half_done(
    vault: Vault, transcripts: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import memtrove.index.internal as internal

    real = internal.write_internal
    calls = []

    def failing(*args: object, **kwargs: object) -> int:
        calls.append(args)
        if len(calls) == 2:
            raise RuntimeError("disk full")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(internal, "write_internal", failing)
    with pytest.raises(RuntimeError):
        vault.capture.capture_observations(SESSION, read_turns(transcripts[0]))
    assert rows(vault, "SELECT COUNT(*) FROM documents") == [(0,)]
    assert rows(vault, "SELECT COUNT(*) FROM session_log") == [(0,)]


def test_a_failed_edge_write_takes_the_documents_and_facts_with_it(
    smart: Vault, model_server: ModelServer, transcripts: tuple[str, str]
) -> None:
    """Triples and edges are written in the capture's transaction: when the causal edge
    cannot be written (here a trigger refuses it), the documents, facts and cursor are
    not there either, and the same turns are captured whole on the next run."""
    from memtrove.db.connection import DatabaseError

    model_server.set_chat_reply(replying(OBSERVED))
    smart._connection.execute(
        "CREATE TRIGGER refuse_causal BEFORE INSERT ON memory_relations"
        " WHEN NEW.relation_type = 'causal' BEGIN SELECT RAISE(ABORT, 'disk full'); END"
    )
    with pytest.raises(DatabaseError, match="disk full"):
        smart.capture.capture_observations(SESSION, read_turns(transcripts[0]))
    for table in ("documents", "entity_triples", "memory_relations", "session_log"):
        assert rows(smart, f"SELECT COUNT(*) FROM {table}") == [(0,)], table
    smart._connection.execute("DROP TRIGGER refuse_causal")
    report = smart.capture.capture_observations(SESSION, read_turns(transcripts[0]))
    assert report.observations == 3 and report.triples == 2 and report.causal_links == 1


def decision_confidence(vault: Vault) -> dict[str, tuple[float, object]]:
    return {
        str(path): (float(conf), invalidated)  # type: ignore[arg-type]
        for path, conf, invalidated in rows(
            vault,
            "SELECT path, confidence, invalidated_at FROM documents WHERE path LIKE 'agent/decisions/%'",
        )
    }


@pytest.mark.parametrize("invalidate", [False, True])
def test_a_contradicting_decision_lowers_the_old_one(
    vault: Vault, transcripts: tuple[str, str], invalidate: bool
) -> None:
    vault.capture.capture_observations(SESSION, read_turns(transcripts[0]))
    (old_path,) = decision_confidence(vault)
    old_confidence = decision_confidence(vault)[old_path][0]
    assert old_confidence == 0.85
    report = vault.capture.capture_observations(
        OTHER_SESSION, read_turns(transcripts[1]), invalidate=invalidate
    )
    assert len(report.contradictions) == 1
    after = decision_confidence(vault)
    assert after[old_path][0] == pytest.approx(old_confidence - PENALTY)
    assert (after[old_path][1] is not None) == invalidate
    assert report.would_invalidate == (() if invalidate else (old_path,))
    edge = rows(
        vault, "SELECT relation_type FROM memory_relations WHERE relation_type = 'contradicts'"
    )
    assert edge == [("contradicts",)]
    # The new session's own decision is untouched.
    new = [p for p in after if p != old_path]
    assert after[new[0]] == (0.85, None)


def test_the_confidence_floor(vault: Vault, transcripts: tuple[str, str]) -> None:
    vault.capture.capture_observations(SESSION, read_turns(transcripts[0]))
    vault._connection.execute(
        "UPDATE documents SET confidence = 0.3 WHERE path LIKE 'agent/decisions/%'"
    )
    vault.capture.capture_observations(OTHER_SESSION, read_turns(transcripts[1]))
    lowest = min(conf for conf, _ in decision_confidence(vault).values())
    assert lowest == FLOOR


def test_the_llm_verdict_overrides_the_heuristic(
    smart: Vault, model_server: ModelServer, transcripts: tuple[str, str]
) -> None:
    model_server.set_chat_reply("garbage")  # first session: heuristic decisions
    smart.capture.capture_observations(SESSION, read_turns(transcripts[1].replace("two", "one")))
    second = (
        "<observations><observation><type>decision</type><title>Stop using Redis for the "
        "session cache</title><narrative>We switch the session cache to Memcached instead of "
        "Redis.</narrative></observation></observations>"
    )
    model_server.set_chat_reply(replying(second, '{"contradicts": false, "confidence": 0.9}'))
    report = smart.capture.capture_observations(OTHER_SESSION, read_turns(transcripts[1]))
    assert report.source == "observer" and report.contradictions == ()
    assert {conf for conf, _ in decision_confidence(smart).values()} == {0.85}
    third_answer = second.replace("Stop using Redis", "Drop Redis")
    fenced = '```json\n{"contradicts": true, "confidence": 0.7}\n```'
    model_server.set_chat_reply(replying(third_answer, fenced))
    third = smart.capture.capture_observations("third-session", read_turns(transcripts[1]))
    assert len(third.contradictions) >= 1 and "llm" in third.contradictions[0]


def test_the_collection_name_is_the_index_one() -> None:
    from memtrove.capture.store import MEMORY_COLLECTION
    from memtrove.index import internal

    assert MEMORY_COLLECTION == internal.MEMORY_COLLECTION


def test_doctor_says_how_capture_runs(vault: Vault, transcripts: tuple[str, str]) -> None:
    vault.capture.capture_observations(SESSION, read_turns(transcripts[0]))
    vault.capture.write_handoff(SESSION, read_turns(transcripts[0]))
    check = next(c for c in vault.doctor().checks if c.name == "capture")
    assert check.status == "ok" and "without an LLM" in check.detail
    assert "1 handoff(s)" in check.detail and "MEMTROVE_LLM_URL" in check.fix


def test_secrets_never_reach_the_model(
    smart: Vault, model_server: ModelServer, tmp_path: Path
) -> None:
    from tests.capture.transcripts import assistant, user

    key = "sk-ant-api03-" + "B" * 40
    path = write_transcript(
        tmp_path / "secret.jsonl",
        [user(f"deploy with {key}"), assistant(f"We decided to rotate {key} weekly.")],
    )
    model_server.set_chat_reply(replying(OBSERVED))
    smart.capture.capture_observations(SESSION, read_turns(str(path)))
    smart.capture.write_handoff(SESSION, read_turns(str(path)))
    sent = [json.dumps(r.body) for r in model_server.requests_to("chat")]
    assert len(sent) >= 2 and not any(key in body for body in sent)


def test_authored_at_comes_from_the_transcript(vault: Vault, tmp_path: Path) -> None:
    from tests.capture.transcripts import assistant, user

    entries = [user("Which queue should the mailer use?"), assistant("We decided to use SQS.")]
    stamps = ("2026-05-01T09:00:00.000Z", "2026-05-01T09:00:07.123Z")
    for entry, stamp in zip(entries, stamps, strict=True):
        entry["timestamp"] = stamp
    turns = read_turns(str(write_transcript(tmp_path / "t.jsonl", entries)))
    assert turns[0].at == "2026-05-01T09:00:07.123Z"
    vault.capture.capture_observations(SESSION, turns)
    report = vault.capture.write_handoff(SESSION, turns)
    paths = [d.path for d in vault.list(10, collection="_memtrove")]
    for path in [*paths, report.path]:
        assert 'authored_at: "2026-05-01T09:00:07' in vault.get(f"_memtrove/{path}").body, path


@pytest.mark.parametrize("verdict", ["no idea", '{"contradicts": "maybe"}', "", "```json\n{"])
def test_an_unreadable_verdict_leaves_the_heuristic_standing(
    smart: Vault, model_server: ModelServer, transcripts: tuple[str, str], verdict: str
) -> None:
    model_server.set_chat_reply("garbage")
    smart.capture.capture_observations(SESSION, read_turns(transcripts[0]))
    second = (
        "<observations><observation><type>decision</type><title>Stop using Redis for the "
        "session cache</title><narrative>We switch the session cache to Memcached instead of "
        "Redis.</narrative></observation></observations>"
    )
    model_server.set_chat_reply(replying(second, verdict))
    report = smart.capture.capture_observations(OTHER_SESSION, read_turns(transcripts[1]))
    assert report.source == "observer" and len(report.contradictions) == 1
    assert "heuristic" in report.contradictions[0]
    assert min(conf for conf, _ in decision_confidence(smart).values()) == pytest.approx(0.60)


def test_no_vault_lock_is_held_across_a_model_call(
    smart: Vault, model_server: ModelServer, transcripts: tuple[str, str]
) -> None:
    free: list[bool] = []

    def reply(prompt: str) -> str:  # runs in the fake server's thread while the call waits
        taken = smart._lock.acquire(blocking=False)
        free.append(taken)
        if taken:
            smart._lock.release()
        return SUMMARYLESS if "Summarise" in prompt else OBSERVED

    model_server.set_chat_reply(reply)
    smart.capture.capture_observations(SESSION, read_turns(transcripts[0]))
    smart.capture.write_handoff(SESSION, read_turns(transcripts[0]))
    assert len(free) >= 2 and all(free)


SUMMARYLESS = "<summary><request><item>Look at the cache</item></request></summary>"


def test_captured_documents_are_embedded_as_they_are_written(
    vault: Vault, transcripts: tuple[str, str], notes: Path
) -> None:
    """Into the vault's own embedding space: vector search finds a decision at once, and
    the handoff with it; a vault that never embedded is left to `memtrove embed`."""
    from tests.conftest import write

    write(notes, "cache.md", "# Cache\n\nThe session cache lives in Redis.\n")
    vault.add_collection(notes, name="notes")
    vault.update()
    assert vault.embed().fragments > 0  # the vault has vectors: captures join them
    turns = read_turns(transcripts[0])
    report = vault.capture.capture_observations(SESSION, turns)
    handoff = vault.capture.write_handoff(SESSION, turns)
    pending = rows(
        vault,
        "SELECT path FROM documents WHERE collection = '_memtrove' AND embed_state != 'synced'",
    )
    assert report.documents and pending == []
    found = [r.path for r in vault.vsearch("redis connection pool for the session cache", 20)]
    assert any(path.startswith("agent/decisions/") for path in found), found
    assert handoff.path in found


def test_a_vault_without_vectors_leaves_captures_to_embed(
    vault: Vault, transcripts: tuple[str, str]
) -> None:
    vault.capture.capture_observations(SESSION, read_turns(transcripts[0]))
    synced = rows(vault, "SELECT COUNT(*) FROM documents WHERE embed_state = 'synced'")
    assert synced == [(0,)] and rows(vault, "SELECT COUNT(*) FROM embedding_space") == [(0,)]


def test_a_captured_decision_and_rule_are_found_once(
    smart: Vault, model_server: ModelServer, transcripts: tuple[str, str]
) -> None:
    model_server.set_chat_reply(replying(OBSERVED))
    smart.capture.capture_observations(SESSION, read_turns(transcripts[0]))
    types = dict(rows(smart, "SELECT title, content_type FROM documents"))
    # the decision's and the rule's observations are their records; the problem is not
    assert types["Use Redis with a bigger connection pool"] == "decision"  # its session doc
    records = rows(smart, "SELECT path FROM documents WHERE content_type = 'record'")
    assert len(records) == 2
    for query in ("Redis connection pool size", "cache timeouts over 500 ms"):
        found = [f"{r.collection}/{r.path}" for r in smart.search(query, limit=10)]
        assert len(found) == 1 and "/observations/" not in found[0], found
    # asked for by collection or by type, the records are there
    named = smart.search("Redis connection pool", limit=10, collections=["_memtrove"])
    assert any(r.path.startswith("agent/observations/") for r in named)
    typed = smart.search("Redis connection pool", limit=10, content_types=["record"])
    assert [r.path.startswith("agent/observations/") for r in typed] == [True]
