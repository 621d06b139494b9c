"""The one opener every reader of user files goes through (memtrove.files): no link
followed below the chosen folder, only regular files, opens that never wait, a size cap on
every read; and the indexer reading through it, a collection holding FIFOs, devices and
links, even swapped in between the scan and the read."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from memtrove.files import (
    LEAVES,
    NOT_REGULAR,
    SYMLINK,
    Refused,
    open_beneath,
    open_regular,
    read_beneath,
    read_capped,
    read_regular,
    zip_member_refusal,
)
from memtrove.index.preparing import prepare_file
from memtrove.index.scanner import scan_collection
from memtrove.results import Collection

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "note.md").write_text("inside")
    (root / "top.md").write_text("top")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("outside")
    return root


def refusal(root: Path, relative: str) -> str:
    with pytest.raises(Refused) as caught:
        read_beneath(root, relative, 1 << 20)
    return caught.value.reason


def test_regular_files_beneath_the_root_are_read(tree: Path) -> None:
    assert read_beneath(tree, "sub/note.md", 100) == b"inside"
    assert read_beneath(tree, "top.md", 100) == b"top"
    assert read_beneath(tree, "./sub/note.md", 100) == b"inside"


@pytest.mark.parametrize(
    ("make", "relative", "reason"),
    [
        (
            lambda r: (r / "out.md").symlink_to(r.parent / "outside" / "secret.md"),
            "out.md",
            SYMLINK,
        ),
        (lambda r: (r / "in.md").symlink_to(r / "top.md"), "in.md", SYMLINK),
        (lambda r: (r / "zero.md").symlink_to("/dev/zero"), "zero.md", SYMLINK),
        (lambda r: (r / "dangling.md").symlink_to(r / "nowhere.md"), "dangling.md", SYMLINK),
        (lambda r: (r / "loop.md").symlink_to("loop.md"), "loop.md", SYMLINK),
        (lambda r: (r / "away").symlink_to(r.parent / "outside"), "away/secret.md", SYMLINK),
        (lambda r: (r / "again").symlink_to(r / "sub"), "again/note.md", SYMLINK),
        (lambda r: os.mkfifo(r / "pipe.md"), "pipe.md", NOT_REGULAR),
        (lambda r: os.mkfifo(r / "sub" / "pipe.md"), "sub/pipe.md", NOT_REGULAR),
        (lambda r: (r / "folder.md").mkdir(), "folder.md", NOT_REGULAR),
        (lambda r: None, "../outside/secret.md", LEAVES),
        (lambda r: None, "/etc/passwd", LEAVES),
    ],
)
def test_links_fifos_folders_and_climbing_are_refused(
    tree: Path, make: Callable[[Path], object], relative: str, reason: str
) -> None:
    make(tree)
    assert refusal(tree, relative) == reason


def test_a_socket_is_refused(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree)
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind("sock.md")  # a socket's path is short: bound by its name
        assert refusal(tree, "sock.md") == NOT_REGULAR


def test_the_root_itself_may_be_a_link_the_user_chose(tree: Path, tmp_path: Path) -> None:
    (tmp_path / "chosen").symlink_to(tree, target_is_directory=True)
    assert read_beneath(tmp_path / "chosen", "sub/note.md", 100) == b"inside"


def test_a_file_over_its_cap_is_refused_unread(tree: Path) -> None:
    (tree / "big.md").write_bytes(b"x" * (3 << 20))
    with pytest.raises(Refused) as caught:
        read_beneath(tree, "big.md", 2 << 20)
    assert caught.value.reason == "larger than 2 MB"
    assert read_beneath(tree, "big.md", 3 << 20) == b"x" * (3 << 20)


def test_a_file_that_grows_after_the_open_is_never_read_past_its_cap(tree: Path) -> None:
    path = tree / "growing.md"
    path.write_bytes(b"x" * 100)
    with open_beneath(tree, "growing.md", max_bytes=100) as handle:
        with path.open("ab") as writer:
            writer.write(b"y" * 10_000)
        with pytest.raises(Refused, match="larger than 100 bytes"):
            read_capped(handle, 100, path)


def test_a_named_file_may_be_a_link_but_must_be_regular(tree: Path, tmp_path: Path) -> None:
    named = tmp_path / "named.md"
    named.symlink_to(tree / "top.md")
    assert read_regular(named, 100) == b"top"
    with pytest.raises(Refused) as caught:
        read_regular(named, 100, follow=False)
    assert caught.value.reason == SYMLINK
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "zero").symlink_to("/dev/zero")
    for path in (tmp_path / "pipe", tmp_path / "zero", Path("/dev/zero"), tree):
        with pytest.raises(Refused) as caught:
            open_regular(path)
        assert caught.value.reason == NOT_REGULAR


def test_zip_members_that_are_links_or_bombs_are_refused(tmp_path: Path) -> None:
    archive = tmp_path / "a.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as writer:
        writer.writestr("plain.json", "[]")
        link = zipfile.ZipInfo("link.json")
        link.external_attr = 0o120777 << 16
        writer.writestr(link, "/etc/passwd")
        writer.writestr("bomb.json", b"\0" * (4 << 20))
    with zipfile.ZipFile(archive) as reader:
        assert zip_member_refusal(reader.getinfo("plain.json"), 1 << 20) is None
        assert zip_member_refusal(reader.getinfo("link.json"), 1 << 20) == SYMLINK
        assert zip_member_refusal(reader.getinfo("bomb.json"), 1 << 20) == "larger than 1 MB"
        assert archive.stat().st_size < 100_000  # the bomb was small in the zip


# The indexer


def hostile_collection(tmp_path: Path) -> Path:
    notes = tmp_path / "notes"
    (notes / "real").mkdir(parents=True)
    (notes / "good.md").write_text("# Good\n\nnotes about tapirs")
    (notes / "real" / "deep.md").write_text("# Deep\n\ntapirs in a folder")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\naardvark private")
    os.mkfifo(notes / "pipe.md")
    (notes / "zero.md").symlink_to("/dev/zero")
    (notes / "leak.md").symlink_to(outside / "secret.md")
    (notes / "away").symlink_to(outside, target_is_directory=True)
    return notes


def memtrove(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "MEMTROVE_VAULT": str(tmp_path / "vault.sqlite"),
        "MEMTROVE_CONFIG_DIR": str(tmp_path / "config"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "memtrove", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=50,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done


def test_update_skips_a_fifo_a_device_and_links_leaving_the_folder(tmp_path: Path) -> None:
    notes = hostile_collection(tmp_path)
    memtrove(tmp_path, "collection", "add", str(notes), "--name", "notes")
    out = memtrove(tmp_path, "update", "--verbose").stdout
    data = json.loads(memtrove(tmp_path, "update", "--json").stdout)
    assert out.startswith("+2 ~0 =0 -0")
    assert "notes/pipe.md (FIFO)" in out
    assert "notes/away (folder not entered)" in out
    assert data["skipped_by_reason"] == {
        "not a regular file": 1,
        "symbolic link (not followed)": 3,
    }
    found = json.loads(memtrove(tmp_path, "search", "tapirs aardvark", "--json").stdout)
    assert sorted(hit["path"] for hit in found["results"]) == ["good.md", "real/deep.md"]


@pytest.mark.parametrize("swap", ["folder-link", "file-link", "fifo", "dev-zero", "grown"])
def test_a_file_swapped_after_the_scan_is_skipped_not_followed(tmp_path: Path, swap: str) -> None:
    notes = tmp_path / "notes"
    (notes / "real").mkdir(parents=True)
    (notes / "real" / "deep.md").write_text("# Deep\n\nfine")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "deep.md").write_text("# Secret\n\naardvark private")
    collection = Collection(name="notes", path=notes, pattern="**/*.md")
    (entry,) = scan_collection(notes, "**/*.md").files
    target = notes / "real" / "deep.md"
    if swap == "folder-link":  # a folder above the file becomes a link out
        (notes / "real").rename(notes / "moved")
        (notes / "real").symlink_to(outside, target_is_directory=True)
    elif swap == "file-link":
        target.unlink()
        target.symlink_to(outside / "deep.md")
    elif swap == "fifo":
        target.unlink()
        os.mkfifo(target)
    elif swap == "dev-zero":
        target.unlink()
        target.symlink_to("/dev/zero")
    else:
        target.write_bytes(b"x" * (6 << 20))
    outcome = prepare_file(collection, entry, None)
    assert outcome.item is None
    (issue,) = outcome.skipped
    expected = {"fifo": NOT_REGULAR, "grown": "larger than 5 MB"}.get(swap, SYMLINK)
    assert issue.reason == expected
