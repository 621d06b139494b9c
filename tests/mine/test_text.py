"""The plain-text reader on every transcript in bench/mine/plain-text, and on markdown that
is not a transcript. Expected turns were counted in the files by hand (grep for the role
markers: `❯`, `#### `, `## 👤 User`, `User:`...)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtrove.mine.exchanges import Exchange, Skips, exchanges
from memtrove.mine.formats import reader, text

FOLDER = Path(__file__).resolve().parents[3] / "shared" / "bench" / "mine" / "plain-text"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "vault"

needs_bench = pytest.mark.skipif(not FOLDER.is_dir(), reason="bench/mine is not here")


def read(path: Path) -> tuple[list[Exchange], Skips]:
    skips = Skips()
    return [e for c in text.read(path, skips) for e in exchanges(c)], skips


def users(found: list[Exchange]) -> list[str]:
    return [e.messages[0].text for e in found]


def test_the_module_is_the_text_reader() -> None:
    assert reader("text") is text


@needs_bench
def test_terminal_captures() -> None:
    found, skips = read(FOLDER / "marot-spotter__short.terminal.txt")
    # the shell prompt before the banner and the input box after the separator are not turns
    assert users(found) == ["mix phx.server doesnt seem to start"]
    assert found[0].messages[1].text.startswith("Let me check the project structure")
    assert "[Searched for 1 pattern]" in found[0].messages[1].text
    assert skips == {"slash command": 1}  # /model

    found, skips = read(FOLDER / "marot-spotter__tool_heavy.terminal.txt")
    assert users(found) == [
        "start phoenix in background",
        "scrolling back in xterm.js still does not work (maybe because outer web catches it)?"
        " websearch xterm.js tmux interactions",
    ]
    reply = found[1].messages[1].text
    assert "[Web Search: xterm.js scroll not working embedded page captures scroll events]" in reply
    assert "-> Did 1 search in 6s" in reply
    assert "[Fetch: https://github.com/xtermjs/xterm.js/issues/1343] -> Received 268KB" in reply
    assert found[0].messages[1].text.startswith("[Bash: mix phx.server] -> Running in the")
    assert skips == {"slash command": 2, "interruption": 2}
    assert all(m.timestamp is None for e in found for m in e.messages)


@needs_bench
def test_aider_chats() -> None:
    found, skips = read(FOLDER / "Aider-AI-aider__website-examples-census.md")
    assert len(found) == 10  # ten `#### ` prompts
    assert users(found)[0] == (
        "what is a good basic us census dataset to analyze for interesting patterns?"
    )
    assert users(found)[8] == "/run python3 new_file/getdata.py"
    assert {e.speakers for e in found} == {("User", "aider")}
    edit = found[4].messages[1].text
    assert ">>>>>>> UPDATED" in edit  # inside the code fence: not a quote
    assert "> Applied edit to new_file/getdata.py" in edit
    assert skips["quoted output line"] > 0

    found, _ = read(FOLDER / "Aider-AI-aider__website-examples-hello-world-flask.md")
    assert users(found) == [
        "make a flask app with a /hello endpoint that returns hello world",
        "add an endpoint like /add/3/5 which returns the sum of the 2 numbers",
        "add /fibonacci/X",
        "remove the hello endpoint",
    ]
    assert "<div" not in found[0].messages[1].text


@needs_bench
def test_a_markdown_export_with_emoji_headings_and_a_gutter() -> None:
    skips = Skips()
    (conversation,) = text.read(
        FOLDER
        / "nikblanchet-claude-code-production-patterns__claude-conversation-2025-11-20-6f7b5e59.md",
        skips,
    )
    assert conversation.conversation_id == "6f7b5e59-4af2-4bea-ba21-02e1b523ce5d"
    found = list(exchanges(conversation))
    assert len(found) == 3  # three `## 👤 User` headings
    assert users(found)[0].startswith("One of the requirements outlined in docs/ASSIGNMENT.md")
    assert users(found)[1].startswith("OK. Start by committing and pushing these transcripts.")
    assert not any(line.startswith(("✎", "  ")) for line in users(found)[0].splitlines())
    # the 79 `## 🤖 Claude` parts are folded into one reply per exchange
    assert [len(e.messages) for e in found] == [2, 2, 2]
    assert "[Task: Research transcript export methods]" in found[0].messages[1].text
    assert "Input: {" not in found[0].messages[1].text
    assert found[0].authored_at == "2025-11-20T00:18:21Z"  # the Date: of its header
    assert found[0].speakers == ("User", "Claude")


@needs_bench
def test_role_labels() -> None:
    found, _ = read(FOLDER / "michael-borck-conversation-analyser__transcript.txt")
    assert len(found) == 4  # 4 human lines (User: x2, Me: x2), 3 Assistant lines
    assert {m.speaker for e in found for m in e.messages} == {"User", "Assistant"}
    assert users(found)[2].startswith("That makes sense — so for our operations team")
    assert users(found)[3] == "Thanks!"

    found, _ = read(FOLDER / "ooboai-oobo__transcript.txt")
    assert users(found) == ["What is the current database schema?", "How do I add a new column?"]
    assert "```sql\nALTER TABLE users ADD COLUMN avatar_url TEXT;\n```" in found[1].messages[1].text


def test_markdown_that_is_not_a_transcript_is_refused(tmp_path: Path) -> None:
    notes = sorted(EXAMPLES.rglob("*.md"))
    assert notes
    for note in notes:
        assert read(note) == ([], Skips()), note.name
    lone = tmp_path / "meeting.md"
    lone.write_text("User: admin\nUser:\nPassword policy: rotate yearly\n", encoding="utf-8")
    assert read(lone) == ([], Skips())  # nothing counted: it is not a transcript at all


def test_an_aider_history_file_dates_each_session(tmp_path: Path) -> None:
    history = tmp_path / ".aider.chat.history.md"
    history.write_text(
        "\n# aider chat started at 2024-05-02 09:14:03\n\n> Aider v0.35.0\n> Added app.py to the chat\n\n"
        "#### add a health check endpoint\n\nAdd a `/health` route returning 200.\n\n"
        "> Applied edit to app.py\n\n"
        "# aider chat started at 2024-05-03 17:40:00\n\n"
        "#### now make it report the version\n\n```python\n> not a quote\n```\nDone.\n",
        encoding="utf-8",
    )
    found, _ = read(history)
    assert users(found) == ["add a health check endpoint", "now make it report the version"]
    assert [e.authored_at for e in found] == ["2024-05-02T09:14:03Z", "2024-05-03T17:40:00Z"]
    assert found[0].messages[1].text == (
        "Add a `/health` route returning 200.\n\n> Applied edit to app.py"
    )
    assert "> not a quote" in found[1].messages[1].text


def test_chat_log_labels_led_by_a_time(tmp_path: Path) -> None:
    """``[10:31] User:`` and ``2024-03-01 10:31 - User:``: the label is read past its time,
    and a full date and time becomes the message's time (a time of day alone gives none)."""
    dated = tmp_path / "dated.txt"
    dated.write_text(
        "2024-03-01 10:31 - User: can you check why the deploy failed\n"
        "2024-03-01 10:32 - Assistant: The health check timed out on a table lock.\n"
        "2024-03-01 10:40 - User: how do we avoid that next time?\n"
        "2024-03-01 10:41:30 - Assistant: Run the migration first, with a lock timeout.\n",
        encoding="utf-8",
    )
    found, _ = read(dated)
    assert users(found) == [
        "can you check why the deploy failed",
        "how do we avoid that next time?",
    ]
    times = [m.timestamp for e in found for m in e.messages]
    assert times == [
        "2024-03-01T10:31:00Z",
        "2024-03-01T10:32:00Z",
        "2024-03-01T10:40:00Z",
        "2024-03-01T10:41:30Z",
    ]
    clock = tmp_path / "clock.txt"
    clock.write_text(
        "[10:31] User: why is the build failing on main\n"
        "[10:32] Assistant: The linker cannot find libssl; install libssl-dev in CI.\n"
        "[10:40 PM] User: now the tests time out\n"
        "[10:41 PM] Assistant: The integration suite waits on a port; set TEST_PORT.\n",
        encoding="utf-8",
    )
    found, _ = read(clock)
    assert users(found) == ["why is the build failing on main", "now the tests time out"]
    assert found[0].messages[1].text.startswith("The linker cannot find libssl")
    assert all(m.timestamp is None for e in found for m in e.messages)
