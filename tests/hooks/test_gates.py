"""The pre-retrieval gates of context-surfacing."""

from __future__ import annotations

import pytest

from memtrove.hooks.gates import (
    MAX_QUERY_LENGTH,
    gate_prompt,
    has_memory_intent,
    is_heartbeat,
    is_slash_command,
    normalize_prompt,
    should_skip_retrieval,
)


@pytest.mark.parametrize(
    ("prompt", "gate"),
    [
        ("", "empty"),
        ("   \n\t ", "empty"),
        ("fix the tests", "short"),
        ("/compact keep the thumbnail discussion", "slash-command"),
        ("/review", "short"),
        ("/review the open pull request now", "slash-command"),
        ("hello there, good morning to you all", "retrieval-gate"),
        ("git rebase the feature branch onto main please", "retrieval-gate"),
        ("npm install fails with an integrity error again", "retrieval-gate"),
        ("thanks!                     ", "short"),
        ("🎉🎉🎉 🚀🚀🚀 👍👍👍 ✨✨✨ 🔥🔥🔥 💯💯💯", "retrieval-gate"),
        ("Heartbeat check: reply HEARTBEAT_OK if nothing needs attention.", "heartbeat"),
        ("are you alive? just checking the connection here", "heartbeat"),
        ("Why did the thumbnail worker run out of memory?", None),
        ("what did we decide?", None),  # short, but asks about memory
        ("remember my name", None),
        ("/srv/app/main.py raises KeyError on start, why?", None),  # a path, not a command
        ("The shipping and mapping code both time out", None),  # 'ping' is a whole word only
    ],
)
def test_gates(prompt: str, gate: str | None) -> None:
    assert gate_prompt(prompt)[1] == gate


def test_prompt_is_trimmed_and_cut() -> None:
    text, gate = gate_prompt("  " + "thumbnail worker memory " * 3000 + "  ")
    assert gate is None
    assert len(text) == MAX_QUERY_LENGTH and not text.startswith(" ")


def test_heartbeat_suppression_can_be_disabled_and_extended() -> None:
    prompt = "Heartbeat check: reply HEARTBEAT_OK if nothing needs attention."
    assert gate_prompt(prompt, heartbeat_suppression=False)[1] is None
    custom = "Nightly sync probe from the scheduler, answer briefly"
    assert gate_prompt(custom)[1] is None
    assert gate_prompt(custom, heartbeat_patterns=["sync probe"])[1] == "heartbeat"
    assert is_heartbeat("KEEP-ALIVE from the orchestrator")
    assert not is_heartbeat("shipping, mapping and typing stubs")


def test_memory_intent() -> None:
    assert has_memory_intent("what did I say about caching")
    assert has_memory_intent("as we discussed previously")
    assert has_memory_intent("my email?")
    assert not has_memory_intent("refactor the cache layer")


def test_slash_commands() -> None:
    assert is_slash_command("/clear")
    assert is_slash_command("  /model opus")
    assert not is_slash_command("/home/dev/app/config.yaml is wrong")
    assert not is_slash_command("use /clear to reset")


def test_metadata_wrappers_are_stripped() -> None:
    wrapped = "[cron:daily-report] ok"
    assert normalize_prompt(wrapped) == "ok"
    assert should_skip_retrieval(wrapped)
    stamped = "[Mon 2026-08-03 09:00 UTC] thanks"
    assert normalize_prompt(stamped) == "thanks"
    meta = "Conversation info (untrusted metadata):\nchannel: x\n\nhello"
    assert normalize_prompt(meta) == "hello"


def test_short_questions_and_cjk() -> None:
    assert not should_skip_retrieval("why the OOM?")  # a question under 15 characters
    assert should_skip_retrieval("fix it all now")  # not a question
    assert not should_skip_retrieval("缩略图内存泄漏原因")  # CJK carries more per character


def test_the_first_word_filter_never_hides_a_skip_pattern() -> None:
    """_may_skip only saves compiling the patterns: wherever one of them matches, it says
    maybe (random prompts in several cases, and the patterns' own words)."""
    import random

    from memtrove.hooks import gates

    chosen = random.Random(11)
    alphabet = "abcdefghijklmnopqrstuvwxyz' !.?-_1ſ"
    prompts = [
        *sorted(gates._SKIP_FIRST_WORDS),
        "Good   Morning!", "what's up?", "goodnight", "ſudo make", "thank you.", "go ahead!",
        *("".join(chosen.choice(alphabet) for _ in range(chosen.randint(1, 12))) for _ in range(5000)),
    ]  # fmt: skip
    for prompt in prompts:
        for text in (prompt, f"{prompt} and more", prompt.upper(), prompt.title()):
            if any(pattern.search(text) for pattern in gates._SKIP):
                assert gates._may_skip(text), text
    assert not gates._may_skip("how does the scheduler rotate tokens")
