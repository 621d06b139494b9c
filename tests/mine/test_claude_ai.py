"""The Claude.ai reader on every real and synthetic export in bench/mine/claude-ai. Expected
counts and texts were read from the files directly, not from the reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtrove.mine.exchanges import Conversation, Skips, exchanges
from memtrove.mine.formats import chatgpt, claude_ai, reader

FOLDER = Path(__file__).resolve().parents[3] / "shared" / "bench" / "mine" / "claude-ai"
GOLDEN = Path(__file__).parent / "golden"
ARTIFACTS = FOLDER / "MarioPadilla-claude-vault__conversations.json"
THINKING = FOLDER / "yaleman-anthropic-data__conversations.json"
BRANCHES = FOLDER / "cl0ver012-chatlore__conversations.json"
ATTACHMENTS = FOLDER / "aucontraire-echomine__content_fidelity-claude_attachments.json"
OTHERS = ("projects", "users", "memories")

needs_bench = pytest.mark.skipif(not FOLDER.is_dir(), reason="bench/mine is not here")


def read_all(path: Path) -> tuple[list[Conversation], Skips]:
    skips = Skips()
    return list(claude_ai.read(path, skips)), skips


def head(path: Path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(4096)


def test_the_module_is_the_claude_ai_reader() -> None:
    assert reader("claude-ai") is claude_ai


@needs_bench
def test_conversations_are_sniffed_and_the_other_export_files_refused() -> None:
    for path in (ARTIFACTS, THINKING, BRANCHES, ATTACHMENTS):
        assert claude_ai.sniff(path, head(path)), path.name
        assert not chatgpt.sniff(path, head(path)), path.name
    for name in OTHERS:
        other = FOLDER / f"yaleman-anthropic-data__{name}.json"
        assert not claude_ai.sniff(other, head(other)), name


@needs_bench
def test_artifacts_are_named_and_the_mobile_placeholder_is_not_imported() -> None:
    [conversation], skips = read_all(ARTIFACTS)
    assert not skips
    assert conversation.conversation_id == "e30de7aa-6664-4cf3-8242-105db3f6308f"
    assert conversation.title == "Exporting conversations and file formats"
    [exchange] = list(exchanges(conversation))
    assert exchange.speakers == ("User", "Claude")
    assert exchange.authored_at == "2025-12-22T08:20:58Z"  # the assistant's created_at
    human, answer = conversation.messages
    # the top-level text is longer than the block (" (This is just a test)" is cut from it)
    assert human.text.endswith("what formats can i export to? (This is just a test)")
    assert "[artifact Data Processor (application/vnd.ant.code, create)]" in answer.text
    assert "[artifact Claude Vault Viewer (application/vnd.ant.react, create)]" in answer.text
    assert "class ConversationVault" not in answer.text  # the artifact's body is not dumped
    assert "isn’t yet supported on mobile" not in answer.text
    assert "token_budget" not in answer.text and "[tool result: OK]" not in answer.text
    assert answer.text.endswith("and all the formatting!!")  # the last text block


@needs_bench
def test_thinking_is_skipped() -> None:
    [conversation], _ = read_all(THINKING)
    human, answer = conversation.messages
    assert human.timestamp == "2025-07-06T03:10:13Z"
    assert answer.text.startswith("Dog saliva does contain some antibacterial compounds")
    assert "The user is asking about" not in answer.text  # the thinking block


@needs_bench
def test_the_branch_continuing_to_the_latest_leaf_is_kept() -> None:
    conversations, skips = read_all(BRANCHES)
    assert skips == {"no messages": 1, "empty message": 1}  # "Broken record"; o3 is "   "
    rust, old = conversations
    golden = json.loads((GOLDEN / "claude-ai-branch.json").read_text(encoding="utf-8"))
    assert [m._asdict() for m in rust.messages] == golden
    assert "x does not live long enough" not in json.dumps(golden)  # m2, the abandoned reply
    assert "internal reasoning" not in json.dumps(golden)
    assert len(list(exchanges(rust))) == 2
    assert [m.text for m in old.messages] == ["Give me a name for a cat.", "Biscuit."]


@needs_bench
def test_attachments_and_files() -> None:
    [conversation], skips = read_all(ATTACHMENTS)
    assert skips == {"empty message": 1}  # only a file with an empty name
    assert len(conversation.messages) == 5
    assert len(list(exchanges(conversation))) == 5  # five human messages, no reply
    texts = [m.text for m in conversation.messages]
    assert texts[0] == (
        "Please review this document\n\n[attachment report.pdf]\n"
        "This is the extracted text from the PDF document."
    )
    assert texts[1] == "Here are my files\n\n[file data.csv]\n\n[file image.png]"
    assert texts[3] == "[attachment uploaded.pdf]\nFull extracted text from the uploaded PDF."


def test_long_attachments_are_cut_and_hostile_records_skipped(tmp_path: Path) -> None:
    body = "\n".join(f"line {n} " + "x" * 50 for n in range(200))
    export = [
        {"uuid": "c", "name": "n", "created_at": "2025-01-01T00:00:00Z", "chat_messages": [
            {"uuid": "h", "sender": "human", "text": "look",
             "attachments": [{"file_name": "big.txt", "extracted_content": body}]},
            {"uuid": "a", "sender": "robot", "text": "?"},
            "junk",
            {"uuid": "b", "sender": "assistant", "content": [{"type": "tool_use", "name": "x",
                                                               "input": {"q": "y" * 5000}}]},
        ]},
        ["not", "a", "conversation"],
    ]  # fmt: skip
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(export), encoding="utf-8")
    [conversation], skips = read_all(path)
    human, answer = conversation.messages
    assert human.text.count("\n") == claude_ai.ATTACHMENT_LINES + 2
    assert len(human.text) < claude_ai.ATTACHMENT_CHARS + 40
    assert human.timestamp == "2025-01-01T00:00:00Z"  # the conversation's time
    assert len(answer.text) <= claude_ai.SUMMARY_CHARS + 20
    assert skips == {"unreadable message": 2, "not a conversation": 1}
