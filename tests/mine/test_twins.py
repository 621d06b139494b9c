"""The same exchange mined from two sources is one result: the real Claude Code sessions
and their terminal captures (``bench/mine``), in one run and across runs; a user's own
repeated prompt in one export stays as many times as it was asked."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.mine.twins import TWIN

BENCH = Path(__file__).resolve().parents[3] / "shared" / "bench" / "mine"
PAIRS = [
    ("claude-code/marot-spotter__short.jsonl", "plain-text/marot-spotter__short.terminal.txt"),
    (
        "claude-code/marot-spotter__tool_heavy.jsonl",
        "plain-text/marot-spotter__tool_heavy.terminal.txt",
    ),
]
CHATGPT = BENCH / "chatgpt" / "pkuppens-my_chat_gpt__conversations.json"

pytestmark = pytest.mark.skipif(not BENCH.is_dir(), reason="bench/mine is not here")


def _copy(folder: Path, *names: str) -> Path:
    for name in names:
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(BENCH / name, target)
    return folder


def _titles(vault: Vault) -> list[str]:
    rows = vault._connection.execute(
        "SELECT title FROM documents WHERE collection = 'conversations' AND active = 1"
    ).fetchall()
    return sorted(str(row[0]) for row in rows)


def test_a_session_and_its_terminal_capture_are_mined_once(vault: Vault, tmp_path: Path) -> None:
    both = _copy(tmp_path / "exports", *[name for pair in PAIRS for name in pair])
    report = vault.mining.mine(both)
    twins = report.skipped.get("text", {}).get(TWIN, 0)
    assert twins == 3  # every exchange of the two captures (1 + 2) is already mined
    titles = _titles(vault)
    assert len(titles) == len(set(titles)) and "start phoenix in background" in titles
    hits = vault.search("phoenix server background", collections=["conversations"])
    assert [hit.title for hit in hits].count("start phoenix in background") == 1
    again = vault.mining.mine(both)
    assert again.written == 0 and again.skipped["text"][TWIN] == 3


def test_a_capture_mined_later_joins_the_session_mined_before(vault: Vault, tmp_path: Path) -> None:
    vault.mining.mine(_copy(tmp_path / "first", PAIRS[0][0]))
    later = vault.mining.mine(_copy(tmp_path / "later", PAIRS[0][1]))
    assert later.written == 0 and later.skipped["text"][TWIN] == 1
    assert len(_titles(vault)) == 1


def test_a_prompt_asked_twice_in_one_export_stays_twice(vault: Vault, tmp_path: Path) -> None:
    """The ChatGPT export holds the same CV prompt in two chats, word for word."""
    report = vault.mining.mine(_copy(tmp_path / "gpt", "chatgpt/" + CHATGPT.name))
    assert TWIN not in report.skipped.get("chatgpt", {})
    assert report.formats["chatgpt"].exchanges == 644
