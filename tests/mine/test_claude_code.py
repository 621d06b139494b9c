"""The Claude Code reader on every session file in bench/mine/claude-code. Expected prompts,
times, branches and skips were taken by reading the files directly (json one-offs listing
each line's type, uuid, parentUuid and content), not from the reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtrove.mine.exchanges import Conversation, Exchange, Skips, exchanges
from memtrove.mine.formats import claude_code, reader

FOLDER = Path(__file__).resolve().parents[3] / "shared" / "bench" / "mine" / "claude-code"
SESSION = FOLDER / "marot-spotter__session-with-subagents"
BIG = SESSION / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
SUBAGENTS = SESSION / "258c7280-ae70-4798-800f-63464d01a85d" / "subagents"
OLDER = FOLDER / "codemie-ai-codemie-code__-tmp-private"

needs_bench = pytest.mark.skipif(not FOLDER.is_dir(), reason="bench/mine is not here")


def read(path: Path) -> tuple[list[Conversation], list[Exchange], Skips]:
    skips = Skips()
    conversations = list(claude_code.read(path, skips))
    found = [e for c in conversations for e in exchanges(c)]
    return conversations, found, skips


def prompts(found: list[Exchange]) -> list[str]:
    return [e.messages[0].text for e in found if e.messages[0].role == "user"]


def head(path: Path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(8192)


def test_the_module_is_the_claude_code_reader() -> None:
    assert reader("claude-code") is claude_code
    assert claude_code.LABEL == "claude-code"


@needs_bench
def test_every_session_file_is_sniffed_and_codex_is_not() -> None:
    for path in FOLDER.rglob("*.jsonl"):
        assert claude_code.sniff(path, head(path)), path.name
    for path in (FOLDER.parent / "codex").iterdir():
        assert not claude_code.sniff(path, head(path)), path.name


@needs_bench
def test_the_rewind_keeps_the_branch_that_continues() -> None:
    # a1 has two user children, b1u (10:02) and b2u (10:10); b2u's branch runs on through a
    # compact boundary (parentUuid null, logicalParentUuid b2a2) and its summary to p1a.
    conversations, found, skips = read(
        FOLDER / "daaain-claude-code-log__dag_compact_after_rewind.jsonl"
    )
    assert [c.conversation_id for c in conversations] == ["s1"]
    assert prompts(found) == ["Start", "Second attempt", "Keep going", "After compaction"]
    assert [e.messages[1].text for e in found] == [
        "Ready",
        "Second answer",
        "Kept going",
        "Final answer",
    ]
    assert [e.key for e in found] == ["u1", "b2u", "b2u2", "p1u"]
    assert [e.authored_at for e in found] == [
        "2025-07-01T10:01:00Z",
        "2025-07-01T10:11:00Z",
        "2025-07-01T10:21:00Z",
        "2025-07-01T10:41:00Z",
    ]
    assert skips == {"abandoned branch": 2, "system line": 1, "compact summary": 1}


@needs_bench
def test_parallel_tool_calls_are_forks_that_stay() -> None:
    # tool_heavy: 5 lines with two children each, all tool calls, results and progress; the
    # prompts are lines 3 and 25, the rest is tools, interruptions and /mcp.
    conversations, found, skips = read(FOLDER / "marot-spotter__tool_heavy.jsonl")
    assert conversations[0].conversation_id == "d6e0bada-1959-4eec-a9d2-0bfade768d8f"
    assert prompts(found) == [
        "start phoenix in background",
        "scrolling back in xterm.js still does not work (maybe because outer web catches it)?"
        " websearch xterm.js tmux interactions",
    ]
    second = "\n".join(m.text for m in found[1].messages[1:])
    # the Glob call (line 29) and its result (line 31) hang off a side branch: kept
    assert "[Glob: assets/js/**/*.js] -> /home/marco/projects/spotter/assets/js/app.js" in second
    assert second.index("[WebSearch: xterm.js scroll") < second.index("[Glob:")
    assert "[WebFetch: https://github.com/xtermjs/xterm.js/issues/1343]" in second
    assert "[Read: /home/marco/projects/spotter/assets/js/app.js] -> 1→import" in second
    assert found[1].authored_at == "2026-02-10T22:59:42Z"  # the WebFetch result's time
    assert skips["abandoned branch"] == 0
    assert skips["progress line"] == 10
    assert skips["file-history-snapshot line"] == 3
    assert skips["queue-operation line"] == 2
    assert skips["interruption"] == 2
    assert skips["slash command"] == 2  # /mcp and its local-command-stdout
    assert skips["meta line"] == 1


@needs_bench
def test_one_api_message_over_several_lines_is_one_reply() -> None:
    _, found, skips = read(FOLDER / "marot-spotter__short.jsonl")
    assert len(found) == 1
    exchange = found[0]
    assert exchange.speakers == ("User", "Claude")
    # lines 4-9 share message.id ...pYiiQa: text, thinking, text, Bash, (progress), Glob
    assert [m.role for m in exchange.messages] == ["user", "assistant"]
    reply = exchange.messages[1].text.splitlines()
    assert reply[0].startswith("Let me check the project structure")
    assert reply[1].startswith("[Bash: mix phx.server 2>&1 | head -80] -> error: The user")
    assert reply[2].startswith("[Glob: ")
    assert exchange.authored_at == "2026-02-10T21:12:02Z"  # the two rejected results
    assert skips["thinking block"] == 1
    assert skips["system line"] == 2


@needs_bench
def test_the_long_session_with_a_compaction() -> None:
    _, found, skips = read(BIG)
    # Two prompts in 1,863 lines; the compact summary and the task notifications are not
    # the user's, the notifications stay in the replies as one line each.
    assert prompts(found) == ["Implement spotter-gqc", "did you push?"]
    assert found[0].authored_at is not None and found[0].authored_at < "2026-02-11T21:46:21Z"
    assert found[1].messages[0].timestamp == "2026-02-11T21:46:21Z"
    replies = "\n".join(m.text for m in found[0].messages[1:])
    assert replies.count("[task notification: ") == 2
    assert skips["progress line"] == 1333
    assert skips["compact summary"] == 1
    assert skips["system line"] == 5
    assert skips["thinking block"] == 19
    # tool results are summaries: no reply line is longer than a summary allows
    longest = max(len(line) for line in replies.splitlines() if line.startswith("["))
    assert longest < 120 + 160 + 40
    assert len(replies) < len(BIG.read_text(encoding="utf-8")) / 10


@needs_bench
def test_subagent_transcripts_in_both_layouts_are_counted_not_imported() -> None:
    for path in (
        *SUBAGENTS.glob("agent-*.jsonl"),
        OLDER / "agent-36541525.jsonl",
        OLDER / "agent-50243ee8.jsonl",
    ):
        conversations, _, skips = read(path)
        assert conversations == [], path.name
        assert skips == {"subagent transcript": 1}, path.name


@needs_bench
def test_the_older_layout_session_beside_its_agents() -> None:
    _, found, skips = read(OLDER / "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl")
    assert prompts(found) == [
        "create hello.py, md and js",
        "update py with one liner comment",
        "delete js",
    ]
    assert [m.timestamp for m in (e.messages[0] for e in found)] == [
        "2025-12-10T19:37:45Z",
        "2025-12-10T19:38:07Z",
        "2025-12-10T19:38:22Z",
    ]
    assert (
        "[Write: /tmp/private/hello.py] -> File created successfully" in found[0].messages[1].text
    )
    assert skips == {"file-history-snapshot line": 6}


@needs_bench
def test_the_task_tool_session_and_a_slash_command_with_arguments() -> None:
    _, found, skips = read(FOLDER / "marot-spotter__subagent.jsonl")
    first, second = prompts(found)
    assert first.startswith("/handgemacht:create-beads websearch to learn how to fastest setup")
    assert second == "create the beads"
    tools = "\n".join(m.text for m in found[0].messages[1:])
    assert tools.count("[WebSearch: ") == 5
    assert "[Task: " in tools
    assert "[AskUserQuestion: " in tools
    assert skips["thinking block"] == 4
    assert skips["meta line"] == 1  # the skill prompt the command expands to


@needs_bench
def test_the_synthetic_files() -> None:
    _, found, skips = read(FOLDER / "daaain-claude-code-log__edge_cases.jsonl")
    assert [p[:30] for p in prompts(found)] == [
        "Here's a message with some **m",
        "Let's test a very long message",
        "test-command --verbose --outpu",
        "Testing special characters: ca",  # line 11, which repeats line 10's uuid
    ]
    assert found[1].messages[1].text == (
        "[FailingTool: This tool will fail to demonstrate error handling]"
        " -> error: Error: Tool execution failed with error: Command not found"
    )
    assert skips["not an object"] == 3  # "massive error", 42, [1]
    assert skips["line without a type"] == 1
    assert skips["meta line"] == 1  # the local-command caveat

    conversations, found, _ = read(FOLDER / "daaain-claude-code-log__representative_messages.jsonl")
    assert conversations[0].title is not None and conversations[0].title.startswith("User learned")
    assert len(prompts(found)) == 4
    assert "[Bash: python /tmp/decorator_example.py] -> Hello, Alice!" in found[2].messages[1].text

    _, found, _ = read(FOLDER / "daaain-claude-code-log__todowrite_examples.jsonl")
    assert len(prompts(found)) == 2
    _, found, _ = read(FOLDER / "daaain-claude-code-log__session_b.jsonl")
    assert len(prompts(found)) == 2
    conversations, found, _ = read(FOLDER / "simonw-claude-code-transcripts__sample_session.jsonl")
    assert conversations[0].conversation_id == "test-session-id"
    assert prompts(found) == ["Create a hello world function", "Now add a goodbye function"]


def test_malformed_lines_cost_one_line_each(tmp_path: Path) -> None:
    lines = [
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "sessionId": "s",
            "timestamp": "2025-01-01T00:00:00Z",
            "message": {"role": "user", "content": "first question here"},
        },
        "{not json",
        {
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "timestamp": "2025-01-01T00:00:05Z",
            "message": {
                "id": "m1",
                "role": "assistant",
                "content": [{"type": "text", "text": "first answer"}],
            },
        },
        {"type": "assistant", "uuid": "a2", "parentUuid": "a1", "message": "not a dict"},
        {
            "type": "user",
            "uuid": "u2",
            "parentUuid": "a1",
            "timestamp": "bad time",
            "message": {"role": "user", "content": [{"type": "text", "text": "second question"}]},
        },
    ]
    path = tmp_path / "s.jsonl"
    path.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n",
        encoding="utf-8",
    )
    _, found, skips = read(path)
    assert prompts(found) == ["first question here", "second question"]
    assert found[1].authored_at is None
    assert skips == {"malformed line": 1, "malformed message": 1}
