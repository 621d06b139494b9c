"""Tool-call summaries cut long arguments at a word, never through one: half a secret
would reach the vault in a shape redaction has no reason to take."""

from __future__ import annotations

import pytest

from memtrove.mine.summaries import MAX_ARGUMENT, first_line, tool_line


@pytest.mark.parametrize(
    "secret",
    ["-pHunter2SuperSecretValue", "--password=Sup3rS3cretValue!", "user:Pa55w0rdQWERTYUIOP"],
)
@pytest.mark.parametrize("shift", range(0, 30, 3))
def test_a_cut_never_splits_a_word(secret: str, shift: int) -> None:
    command = "x" * 10 + " " + "deploy " * ((MAX_ARGUMENT - 40 + shift) // 7) + secret + " db"
    line = tool_line("Bash", {"command": command})
    words = line.removeprefix("[Bash: ").removesuffix("]").removesuffix("…").split()
    assert all(word in command.split() for word in words), line
    assert len(line) <= MAX_ARGUMENT + len("[Bash: ]")


def test_short_lines_and_one_long_word_are_kept() -> None:
    assert first_line("ls -la") == "ls -la"
    long_word = "a" * 300
    assert first_line(long_word, 50) == "a" * 49 + "…"
    assert first_line("git commit -m 'a long message here'", 20) == "git commit -m 'a…"
