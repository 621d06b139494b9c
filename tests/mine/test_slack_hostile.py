"""A Slack export that carries links, a FIFO and a device (``unzip`` restores links, so a
shared export is enough): ``mine`` reads the rest, the same exchanges as the clean export,
and counts each hostile entry as skipped by its reason, never following, waiting on or
reading it. Built from the real export in bench/mine/slack, copied into the test's folder."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from memtrove import Vault
from memtrove.mine.exchanges import Skips
from memtrove.mine.formats import slack

BENCH = Path(__file__).resolve().parents[3] / "shared" / "bench" / "mine" / "slack"
THREADS = BENCH / "rusq-slackdump__source_export_dir"
CHANNEL = "B75B4C7"
LINK = "symbolic link (not followed)"
NOT_REGULAR = "not a regular file"
MARKER = "outsidemarker"

pytestmark = [
    pytest.mark.skipif(not THREADS.is_dir(), reason="bench/mine is not here"),
    pytest.mark.timeout(60),
]


def outside_day(folder: Path, name: str = "2025-01-12.json") -> Path:
    """A day file outside the export, whose text must never be mined."""
    folder.mkdir(parents=True, exist_ok=True)
    day = folder / name
    message = {"type": "message", "user": "U1", "ts": "1736600000.000100"}
    day.write_text(json.dumps([{**message, "text": f"{MARKER} the private notes"}]))
    return day


def export(tmp_path: Path, name: str) -> Path:
    """A copy of the real export, at ``<name>/export`` (the same name for every copy, so
    their documents name the same source)."""
    copy = tmp_path / name / "export"
    shutil.copytree(THREADS, copy)
    return copy


def make_hostile(root: Path, outside: Path) -> None:
    """The issue's four: a day file linked out, a channel folder linked out, a FIFO day
    file, a day file linked to /dev/zero."""
    (root / CHANNEL / "2025-02-01.json").symlink_to(outside_day(outside))
    outside_day(outside / "general")
    (root / "general").symlink_to(outside / "general", target_is_directory=True)
    os.mkfifo(root / CHANNEL / "2025-02-02.json")
    (root / CHANNEL / "2025-02-03.json").symlink_to("/dev/zero")


def mined(tmp_path: Path, name: str, source: Path) -> tuple[Any, list[str]]:
    with Vault.open(tmp_path / f"{name}.sqlite", config_dir=tmp_path / f"{name}-config") as vault:
        report = vault.mining.mine(source)
        rows = vault._connection.execute(
            "SELECT c.doc FROM documents d JOIN content c ON c.hash = d.hash "
            "WHERE d.collection = 'conversations' AND d.active = 1"
        ).fetchall()
    return report, sorted(str(row[0]) for row in rows)


def added(hostile: dict[str, int], clean: dict[str, int]) -> dict[str, int]:
    return {reason: hostile[reason] - clean.get(reason, 0) for reason in hostile} | {
        reason: -count for reason, count in clean.items() if reason not in hostile
    }


def test_the_export_mines_as_the_clean_one_and_counts_the_hostile_entries(
    tmp_path: Path,
) -> None:
    clean = export(tmp_path, "clean")
    hostile = export(tmp_path, "hostile")
    make_hostile(hostile, tmp_path / "outside")
    clean_report, clean_docs = mined(tmp_path, "clean", clean)
    report, docs = mined(tmp_path, "hostile", hostile)
    assert report.exchanges == clean_report.exchanges > 0
    assert docs == clean_docs
    assert not any(MARKER in doc for doc in docs)
    skipped = {
        k: v for k, v in added(report.skipped["slack"], clean_report.skipped["slack"]).items() if v
    }
    assert skipped == {LINK: 3, NOT_REGULAR: 1}
    assert report.errors == []


@pytest.mark.parametrize(
    ("hostile", "reason"),
    [
        ("day-linked-out", LINK),
        ("day-linked-inside", LINK),
        ("channel-linked-out", LINK),
        ("channel-linked-inside", LINK),
        ("fifo-day", NOT_REGULAR),
        ("dev-zero-day", LINK),
        ("folder-as-day", NOT_REGULAR),
        ("users-linked-out", LINK),
        ("channels-fifo", NOT_REGULAR),
        ("socket-day", NOT_REGULAR),
    ],
)
def test_each_kind_of_hostile_entry_is_skipped_by_its_reason(
    tmp_path: Path, hostile: str, reason: str
) -> None:
    root = export(tmp_path, "export")
    outside = tmp_path / "outside"
    channel = root / CHANNEL
    day = channel / "2025-02-01.json"
    if hostile == "day-linked-out":
        day.symlink_to(outside_day(outside))
    elif hostile == "day-linked-inside":
        day.symlink_to(channel / "2025-01-10.json")  # one rule for every link
    elif hostile == "channel-linked-out":
        outside_day(outside / "general")
        (root / "general").symlink_to(outside / "general", target_is_directory=True)
    elif hostile == "channel-linked-inside":
        (root / "again").symlink_to(channel, target_is_directory=True)
    elif hostile == "fifo-day":
        os.mkfifo(day)
    elif hostile == "dev-zero-day":
        day.symlink_to("/dev/zero")
    elif hostile == "folder-as-day":
        day.mkdir()
    elif hostile == "users-linked-out":
        users = outside / "users.json"
        outside.mkdir()
        users.write_text(json.dumps([{"id": "UOF82F39AE", "real_name": MARKER}]))
        (root / "users.json").unlink()
        (root / "users.json").symlink_to(users)
    elif hostile == "channels-fifo":
        (root / "channels.json").unlink()
        os.mkfifo(root / "channels.json")
    elif hostile == "socket-day":
        import socket

        with socket.socket(socket.AF_UNIX) as listener:
            here = os.getcwd()
            os.chdir(channel)  # a socket's path is short: bind it by its name
            try:
                listener.bind(day.name)
            finally:
                os.chdir(here)
    skips = Skips()
    conversations = list(slack.read(root, skips))
    assert conversations
    assert skips[reason] == 1
    text = json.dumps([c.messages for c in conversations] + [c.title for c in conversations])
    assert MARKER not in text


def test_a_zipped_export_skips_link_members_and_members_over_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "export.zip"
    cap = max(path.stat().st_size for path in THREADS.rglob("*.json"))
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as writer:
        for path in sorted(THREADS.rglob("*")):
            if path.is_file():
                writer.write(path, path.relative_to(THREADS).as_posix())
        link = zipfile.ZipInfo(f"{CHANNEL}/2025-02-01.json")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16  # what `zip -y` stores
        writer.writestr(link, "/etc/passwd")
        big = json.dumps(
            [{"type": "message", "user": "U1", "ts": "1736600000.1", "text": "x" * cap}]
        )
        writer.writestr(f"{CHANNEL}/2025-02-02.json", big)
    monkeypatch.setattr(slack, "MAX_DAY_FILE_BYTES", cap)  # a zip bomb, in small
    skips = Skips()
    assert list(slack.read(archive, skips))
    assert skips[LINK] == 1
    assert skips[f"larger than {cap:,} bytes"] == 1


def test_the_cli_lists_the_skips_and_returns(tmp_path: Path) -> None:
    root = export(tmp_path, "hostile")
    make_hostile(root, tmp_path / "outside")
    env = {
        **os.environ,
        "MEMTROVE_VAULT": str(tmp_path / "vault.sqlite"),
        "MEMTROVE_CONFIG_DIR": str(tmp_path / "config"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "memtrove", "mine", str(root)],
        capture_output=True,
        text=True,
        env=env,
        timeout=50,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if "skipped (slack)" in line)
    assert f"{LINK} 3" in line and f"{NOT_REGULAR} 1" in line


def test_rest_mine_and_the_mcp_tool_return_with_the_skips(tmp_path: Path) -> None:
    from memtrove.api import create_app
    from memtrove.mcp.mine_server import mine
    from tests.api.conftest import JSON, local_client

    root = export(tmp_path, "hostile")
    make_hostile(root, tmp_path / "outside")
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "c") as vault:
        with local_client(create_app(vault)) as client:
            answer = client.post("/mine", json={"path": str(root), "dry_run": False}, headers=JSON)
        assert answer.status_code == 200, answer.text
        assert answer.json()["skipped"]["slack"][LINK] == 3
        assert answer.json()["skipped"]["slack"][NOT_REGULAR] == 1
        text, data = mine(vault, str(root), "conversations", "auto", True, None)
        assert data["skipped"]["slack"][LINK] == 3 and f"{NOT_REGULAR} 1" in text
