"""The Slack reader on the three exports in bench/mine/slack (a zip, a folder without
users.json, the 2025 layout with threads). Expected counts were taken from the day files
directly: messages kept by subtype, and exchanges by the documented cut (a gap of 30 minutes
or 20 messages), recounted here without the reader."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from memtrove.mine.exchanges import Conversation, Skips, exchanges
from memtrove.mine.formats import reader, slack

FOLDER = Path(__file__).resolve().parents[3] / "shared" / "bench" / "mine" / "slack"
GOLDEN = Path(__file__).parent / "golden"
ZIPPED = FOLDER / "hfaran-slack-export-viewer__testarchive.zip"
COMMUNITY = FOLDER / "houstondatavis-slack-export"
THREADS = FOLDER / "rusq-slackdump__source_export_dir"

needs_bench = pytest.mark.skipif(not FOLDER.is_dir(), reason="bench/mine is not here")


def read_all(path: Path) -> tuple[dict[str, Conversation], Skips]:
    skips = Skips()
    return {c.conversation_id: c for c in slack.read(path, skips)}, skips


def count_exchanges(conversation: Conversation) -> int:
    return len(list(exchanges(conversation)))


def test_the_module_is_the_slack_reader() -> None:
    assert reader("slack") is slack


@needs_bench
def test_exports_are_sniffed_and_their_parts_are_not() -> None:
    assert slack.sniff(ZIPPED, ZIPPED.read_bytes()[:4096])
    assert slack.sniff(COMMUNITY, b"")
    assert slack.sniff(THREADS, b"")
    assert not slack.sniff(THREADS / "B75B4C7", b"")  # one channel's folder
    day = THREADS / "B75B4C7" / "2025-01-11.json"
    assert not slack.sniff(day, day.read_bytes()[:4096])
    assert not slack.sniff(FOLDER.parent / "chatgpt", b"")


@needs_bench
def test_the_zip_export_is_read_in_place() -> None:
    conversations, skips = read_all(ZIPPED)
    assert set(conversations) == {"enrique", "traveling-sailor"}  # no threads in 2016
    enrique, sailor = conversations["enrique"], conversations["traveling-sailor"]
    # 49 plain messages, 3 file_share, 1 file_comment; 94 bot_message + 3 bot_add have a bot_id
    assert (len(enrique.messages), len(sailor.messages)) == (30, 23)
    assert skips == {"bot message": 97, "slack channel_join": 8}
    assert (count_exchanges(enrique), count_exchanges(sailor)) == (14, 11)
    assert enrique.title == "#enrique"
    speakers = {m.speaker for c in conversations.values() for m in c.messages}
    assert speakers == {"Harry Potter", "Hermione Granger", "Hamza Faran", "heroeshannibal"}
    first = enrique.messages[0]
    assert first.text.startswith("@Harry Potter: Created an issue for a setup.py")  # <@U0BMYT2FL>
    assert (first.speaker, first.timestamp, first.key) == (
        "Hamza Faran",
        "2016-01-15T05:55:52Z",
        "1452837352.000006",  # enrique/2016-01-14.json (a local day)
    )
    comment = next(m for m in sailor.messages if "commented on" in m.text)
    assert comment.speaker == "Hermione Granger"  # the file_comment's comment.user
    with zipfile.ZipFile(ZIPPED) as archive:
        assert "enrique/2016-01-15.json" in archive.namelist()


@needs_bench
def test_a_folder_without_users_json_keeps_ids_and_learns_mentioned_names() -> None:
    conversations, skips = read_all(COMMUNITY)
    assert set(conversations) == {"readings", "tools"}
    readings, tools = conversations["readings"], conversations["tools"]
    assert (len(readings.messages), len(tools.messages)) == (34, 62)  # 85 plain + 11 file_share
    assert skips == {
        "slack channel_join": 34,
        "slack channel_purpose": 2,
        "slack channel_leave": 1,
        "slack channel_archive": 2,
    }
    assert (count_exchanges(readings), count_exchanges(tools)) == (17, 17)
    speakers = {m.speaker for m in tools.messages}
    assert "micahstubbs" in speakers  # from <@U061A1R2R|micahstubbs>
    assert "U061A3E0G" in speakers  # never named anywhere in the export
    shared = next(m for m in tools.messages if "sigma.js" in m.text)
    assert shared.text.startswith("@micahstubbs uploaded a file: sigma.js (https://")
    assert "xoxe-" not in " ".join(m.text for m in tools.messages)  # private URLs stay out


@needs_bench
def test_threads_are_conversations_of_their_own() -> None:
    conversations, skips = read_all(THREADS)
    assert skips == {"slack channel_join": 1, "deleted message": 1, "bot message": 1}
    assert set(conversations) == {
        "B75B4C7",
        "B75B4C7/1736478630.905399",
        "B75B4C7/1736554801.872639",
        "B75B4C7/1736554828.343759",  # its parent is a tombstone: the reply stays
    }
    golden = json.loads((GOLDEN / "slack-thread.json").read_text(encoding="utf-8"))
    thread = conversations["B75B4C7/1736478630.905399"]
    assert [m._asdict() for m in thread.messages] == golden  # replies from the next day file
    assert count_exchanges(thread) == 1
    channel = conversations["B75B4C7"]
    assert len(channel.messages) == 7  # 16 messages - 3 skipped - 6 in threads
    assert count_exchanges(channel) == 4
    assert sum(len(c.messages) for c in conversations.values()) == 13
    assert any(m.text.endswith("]") and "[file " in m.text for m in channel.messages)


def write_export(root: Path, messages: list[object], users: list[object] | None = None) -> Path:
    (root / "general").mkdir(parents=True)
    (root / "channels.json").write_text(json.dumps([{"id": "C1", "name": "general"}]), "utf-8")
    if users is not None:
        (root / "users.json").write_text(json.dumps(users), "utf-8")
    (root / "general" / "2024-01-01.json").write_text(json.dumps(messages), "utf-8")
    return root


def test_the_exchange_cut_in_a_busy_channel(tmp_path: Path) -> None:
    start = 1_704_067_200
    burst = [{"type": "message", "user": f"U{n % 3}", "text": f"m{n}", "ts": f"{start + n}.0"}
             for n in range(45)]  # fmt: skip
    later = {"type": "message", "user": "U1", "text": "after lunch", "ts": f"{start + 7200}.5"}
    export = write_export(tmp_path / "e", [*burst, later], [{"id": "U1", "real_name": "Ann"}])
    conversations, _ = read_all(export)
    cut = [len(e.messages) for e in exchanges(conversations["general"])]
    assert cut == [20, 20, 5, 1]
    assert {m.speaker for m in conversations["general"].messages} == {"U0", "Ann", "U2"}


def test_hostile_files_are_skipped_and_counted(tmp_path: Path) -> None:
    messages = [
        "junk",
        {"type": "message", "user": "U1", "text": "no ts"},
        {"type": "message", "user": "U1", "text": "far future", "ts": "999999999999.1"},
        {"type": "message", "user": "U1", "text": "   ", "ts": "1704067200.1"},
        {"type": "message", "user": "U1", "text": "<!here> &lt;b&gt;", "ts": "1704067201.1"},
    ]
    export = write_export(tmp_path / "e", messages)
    (export / "general" / "2024-01-02.json").write_text("{not json", "utf-8")
    (export / "users.json").write_text('{"a": 1}', "utf-8")
    conversations, skips = read_all(export)
    assert [m.text for m in conversations["general"].messages] == ["@here <b>"]
    assert skips == {"malformed message": 3, "empty message": 1, "malformed file": 1}
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    assert not slack.sniff(broken, broken.read_bytes())
    skips = Skips()
    assert list(slack.read(broken, skips)) == []
    assert skips == {"unreadable export": 1}
