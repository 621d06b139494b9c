"""The zips ChatGPT and Claude.ai deliver are mined in place: their ``conversations.json``
(at the top, in the one folder of the zip, or split in numbered parts) read out of the zip
as the file itself would be. Each zip is made here from a real export of bench/mine."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.mine.exchanges import Skips, exchanges
from memtrove.mine.formats import reader
from memtrove.mine.scan import detect

BENCH = Path(__file__).resolve().parents[3] / "shared" / "bench" / "mine"
CHATGPT = BENCH / "chatgpt" / "pkuppens-my_chat_gpt__conversations.json"
CLAUDE = BENCH / "claude-ai" / "cl0ver012-chatlore__conversations.json"

pytestmark = pytest.mark.skipif(not BENCH.is_dir(), reason="bench/mine is not here")


def _exchanges(label: str, path: Path) -> list[tuple[str, str, tuple[str, ...]]]:
    return [
        (c.conversation_id, e.key, tuple(m.text for m in e.messages))
        for c in reader(label).read(path, Skips())
        for e in exchanges(c)
    ]


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


@pytest.mark.parametrize(
    ("label", "source", "member"),
    [
        ("chatgpt", CHATGPT, "conversations.json"),
        ("claude-ai", CLAUDE, "data-2024-01-02/conversations.json"),
    ],
)
def test_an_export_zip_reads_as_its_conversations_file(
    tmp_path: Path, label: str, source: str, member: str
) -> None:
    archive = _zip(
        tmp_path / "export.zip",
        {member: Path(source).read_bytes(), "user.json": b'{"uuid": "u"}', "chat.html": b"<p>"},
    )
    found = detect(archive, False)
    assert found is not None and found.label == label
    assert _exchanges(label, archive) == _exchanges(label, Path(source))


def test_a_split_export_is_read_part_by_part(tmp_path: Path) -> None:
    items = json.loads(CHATGPT.read_text(encoding="utf-8"))
    half = len(items) // 2
    archive = _zip(
        tmp_path / "export.zip",
        {
            "conversations-000.json": json.dumps(items[:half]).encode(),
            "conversations-001.json": json.dumps(items[half:]).encode(),
        },
    )
    assert _exchanges("chatgpt", archive) == _exchanges("chatgpt", CHATGPT)


def test_mining_a_folder_of_zips(vault: Vault, tmp_path: Path) -> None:
    exports = tmp_path / "exports"
    exports.mkdir()
    _zip(exports / "chatgpt.zip", {"conversations.json": CHATGPT.read_bytes()})
    _zip(exports / "other.zip", {"notes/a.json": b'{"x": 1}'})
    (exports / "damaged.zip").write_bytes(b"PK\x03\x04" + b"\x00" * 100)
    report = vault.mining.mine(exports)
    assert report.formats["chatgpt"].exchanges == 644 and report.written == 644
    assert sorted(report.unrecognised) == ["damaged.zip", "other.zip"]
    hits = vault.search("docker compose environment", collections=["conversations"])
    assert hits and hits[0].path.startswith("chatgpt/")
    again = vault.mining.mine(exports)
    assert again.written == 0 and again.unchanged == 644
