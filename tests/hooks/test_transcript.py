"""Reading Claude Code transcripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtrove.hooks import transcript
from memtrove.hooks.transcript import memory_dirs, read_transcript, validate_transcript_path
from tests.hooks.conftest import TRANSCRIPT


def test_reads_messages_and_renders_tool_blocks() -> None:
    messages = read_transcript(str(TRANSCRIPT))
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant", "user",
                                          "user", "assistant"]  # fmt: skip
    assert messages[0].content.startswith("The thumbnail worker keeps getting OOM-killed")
    assert '[tool_use name="Read" id="toolu_01"] {"file_path": ' in messages[1].content
    assert messages[2].content.startswith('[tool_result id="toolu_01"]')
    assert read_transcript(str(TRANSCRIPT), last=2, role="user")[-1].content.startswith("Yes,")


def test_path_rules(tmp_path: Path) -> None:
    assert validate_transcript_path(str(TRANSCRIPT)) == TRANSCRIPT
    assert validate_transcript_path("relative/session.jsonl") is None
    assert validate_transcript_path(str(tmp_path / "missing.jsonl")) is None
    other = tmp_path / "session.json"
    other.write_text("{}")
    assert validate_transcript_path(str(other)) is None
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()
    assert validate_transcript_path(str(folder)) is None
    assert read_transcript("") == [] and read_transcript(str(other)) == []


def test_flat_lines_and_junk(tmp_path: Path) -> None:
    path = tmp_path / "flat.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"role": "user", "content": "flat user message"}),
                json.dumps({"role": "tool", "content": "unknown role"}),
                json.dumps({"message": {"role": "assistant", "content": {"odd": 1}}}),
                json.dumps([1, 2]),
                "{broken",
                "",
            ]
        )
    )
    messages = read_transcript(str(path))
    assert [(m.role, m.content) for m in messages] == [
        ("user", "flat user message"),
        ("assistant", '{"odd": 1}'),
    ]


def test_large_files_are_read_from_the_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transcript, "TAIL_THRESHOLD_BYTES", 10_000)
    monkeypatch.setattr(transcript, "CHUNK_BYTES", 1_000)
    path = tmp_path / "long.jsonl"
    with path.open("w") as handle:
        for index in range(2_000):
            handle.write(json.dumps({"role": "user", "content": f"message {index:05}"}) + "\n")
    messages = read_transcript(str(path), last=50)
    assert [m.content for m in messages] == [f"message {i:05}" for i in range(1950, 2000)]


def test_memory_dirs(tmp_path: Path) -> None:
    claude = tmp_path / ".claude"
    found = memory_dirs("/c/projects/-home-dev-app/s.jsonl", "/home/dev/app", claude)
    assert found == [
        Path("/c/projects/-home-dev-app/memory"),
        claude / "projects" / "-home-dev-app" / "memory",
        claude / "projects" / "home-dev-app" / "memory",
    ]
    assert memory_dirs("", "relative", claude) == []
