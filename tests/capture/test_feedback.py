"""feedback-loop: reference detection (measured on real replies) and the recall bookkeeping."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.hooks.transcript import read_turns
from memtrove.lifecycle.feedback import CONFIDENCE_BOOST, Target, is_referenced, target_of
from tests.capture.transcripts import BENCH, SESSION, assistant, user, write_transcript
from tests.conftest import EXAMPLES

BODY = (
    "# Refresh token rotation\n\nEvery refresh rotates the token family and the old token is "
    "revoked at once. A reused refresh token revokes the whole family within the same request.\n"
)


def target(**changes: str) -> Target:
    base = target_of(1, "a1b2c3", "notes", "auth/refresh-tokens.md", "Refresh token rotation", BODY)
    return base._replace(**changes)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "reply",
    [
        "As #a1b2c3 says, rotate on every refresh.",
        "See notes/auth/refresh-tokens.md for the details.",
        "The note auth/refresh-tokens.md covers it.",
        "Per refresh-tokens.md we rotate.",
        "Following the Refresh Token Rotation note, I rotate on refresh.",
        "Every refresh rotates the token family and the old token is revoked at once, and a "
        "reused refresh token revokes the whole family within the same request.",
    ],
)
def test_what_counts_as_a_use(reply: str) -> None:
    assert is_referenced(target(), reply)


@pytest.mark.parametrize(
    "reply",
    [
        "The decade-old facade a1b2c3d4 is fine.",  # a hex word, not #docid
        "I refreshed the token and rotated the logs.",
        "Every refresh rotates the token family, that is all.",  # one shared phrase only
        "tokens.md is elsewhere; see other/auth/refresh-tokens.mdx",
        "",
    ],
)
def test_what_does_not(reply: str) -> None:
    assert not is_referenced(target(), reply)


def test_a_generic_or_short_title_needs_more_than_its_words() -> None:
    assert not is_referenced(target(title="Notes"), "Some notes on this.")
    assert not is_referenced(target(title="Redis cache"), "The redis cache is warm.")


def test_a_read_of_the_file_is_a_use() -> None:
    call = '[tool_use name="Read" id="t1"] {"file_path": "/home/me/notes/auth/refresh-tokens.md"}'
    assert is_referenced(target(), "Let me check.", [call])


@pytest.fixture(scope="module")
def example_targets(tmp_path_factory: pytest.TempPathFactory) -> list[Target]:
    folder = tmp_path_factory.mktemp("examples")
    with Vault.open(folder / "v.sqlite", config_dir=folder / "c") as vault:
        vault.add_collection(EXAMPLES, name="demo")
        vault.update()
        rows = vault._connection.execute(
            "SELECT d.id, d.docid, d.collection, d.path, d.title, c.doc FROM documents d "
            "JOIN content c ON c.hash = d.hash"
        ).fetchall()
    return [target_of(int(r[0]), *(str(value) for value in r[1:])) for r in rows]


@pytest.mark.skipif(not BENCH.is_dir(), reason="recorded sessions not available")
def test_no_false_positives_on_real_replies(example_targets: list[Target]) -> None:
    """Real Claude Code replies (32 turns) never use the unrelated example notes (30)."""
    turns = [t for p in sorted(BENCH.rglob("*.jsonl")) for t in read_turns(str(p)) if t.reply]
    assert len(turns) >= 20 and len(example_targets) >= 20
    hits = [
        (t.prompt[:40], target.path)
        for t in turns
        for target in example_targets
        if is_referenced(target, t.reply, t.calls)
    ]
    assert hits == []


def test_a_reply_quoting_a_note_uses_it(example_targets: list[Target]) -> None:
    """Two sentences of a note quoted in a reply are a use, even without its name."""
    bodies = {p.relative_to(EXAMPLES).as_posix(): p.read_text() for p in EXAMPLES.rglob("*.md")}
    found = tried = 0
    for target in example_targets:
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", bodies[target.path]) if len(s) > 60]
        if len(sentences) >= 2:
            tried += 1
            reply = f"From memory: {sentences[0]} Also, {sentences[1]}"
            found += is_referenced(target._replace(title="x", path="p.md", docid=""), reply)
    assert tried >= 20 and found >= tried - 2


def test_feedback_marks_each_turn_and_keeps_the_books(tmp_path: Path) -> None:
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "c") as vault:
        vault.add_collection(EXAMPLES, name="demo")
        vault.update()
        documents = [d for d in vault.list(40, collection="demo")][:4]
        a, b, c, d = (vault.get(f"demo/{doc.path}") for doc in documents)
        vault.sessions.log_context_usage(
            SESSION,
            "context-surfacing",
            injected=[(a.doc_id, 0.9), (b.doc_id, 0.8)],
            turn_index=0,
            query_text="first",
        )
        vault.sessions.log_context_usage(
            SESSION,
            "context-surfacing",
            injected=[(c.doc_id, 0.9), (d.doc_id, 0.7)],
            turn_index=1,
            query_text="second",
        )
        transcript = write_transcript(
            tmp_path / "t.jsonl",
            [
                user("first question"),
                assistant(f"Per demo/{a.path} and the note #{b.docid}, we keep it."),
                user("second question"),
                assistant(f"Nothing from memory here; but demo/{a.path} again."),
            ],
        )
        before = {doc.doc_id: (doc.confidence,) for doc in (a, b, c, d)}
        report = vault.capture.apply_feedback(SESSION, read_turns(str(transcript)))
        assert (report.checked, report.referenced, report.negatives) == (4, 2, 2)
        assert report.usage_edges == 1 and report.unaligned == 0
        con = vault._connection
        marked = dict(con.execute("SELECT doc_id, was_referenced FROM recall_events").fetchall())
        assert marked == {a.doc_id: 1, b.doc_id: 1, c.doc_id: 0, d.doc_id: 0}
        usage = [r[0] for r in con.execute("SELECT was_referenced FROM context_usage ORDER BY id")]
        assert usage == [1, 0]
        for doc in (a, b):
            confidence, count, last = con.execute(
                "SELECT confidence, access_count, last_accessed_at FROM documents WHERE id = ?",
                (doc.doc_id,),
            ).fetchone()
            assert confidence == pytest.approx(min(1.0, before[doc.doc_id][0] + CONFIDENCE_BOOST))
            assert count == 1 and last
        negatives = dict(con.execute("SELECT doc_id, negative_count FROM recall_stats").fetchall())
        assert negatives[c.doc_id] == 1 and negatives[d.doc_id] == 1 and negatives[a.doc_id] == 0
        low, high = sorted((a.doc_id, b.doc_id))
        assert (
            con.execute(
                "SELECT count FROM co_activations WHERE doc_a = ? AND doc_b = ?", (low, high)
            ).fetchone()[0]
            == 2
        )  # injected together once, used together once
        assert (
            con.execute(
                "SELECT COUNT(*) FROM memory_relations WHERE relation_type = 'usage'"
            ).fetchone()[0]
            == 1
        )
        signals = dict(
            con.execute("SELECT doc_id, referenced_count FROM utility_signals").fetchall()
        )
        assert signals == {a.doc_id: 1, b.doc_id: 1, c.doc_id: 0, d.doc_id: 0}
        # Judged once: running again changes nothing.
        assert vault.capture.apply_feedback(SESSION, read_turns(str(transcript))).checked == 0
        count = con.execute(
            "SELECT access_count FROM documents WHERE id = ?", (a.doc_id,)
        ).fetchone()
        assert count[0] == 1


def test_turns_outside_the_window_are_not_negatives(tmp_path: Path) -> None:
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "c") as vault:
        vault.add_collection(EXAMPLES, name="demo")
        vault.update()
        doc = vault.get(f"demo/{vault.list(1, collection='demo')[0].path}")
        for turn in range(3):
            vault.sessions.log_context_usage(
                SESSION, "context-surfacing", injected=[(doc.doc_id, 0.5)], turn_index=turn
            )
        transcript = write_transcript(
            tmp_path / "t.jsonl", [user("only the last turn"), assistant("ok")]
        )
        report = vault.capture.apply_feedback(SESSION, read_turns(str(transcript)))
        assert (report.checked, report.negatives, report.unaligned) == (3, 1, 2)
        counted = vault._connection.execute(
            "SELECT negative_count FROM recall_stats WHERE doc_id = ?", (doc.doc_id,)
        ).fetchone()[0]
        vault.lifecycle.recompute_recall_stats()  # one definition: the rebuild agrees with the loop
        recounted = vault._connection.execute(
            "SELECT negative_count FROM recall_stats WHERE doc_id = ?", (doc.doc_id,)
        ).fetchone()[0]
        assert counted == recounted == 1


TIMESTAMPS = (
    "# Timestamp format\n\nEvery API answer writes times as RFC 3339 in UTC with milliseconds, "
    "layout `2006-01-02T15:04:05.000Z07:00`, and the column is `created_at_ms`. Never send "
    "local time to clients: the mobile app cannot tell the zone.\n"
)


def timestamps(**changes: str) -> Target:
    base = target_of(2, "c0ffee", "adr", "0007-timestamps.md", "Timestamp format", TIMESTAMPS)
    return base._replace(**changes)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "reply",
    [
        "Per the Timestamp format record, I switched the serializer to UTC.",
        "Following the `Timestamp format` decision, the handler now writes UTC.",
        'I followed "Timestamp format" here.',
        "The layout is now `2006-01-02T15:04:05.000Z07:00` everywhere.",
        "> Never send local time to clients: the mobile app cannot tell the zone.\n\nSo I "
        "convert before the response.",
    ],
)
def test_names_quotes_and_exact_values_are_uses(reply: str) -> None:
    assert is_referenced(timestamps(), reply)


@pytest.mark.parametrize(
    "reply",
    [
        "The timestamp format is fine.",  # the words, not named as a title
        "I set the Content-Type to `application/json` and retried.",
        'The answer is "none of the above" for now.',
        "Use key1 and key2 as the example keys.",
        "Times are UTC now.",
    ],
)
def test_common_words_quotes_and_values_are_not(reply: str) -> None:
    assert not is_referenced(timestamps(), reply)


def test_a_value_the_prompt_already_held_is_not_a_use() -> None:
    from memtrove.lifecycle.feedback import prepare_reply

    reply = "The layout `2006-01-02T15:04:05.000Z07:00` parses fine in Go."
    asked = prepare_reply(reply, prompt="Does 2006-01-02T15:04:05.000Z07:00 parse in Go?")
    assert is_referenced(timestamps(), prepare_reply(reply))
    assert not is_referenced(timestamps(), asked)


def test_two_identifiers_together_are_a_use() -> None:
    body = "# Invoices\n\nAdd an idempotency_key column; never retry CreateInvoice without it.\n"
    invoices = target_of(3, "d00d00", "adr", "0009-invoices.md", "Invoices", body)
    assert is_referenced(invoices, "So CreateInvoice now sends idempotency_key on retry.")
    assert not is_referenced(invoices, "CreateInvoice is called once.")


EXPORTS = BENCH.parent
PROPOSALS = EXPORTS.parent / "prose" / "go-proposals"


@pytest.mark.skipif(not PROPOSALS.is_dir(), reason="the shared exports are not here")
def test_no_false_positives_on_real_exported_replies(example_targets: list[Target]) -> None:
    """Every reply of the real ChatGPT, Claude.ai, Codex and Claude Code exports against the
    Go proposals and the example notes, none of which they discuss."""
    from memtrove.lifecycle.feedback import prepare_reply
    from memtrove.mine.exchanges import Skips, exchanges
    from memtrove.mine.formats import reader

    replies = []
    for label, pattern in (
        ("chatgpt", "chatgpt/*.json"),
        ("claude-ai", "claude-ai/*.json"),
        ("codex", "codex/**/*.jsonl"),
        ("claude-code", "claude-code/**/*.jsonl"),
    ):
        for path in sorted(EXPORTS.glob(pattern)):
            for conversation in reader(label).read(path, Skips()):
                for exchange in exchanges(conversation):
                    said = {"user": "", "assistant": ""}
                    for message in exchange.messages:
                        said[message.role] += message.text + "\n"
                    if said["assistant"].strip():
                        replies.append(prepare_reply(said["assistant"], prompt=said["user"]))
    targets = list(example_targets)
    for index, path in enumerate(sorted(PROPOSALS.glob("*.md"))):
        body = path.read_text(encoding="utf-8")
        title = next((line[2:] for line in body.splitlines() if line.startswith("# ")), "")
        targets.append(target_of(1000 + index, "", "goprop", path.name, title, body))
    assert len(replies) >= 500 and len(targets) >= 140
    hits = [(t.path, r.text[:40]) for r in replies for t in targets if is_referenced(t, r)]
    assert hits == []
