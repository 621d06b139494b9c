"""Payload normalization and the answer shapes."""

from __future__ import annotations

from memtrove.hooks.events import (
    HookEvent,
    context_output,
    estimate_tokens,
    parse_event,
    plain_output,
)
from tests.hooks.conftest import FIXTURES, payload


def test_snake_and_camel_case_read_the_same() -> None:
    snake = parse_event(payload("user_prompt_submit.json"))
    camel = parse_event(payload("user_prompt_submit_camel_case.json"))
    assert snake.session_id == camel.session_id == "5d1c2c8e-6f0b-4c5e-9a52-0c4f1d9a7e11"
    assert snake.prompt == camel.prompt
    assert snake.transcript_path == camel.transcript_path
    assert snake.hook_event_name == camel.hook_event_name == "UserPromptSubmit"
    assert snake.cwd == "/home/dev/lanternfish"


def test_session_start_and_pre_compact_fields() -> None:
    assert parse_event(payload("session_start_compact.json")).source == "compact"
    assert parse_event(payload("pre_compact_auto.json")).trigger == "auto"


def test_unreadable_input_is_the_empty_event() -> None:
    for name in ("empty.json", "malformed.json", "not_an_object.json", "binary.json"):
        assert parse_event((FIXTURES / name).read_bytes()) == HookEvent(), name
    assert parse_event("   \n") == HookEvent()
    assert parse_event("null") == HookEvent()
    assert parse_event("[" * 100_000) == HookEvent()  # deep nesting does not crash


def test_fields_of_the_wrong_type_are_empty() -> None:
    event = parse_event(payload("user_prompt_submit_wrong_types.json"))
    assert event.prompt == "" and event.session_id == ""
    assert event.transcript_path.endswith(".jsonl")


def test_byte_order_mark_and_whitespace_are_ignored() -> None:
    raw = b"\xef\xbb\xbf  " + payload("user_prompt_submit.json") + b"\n\n"
    assert parse_event(raw).prompt.startswith("Why did the thumbnail worker")


def test_answer_shapes() -> None:
    assert plain_output() == {"continue": True, "suppressOutput": False}
    assert context_output("SessionStart") == {
        "continue": True,
        "suppressOutput": False,
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ""},
    }


def test_token_estimate_is_a_quarter_rounded_up() -> None:
    assert [estimate_tokens("x" * n) for n in (0, 1, 4, 5, 8)] == [0, 1, 1, 2, 2]
