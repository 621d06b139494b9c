"""``mine`` on folders of every format holding links, FIFOs and devices: the rest is mined,
each hostile entry is counted under ``files`` by its reason and never followed, waited on
or read. And the per-message cap: one huge message costs one bounded document, the cut
counted."""

from __future__ import annotations

import json
import os
import re
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from memtrove import Vault
from memtrove.errors import CollectionError
from memtrove.mine.exchanges import (
    MAX_EXCHANGE_CHARS,
    MAX_MESSAGE_CHARS,
    USER,
    Conversation,
    Message,
    exchanges,
)
from memtrove.mine.pipeline import FILES
from tests.mine.sessions import claude_line as line

BENCH = Path(__file__).resolve().parents[3] / "shared" / "bench" / "mine"
needs_bench = pytest.mark.skipif(not BENCH.is_dir(), reason="bench/mine is not here")
LINK = "symbolic link (not followed)"
NOT_REGULAR = "not a regular file"
MARKER = "outsidemarker"
MESSAGE_CUT = f"message cut to {MAX_MESSAGE_CHARS:,} characters"

pytestmark = pytest.mark.timeout(60)

SESSION = (
    line("u1", None, "user", "How do we rotate the refresh tokens?", 0),
    line("a1", "u1", "assistant", "Rotate them on every use and revoke the family on reuse.", 1),
)


@pytest.fixture
def vault(tmp_path: Path) -> Any:
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as opened:
        yield opened


def bodies(vault: Vault) -> list[str]:
    rows = vault._connection.execute(
        "SELECT c.doc FROM documents d JOIN content c ON c.hash = d.hash "
        "WHERE d.collection = 'conversations' AND d.active = 1"
    ).fetchall()
    return [str(row[0]) for row in rows]


def outside_session(folder: Path, name: str = "secret.jsonl") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    text = f"{MARKER}: the private plan for the migration"
    path.write_text(
        "\n".join(
            (
                line("o1", None, "user", text, 0, session="s-out"),
                line("o2", "o1", "assistant", f"{MARKER} noted, kept private.", 1, session="s-out"),
            )
        )
        + "\n"
    )
    return path


@needs_bench
def test_a_folder_of_every_format_mines_the_rest_and_counts_the_hostile(
    vault: Vault, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    secret = outside_session(outside)
    root = tmp_path / "projects"
    root.mkdir()
    (root / "session-1.jsonl").write_text("\n".join(SESSION) + "\n")
    (root / "linked.jsonl").symlink_to(secret)
    (root / "inner.jsonl").symlink_to(root / "session-1.jsonl")  # one rule for every link
    os.mkfifo(root / "fifo.jsonl")
    (root / "zero.jsonl").symlink_to("/dev/zero")
    (root / "sub").symlink_to(outside, target_is_directory=True)
    (root / "chat.json").symlink_to(next((BENCH / "chatgpt").glob("*.json")))
    (root / "rollout.jsonl").symlink_to(next((BENCH / "codex").glob("*.jsonl")))
    os.mkfifo(root / "notes.md")
    os.mkfifo(root / "export.zip")
    report = vault.mining.mine(root)
    assert (report.files, report.exchanges) == (1, 1)
    assert report.skipped[FILES] == {LINK: 6, NOT_REGULAR: 3}
    assert report.errors == [] and report.unrecognised == []
    assert not any(MARKER in body for body in bodies(vault))
    assert f"skipped ({FILES}): {NOT_REGULAR} 3, {LINK} 6" in report.text()


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "socket"])
def test_a_source_that_is_not_a_regular_file_is_refused_and_mine_returns(
    vault: Vault, tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "source.jsonl"
    if kind == "fifo":
        os.mkfifo(source)
    elif kind == "dev-zero":
        source.symlink_to("/dev/zero")  # named by the user: followed, and refused as a device
    else:
        import socket

        listener = socket.socket(socket.AF_UNIX)
        monkeypatch.chdir(tmp_path)  # a socket's path is short: bind it by its name
        listener.bind(source.name)
    with pytest.raises(CollectionError, match="neither a folder nor a regular file"):
        vault.mining.mine(source)


def test_a_source_the_user_names_through_a_link_is_read(vault: Vault, tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "session-1.jsonl").write_text("\n".join(SESSION) + "\n")
    (tmp_path / "named.jsonl").symlink_to(real / "session-1.jsonl")
    (tmp_path / "named-folder").symlink_to(real, target_is_directory=True)
    assert vault.mining.mine(tmp_path / "named.jsonl").exchanges == 1
    assert vault.mining.mine(tmp_path / "named-folder").exchanges == 1


def chatgpt_export(text: str) -> list[dict[str, Any]]:
    def node(ident: str, parent: str | None, role: str | None, body: str) -> dict[str, Any]:
        message = None
        if role is not None:
            content = {"content_type": "text", "parts": [body]}
            message = {"id": ident, "author": {"role": role}, "content": content}
            message["create_time"] = 1_700_000_000
        return {"id": ident, "parent": parent, "children": [], "message": message}

    mapping = {
        "r": node("r", None, None, ""),
        "a": node("a", "r", "user", text),
        "b": node("b", "a", "assistant", "A short answer to the question above."),
    }
    return [{"id": "c1", "title": "huge", "current_node": "b", "mapping": mapping}]


@pytest.mark.parametrize("packed", ["json", "zip"])
def test_one_huge_message_is_cut_and_counted(vault: Vault, tmp_path: Path, packed: str) -> None:
    text = "the quick brown fox " * (3 * MAX_MESSAGE_CHARS // 20)
    data = json.dumps(chatgpt_export(text))
    if packed == "zip":
        source = tmp_path / "export.zip"
        with zipfile.ZipFile(source, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("conversations.json", data)
    else:
        source = tmp_path / "conversations.json"
        source.write_text(data)
    report = vault.mining.mine(source)
    assert report.exchanges == 1
    assert report.skipped["chatgpt"][MESSAGE_CUT] == 1
    (body,) = bodies(vault)
    assert MAX_MESSAGE_CHARS < len(body) < MAX_MESSAGE_CHARS + 2000
    assert re.search(r"\n\[cut: 1,99\d,\d{3} more characters\]\n", body)  # the text was stripped
    assert "A short answer" in body


def test_a_huge_claude_code_reply_is_cut(vault: Vault, tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    folder.mkdir()
    reply = "The log reads: " + "0123456789" * (MAX_MESSAGE_CHARS // 5)
    lines = (SESSION[0], line("a1", "u1", "assistant", reply, 1))
    (folder / "session-1.jsonl").write_text("\n".join(lines) + "\n")
    report = vault.mining.mine(folder)
    assert report.skipped["claude-code"][MESSAGE_CUT] == 1
    (body,) = bodies(vault)
    assert len(body) < MAX_MESSAGE_CHARS + 2000 and "How do we rotate" in body


def test_an_exchange_is_cut_once_its_messages_hold_the_exchange_cap() -> None:
    size = MAX_MESSAGE_CHARS - 10
    count = MAX_EXCHANGE_CHARS // size + 2
    messages = tuple(
        Message(USER if index == 0 else "assistant", "X", "y" * size, None, f"m{index}")
        for index in range(count)
    )
    conversation = Conversation("slack", Path("export"), "general", None, messages)
    counted: Counter[str] = Counter()
    (exchange,) = exchanges(conversation, counted)
    cuts = dict(counted)
    assert sum(len(m.text) for m in exchange.messages) < MAX_EXCHANGE_CHARS + 200 * count
    assert cuts == {f"exchange cut to {MAX_EXCHANGE_CHARS:,} characters": 2}
    assert [m.key for m in exchange.messages] == [m.key for m in messages]  # none dropped


@needs_bench
@pytest.mark.parametrize("fmt", ["claude-code", "codex"])
def test_a_line_past_the_cap_is_skipped_and_the_rest_read(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    from memtrove.mine import exchanges as module

    monkeypatch.setattr(module.bounded_lines, "__defaults__", (4096,))  # a small cap, same code
    folder = tmp_path / "projects"
    folder.mkdir()
    long_line = '{"type": "user", "pad": "' + "x" * 10_000 + '"}'
    if fmt == "claude-code":
        lines = [SESSION[0], long_line, SESSION[1]]
        name = "session-1.jsonl"
    else:
        source = next((BENCH / "codex").glob("daaain*.jsonl"))
        lines = [
            *source.read_text().splitlines()[:1],
            long_line,
            *source.read_text().splitlines()[1:],
        ]
        name = "rollout.jsonl"
    (folder / name).write_text("\n".join(lines) + "\n")
    report = vault.mining.mine(folder)
    assert report.exchanges >= 1
    assert report.skipped[fmt]["line longer than 256 MB"] == 1
