"""Reading the observer's XML, the heuristic extractor and turn splitting."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtrove.capture.observations import (
    MAX_OBSERVATIONS,
    heuristic_observations,
    observer_prompt,
    parse_observer_answer,
)
from memtrove.capture.turns import Turn, split_turns
from memtrove.hooks.transcript import read_transcript, read_turns
from tests.capture.transcripts import (
    BENCH,
    SESSION_ONE,
    assistant,
    tool_result,
    user,
    write_transcript,
)

GOOD = """<observations>
<observation><type>decision</type><title>Use Redis for the session cache</title>
<narrative>Sessions need a shared store across workers.</narrative>
<facts><fact>Pool size is 50</fact><fact>Pool size is 50</fact></facts>
<triples><triple><subject>session cache</subject><predicate>uses</predicate><object>Redis</object></triple></triples>
<confidence>0.9</confidence></observation>
<observation><type>problem</type><title>Redis timeouts &amp; pool exhaustion</title>
<narrative>Timeouts after 2000 ms.</narrative><confidence>high</confidence></observation>
</observations>"""


def test_a_good_answer_is_read_whole() -> None:
    found = parse_observer_answer(GOOD)
    assert found is not None and [o.type for o in found] == ["decision", "problem"]
    decision, problem = found
    assert decision.facts == ("Pool size is 50",) and decision.confidence == 0.9
    assert decision.triples[0].object == "Redis" and decision.source == "observer"
    assert problem.title == "Redis timeouts & pool exhaustion" and problem.confidence == 0.7


@pytest.mark.parametrize(
    "answer",
    [
        f"```xml\n{GOOD}\n```",
        f"<think>maybe <observation><type>decision</type><title>x</title></observation></think>{GOOD}",
        f"Here you go:\n{GOOD}\nHope this helps.",
    ],
)
def test_fences_thinking_and_prose_around_the_xml(answer: str) -> None:
    found = parse_observer_answer(answer)
    assert found is not None and found[0].title == "Use Redis for the session cache"
    assert len(found) == 2


def test_a_truncated_answer_keeps_the_complete_observations() -> None:
    cut = GOOD[: GOOD.index("<narrative>Timeouts")]
    found = parse_observer_answer(cut)
    assert found is not None and [o.type for o in found] == ["decision"]


@pytest.mark.parametrize("answer", ["", "garbage", '{"observations": []}', "<observation>"])
def test_garbage_is_none(answer: str) -> None:
    assert parse_observer_answer(answer) is None


def test_nothing_worth_keeping_is_empty_not_none() -> None:
    assert parse_observer_answer("<observations/>") == []


def test_unknown_types_and_control_characters_are_dropped() -> None:
    answer = (
        "<observation><type>gossip</type><title>Bob</title></observation>"
        "<observation><type>DISCOVERY</type><title>Line\x00one\u202e two</title></observation>"
    )
    found = parse_observer_answer(answer)
    assert found is not None and [(o.type, o.title) for o in found] == [
        ("discovery", "Line one two")
    ]
    many = "".join(
        f"<observation><type>change</type><title>change {i}</title></observation>"
        for i in range(40)
    )
    assert len(parse_observer_answer(many) or []) == MAX_OBSERVATIONS


def test_turns_split_on_typed_prompts_only(tmp_path: Path) -> None:
    path = write_transcript(
        tmp_path / "t.jsonl",
        [
            user("first question about the cache"),
            assistant("Looking.", edit="/p/a.py"),
            tool_result("edited"),
            user("[Request interrupted by user for tool use]"),
            assistant("Done with it.", edit="/p/b.py"),
            user("second question"),
        ],
    )
    turns = read_turns(str(path))
    assert [t.prompt for t in turns] == ["first question about the cache", "second question"]
    assert (
        turns[0].files == ("/p/a.py", "/p/b.py") and turns[0].reply == "Looking.\n\nDone with it."
    )
    assert turns[0].calls and turns[1].replies == ()


def test_the_heuristic_finds_decisions_preferences_and_fixes(tmp_path: Path) -> None:
    turns = read_turns(str(write_transcript(tmp_path / "t.jsonl", SESSION_ONE)))
    found = heuristic_observations(turns)
    kinds = {o.type for o in found}
    assert {"decision", "preference", "bugfix"} <= kinds
    assert all(o.source == "heuristic" and not o.triples for o in found)
    assert len(found) < 6


def test_the_heuristic_is_quiet_on_small_talk() -> None:
    turns = [Turn("How do decorators work?", ("A decorator wraps a function.",), ())]
    assert heuristic_observations(turns) == []


def test_the_prompt_keeps_the_newest_turns_within_its_budget() -> None:
    turns = [Turn(f"prompt {i}", ("x" * 3000,), ()) for i in range(20)]
    prompt = observer_prompt(turns)
    assert "prompt 19" in prompt and "prompt 0<" not in prompt and len(prompt) < 16_000


@pytest.mark.skipif(not BENCH.is_dir(), reason="recorded sessions not available")
def test_recorded_sessions_split_and_extract_without_error() -> None:
    seen = 0
    for path in sorted(BENCH.rglob("*.jsonl")):
        messages = read_transcript(str(path), 200)
        turns = split_turns(messages)
        assert len(turns) <= len(messages)
        heuristic_observations(turns)
        seen += 1
    assert seen >= 10


def test_short_session_names() -> None:
    from memtrove.capture.store import short_session

    assert short_session("9f1e2d3c-4b5a-4e6f-8a7b-1c2d3e4f5a6b") == "9f1e2d3c"
    assert short_session("") == "unknown"
    one, two = short_session("17963012345-1"), short_session("17963012345-2")
    assert one != two and len(one) == 8 and one.isalnum()
    assert short_session("../../etc") not in ("", "..") and "/" not in short_session("a/b")


def _found(prompt: str, reply: str = "Done.") -> list[tuple[str, str]]:
    from memtrove.capture.observations import is_avoidance

    return [
        (o.type + ("/avoid" if is_avoidance(o) else ""), o.title)
        for o in heuristic_observations([Turn(prompt, (reply,), ())])
    ]


def test_decisions_and_rules_stated_by_the_user_are_captured() -> None:
    found = _found(
        "We decided to add an idempotency key column to invoices. Don't retry CreateInvoice "
        "without the key."
    )
    assert found == [
        ("decision", "We decided to add an idempotency key column to invoices."),
        ("preference/avoid", "Don't retry CreateInvoice without the key."),
    ]


@pytest.mark.parametrize(
    "rule",
    [
        "Never deploy the billing service on a Friday afternoon.",
        "Please do not squash the migration commits when merging.",
        "And never rotate the signing key without telling the mobile team.",
        "We must not log the full request body of the payment webhook.",
        "Avoid raw SQL string building in the reporting module.",
        "You should never bump the protobuf major version in a patch release.",
    ],
)
def test_prohibitions_of_any_verb_are_rules(rule: str) -> None:
    assert _found(rule) == [("preference/avoid", rule)]


@pytest.mark.parametrize(
    "prompt",
    [
        "I don't know why the nightly job keeps failing on staging.",
        "Don't worry about the flaky test in the auth package for now.",
        "Why don't we cache the tokens in Redis instead of Postgres?",
        "DO NOT EDIT THIS FILE: it is generated by protoc from the schema.",
        "The old client never retried anything, which is why it lost invoices.",
    ],
)
def test_what_only_describes_or_asks_is_not_a_rule(prompt: str) -> None:
    assert _found(prompt) == []


def test_the_assistant_states_rules_with_their_condition_only() -> None:
    rule = "Never call flush() on the writer without holding the ledger lock."
    assert _found("Fix the race.", rule) == [("preference/avoid", rule)]
    assert _found("Fix the race.", "Don't forget to restart the dev server afterwards.") == []
