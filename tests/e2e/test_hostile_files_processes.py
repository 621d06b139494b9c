"""`memtrove update` as users run it, over folders holding what no note should be."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write


def memtrove(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "memtrove", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", result.stderr
    return result


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "MEMTROVE_VAULT": str(tmp_path / "vault.sqlite"),
        "MEMTROVE_CONFIG_DIR": str(tmp_path / "config"),
    }


def test_update_skips_odd_names_and_kinds_and_indexes_every_collection(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes, other = tmp_path / "notes", tmp_path / "other"
    write(notes, "good.md", "# Good\n\nnotes about tapirs")
    write(other, "x.md", "# Other\n\ntapirs elsewhere")
    with open(os.fsencode(notes) + b"/bad\xff.md", "wb") as handle:
        handle.write(b"# Bad name\n\ntapirs")
    os.mkdir(os.fsencode(notes) + b"/folder\xfe")
    os.mkfifo(notes / "pipe.md")
    (notes / "loop.md").symlink_to("loop.md")
    memtrove("collection", "add", str(notes), "--name", "notes", env=env)
    memtrove("collection", "add", str(other), "--name", "other", env=env)
    monkeypatch.chdir(notes)
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind("sock.md")
        out = memtrove("update", "--verbose", env=env).stdout
        data = json.loads(memtrove("update", "--json", env=env).stdout)
    assert out.startswith("+2 ~0 =0 -0")
    assert "skipped 2: name not valid UTF-8" in out and "notes/bad\ufffd.md" in out
    assert "notes/folder\ufffd (folder not entered)" in out
    assert "skipped 2: not a regular file" in out
    assert "notes/pipe.md (FIFO)" in out and "notes/sock.md (socket)" in out
    assert "skipped 1: symbolic link (not followed)" in out
    assert data["unchanged"] == 2 and data["removed"] == 0
    assert data["skipped_by_reason"] == {
        "name not valid UTF-8": 2,
        "not a regular file": 2,
        "symbolic link (not followed)": 1,
    }
    found = memtrove("search", "tapirs", "--json", env=env).stdout
    assert sorted(hit["path"] for hit in json.loads(found)["results"]) == ["good.md", "x.md"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root lists folders whatever their mode")
def test_an_unreadable_folder_keeps_its_documents(env: dict[str, str], tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    write(notes, "top.md", "# Top\n\nfine")
    write(notes, "private/inner.md", "# Inner\n\nplatypus")
    memtrove("collection", "add", str(notes), "--name", "notes", env=env)
    memtrove("update", env=env)
    (notes / "private").chmod(0)
    try:
        out = memtrove("update", env=env).stdout
    finally:
        (notes / "private").chmod(0o755)
    assert out.startswith("+0 ~0 =1 -0") and "skipped 1: folder not readable" in out
    found = memtrove("search", "platypus", "--json", env=env).stdout
    assert [hit["path"] for hit in json.loads(found)["results"]] == ["private/inner.md"]


@pytest.mark.parametrize("lean", ["on", "off"])
def test_names_and_titles_cannot_drive_the_terminal(
    env: dict[str, str], tmp_path: Path, lean: str
) -> None:
    """Escape sequences, bells, line breaks and bidi overrides in file names and document
    text are printed as visible escapes by search and update, on both CLI paths."""
    notes = tmp_path / "notes"
    write(notes, "evil\x1b[31mred.md", "# Title \x1b]0;pwned\x07 here\n\nokapis \u202egnp.exe")
    write(notes, "bin\x1b[2J.md", "\x00binary")
    env = {**env, "MEMTROVE_LEAN": lean, "MEMTROVE_SERVER": "off"}
    memtrove("collection", "add", str(notes), "--name", "notes", env=env)
    out = (
        memtrove("update", "--verbose", env=env).stdout
        + memtrove("search", "okapis", env=env).stdout
    )
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "notes/bin\\x1b[2J.md" in out and "notes/evil\\x1b[31mred.md" in out
    assert "Title \\x1b]0;pwned\\x07 here" in out and "\\u202egnp.exe" in out
    data = json.loads(memtrove("search", "okapis", "--json", env=env).stdout)
    assert data["results"][0]["path"] == "evil\x1b[31mred.md"  # JSON keeps the real name


def _on_a_terminal(arguments: list[str], env: dict[str, str]) -> str:
    """What ``memtrove ARGUMENTS`` writes when its stdout is a terminal (a pseudo-terminal)."""
    import pty

    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "memtrove", *arguments],
            stdout=follower,
            stderr=subprocess.PIPE,
            env=env,
            timeout=60,
            check=False,
        )
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other side is closed: all read
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    assert done.returncode == 0, done.stderr
    return b"".join(chunks).decode("utf-8", errors="replace")


@pytest.mark.parametrize("lean", ["on", "off"])
def test_get_shows_a_documents_escape_sequences_on_a_terminal(
    env: dict[str, str], tmp_path: Path, lean: str
) -> None:
    notes = tmp_path / "notes"
    write(notes, "evil.md", "# Evil\n\nclears \x1b[2J the screen\tand rings \x07 a bell\n")
    env = {**env, "MEMTROVE_LEAN": lean, "MEMTROVE_SERVER": "off"}
    memtrove("collection", "add", str(notes), "--name", "notes", env=env)
    memtrove("update", env=env)
    shown = _on_a_terminal(["get", "notes/evil.md"], env)
    assert "\x1b" not in shown and "\x07" not in shown
    assert "clears \\x1b[2J the screen\tand rings \\x07 a bell" in shown
    data = json.loads(memtrove("get", "notes/evil.md", "--json", env=env).stdout)
    assert "\x1b[2J" in data["body"]  # the stored text itself is kept
