"""Vault.mining.mine on real vault files: documents and their frontmatter, idempotent reruns, a
session that grew or was rewound, --since, dry runs, redaction, files no reader takes, the
mined collection next to folder collections, --backfill-dates, runs and bounded memory."""

from __future__ import annotations

import json
import os
import re
import shutil
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from memtrove import Vault
from memtrove.errors import CollectionError, CollectionNotFoundError, InvalidQueryError
from memtrove.mine.exchanges import Skips
from memtrove.mine.formats import claude_code
from memtrove.mine.runs import mined_checks
from tests.mine.sessions import claude_line as line

BENCH = Path(__file__).resolve().parents[3] / "shared" / "bench" / "mine"
needs_bench = pytest.mark.skipif(not BENCH.is_dir(), reason="bench/mine is not here")
SECRET = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"


def session(tmp_path: Path, *lines: str) -> Path:
    folder = tmp_path / "projects"
    folder.mkdir(exist_ok=True)
    path = folder / "session-1.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


FIRST = (
    line("u1", None, "user", "How do we rotate the refresh tokens?", 0),
    line("a1", "u1", "assistant", "Rotate them on every use and revoke the family on reuse.", 1),
)
SECOND = (
    line("u2", "a1", "user", "And how long should an access token live?", 2),
    line("a2", "u2", "assistant", "Fifteen minutes, refreshed silently before it expires.", 3),
)


@pytest.fixture
def vault(tmp_path: Path) -> Any:
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as opened:
        yield opened


def documents(vault: Vault, collection: str = "conversations") -> list[tuple[str, str | None, int]]:
    rows = vault._connection.execute(
        "SELECT path, authored_at, active FROM documents WHERE collection = ? ORDER BY path",
        (collection,),
    ).fetchall()
    return [(str(p), a, int(active)) for p, a, active in rows]


def test_one_document_per_exchange_with_its_frontmatter(vault: Vault, tmp_path: Path) -> None:
    folder = session(tmp_path, *FIRST, *SECOND)
    report = vault.mining.mine(folder)
    assert (report.files, report.conversations, report.exchanges) == (1, 1, 2)
    assert report.written == 2 and report.unchanged == 0
    assert report.formats["claude-code"].exchanges == 2
    rows = documents(vault)
    assert [authored for _, authored, _ in rows] == ["2025-03-01T10:01:00Z", "2025-03-01T10:03:00Z"]
    first = vault.get(f"conversations/{rows[0][0]}")
    assert first.content_type == "conversation"
    assert first.title == "How do we rotate the refresh tokens?"
    assert rows[0][0].startswith("claude-code/session-1-") and rows[0][0].endswith("/u1.md")
    for expected in (
        'speakers: ["User", "Claude"]',
        'conversation_id: "session-1"',
        'exchange: "u1"',
        'source: "session-1.jsonl"',
        "format: claude-code",
        "**User:** How do we rotate the refresh tokens?",
        "**Claude:** Rotate them on every use",
    ):
        assert expected in first.body, expected


def test_a_rerun_changes_nothing_and_a_grown_file_adds_only_its_new_exchange(
    vault: Vault, tmp_path: Path
) -> None:
    folder = session(tmp_path, *FIRST)
    assert vault.mining.mine(folder).written == 1
    again = vault.mining.mine(folder)
    assert (again.written, again.unchanged) == (0, 1)
    before = documents(vault)
    session(tmp_path, *FIRST, *SECOND)
    grown = vault.mining.mine(folder)
    assert (grown.written, grown.unchanged, grown.retired) == (1, 1, 0)
    assert set(before) <= set(documents(vault))


def test_a_rewound_exchange_is_retired(vault: Vault, tmp_path: Path) -> None:
    folder = session(tmp_path, *FIRST, *SECOND)
    vault.mining.mine(folder)
    # the user rewinds to before u2 and asks something else: a second prompt child of a1
    rewound = (
        line("u3", "a1", "user", "Actually, should refresh tokens be bound to the device?", 5),
        line("a3", "u3", "assistant", "Yes: bind them to a device key and check it on use.", 6),
    )
    session(tmp_path, *FIRST, *SECOND, *rewound)
    report = vault.mining.mine(folder)
    assert (report.written, report.unchanged, report.retired) == (1, 1, 1)
    active = {path.rsplit("/", 1)[1]: bool(flag) for path, _, flag in documents(vault)}
    assert active == {"u1.md": True, "u2.md": False, "u3.md": True}
    assert report.skipped["claude-code"]["abandoned branch"] == 2


def test_since_dry_run_and_runs(vault: Vault, tmp_path: Path) -> None:
    folder = session(tmp_path, *FIRST, *SECOND)
    dry = vault.mining.mine(folder, dry_run=True)
    assert (dry.dry_run, dry.written) == (True, 2)
    assert documents(vault) == [] and vault.mining.import_status() == []
    later = vault.mining.mine(folder, since="2025-03-01T10:02:00Z")
    assert later.written == 1 and later.skipped["claude-code"]["before --since"] == 1
    (run,) = vault.mining.import_status()
    assert (run.collection, run.status, run.written, run.exchanges) == (
        "conversations",
        "done",
        1,
        1,
    )
    assert vault.mining.mined_collections() == [("conversations", str(folder.resolve()))]
    (check,) = mined_checks(vault._connection)
    assert check.name == "mined conversations" and check.status == "ok"
    assert "1 documents; last run #1 done" in check.detail


def test_secrets_are_redacted_before_anything_is_stored(vault: Vault, tmp_path: Path) -> None:
    folder = session(
        tmp_path,
        line("u1", None, "user", f"push it with {SECRET} please, the usual way", 0),
        line("a1", "u1", "assistant", "Pushed to origin/main with that token.", 1),
    )
    vault.mining.mine(folder)
    (path, _, _) = documents(vault)[0]
    document = vault.get(f"conversations/{path}")
    assert SECRET not in document.body and "[REDACTED:" in document.body
    assert SECRET not in document.title
    stored = vault._connection.execute("SELECT group_concat(doc, '') FROM content").fetchone()[0]
    assert SECRET not in stored


def test_patterns_of_ones_own_redact_mined_text(vault: Vault, tmp_path: Path) -> None:
    config = tmp_path / "config" / "config.yaml"
    config.parent.mkdir(exist_ok=True)
    config.write_text('redaction:\n  patterns:\n    ticket_key: "TCK-[0-9A-F]{8}"\n')
    folder = session(
        tmp_path,
        line("u1", None, "user", "close ticket TCK-0123ABCD once the deploy is green", 0),
        line("a1", "u1", "assistant", "Closed TCK-0123ABCD after the green deploy.", 1),
    )
    vault.mining.mine(folder)
    (path, _, _) = documents(vault)[0]
    body = vault.get(f"conversations/{path}").body
    assert "TCK-0123ABCD" not in body  # nor in the title the frontmatter repeats
    assert body.count("[REDACTED:ticket_key]") == 3


def test_files_no_reader_takes_are_reported(vault: Vault, tmp_path: Path) -> None:
    folder = session(tmp_path, *FIRST)
    (folder / "notes.md").write_text("# Plans\n\nShip the importer on Friday.\n", encoding="utf-8")
    (folder / "data.json").write_text('{"rows": [1, 2, 3]}', encoding="utf-8")
    (folder / "picture.png").write_bytes(b"\x89PNG")
    (folder / "node_modules").mkdir()
    (folder / "node_modules" / "x.jsonl").write_text(FIRST[0] + "\n", encoding="utf-8")
    report = vault.mining.mine(folder)
    assert report.unrecognised == ["data.json", "notes.md"]
    assert report.unrecognised_count == 2
    assert report.exchanges == 1  # node_modules is never entered


def test_the_mined_collection_sits_beside_folder_collections(vault: Vault, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "tokens.md").write_text("# Tokens\n\nRefresh tokens rotate.\n", encoding="utf-8")
    vault.add_collection(notes, name="notes")
    vault.update()
    folder = session(tmp_path, *FIRST, *SECOND)
    vault.mining.mine(folder)
    listed = {c.name: (c.documents, c.pattern) for c in vault.status().collections}
    assert listed == {"notes": (1, "**/*.md"), "conversations": (2, "(mined)")}
    vault.update()  # a folder re-scan never touches the mined documents
    assert [flag for _, _, flag in documents(vault)] == [1, 1]
    found = vault.search("rotate refresh tokens", collections=["conversations"])
    assert found and {r.collection for r in found} == {"conversations"}
    with pytest.raises(CollectionError, match="folder collection"):
        vault.mining.mine(folder, "notes")


def test_bad_arguments_are_one_line_errors(vault: Vault, tmp_path: Path) -> None:
    with pytest.raises(CollectionError, match="does not exist"):
        vault.mining.mine(tmp_path / "missing")
    with pytest.raises(InvalidQueryError, match="unknown format"):
        vault.mining.mine(tmp_path, format="whatsapp")
    with pytest.raises(InvalidQueryError, match="not a date"):
        vault.mining.mine(tmp_path, since="last tuesday")
    with pytest.raises(CollectionError, match="invalid collection name"):
        vault.mining.mine(tmp_path, "Bad Name")
    with pytest.raises(InvalidQueryError):
        vault.mining.import_status(0)


def test_backfill_dates_dry_run_then_apply(vault: Vault, tmp_path: Path) -> None:
    folder = session(tmp_path, *FIRST, *SECOND)
    vault.mining.mine(folder)
    with vault._connection:
        vault._connection.execute("UPDATE documents SET authored_at = NULL")
    dry = vault.mining.backfill_dates(folder)
    assert (dry.undated, dry.found, dry.applied) == (2, 2, False)
    assert [a for _, a, _ in documents(vault)] == [None, None]
    applied = vault.mining.backfill_dates(folder, apply=True)
    assert (applied.undated, applied.found) == (2, 2)
    assert [a for _, a, _ in documents(vault)] == ["2025-03-01T10:01:00Z", "2025-03-01T10:03:00Z"]
    assert vault.mining.backfill_dates(folder).undated == 0


@needs_bench
def test_the_bench_folders_mine_idempotently(vault: Vault, tmp_path: Path) -> None:
    for name in ("claude-code", "codex", "plain-text"):
        shutil.copytree(BENCH / name, tmp_path / "bench" / name)
    report = vault.mining.mine(tmp_path / "bench")
    assert report.formats["claude-code"].files == 15  # 4 of them subagent transcripts
    assert report.formats["claude-code"].conversations == 11
    assert report.skipped["claude-code"]["subagent transcript"] == 4
    assert report.formats["codex"].files == 6
    assert report.formats["text"].files == 7
    assert report.unrecognised_count == 0 and report.errors == []
    assert report.written == report.exchanges == len(documents(vault))
    again = vault.mining.mine(tmp_path / "bench")
    assert (again.written, again.unchanged, again.retired) == (0, report.written, 0)


def test_a_large_session_streams_in_bounded_memory(tmp_path: Path) -> None:
    """40 MB of tool output: the reader keeps summaries, never the output."""
    path = tmp_path / "big.jsonl"
    dump = "x" * 100_000
    with path.open("w", encoding="utf-8") as handle:
        handle.write(line("u0", None, "user", "Read every log file and summarise them", 0) + "\n")
        parent = "u0"
        for index in range(400):
            call = {
                "type": "assistant",
                "uuid": f"c{index}",
                "parentUuid": parent,
                "timestamp": "2025-03-01T10:01:00Z",
                "message": {
                    "id": f"m{index}",
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": f"t{index}",
                            "name": "Read",
                            "input": {"file_path": f"/logs/{index}.log"},
                        }
                    ],
                },
            }
            result = {
                "type": "user",
                "uuid": f"r{index}",
                "parentUuid": f"c{index}",
                "timestamp": "2025-03-01T10:02:00Z",
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": f"t{index}", "content": dump}
                    ],
                },
            }
            handle.write(json.dumps(call) + "\n" + json.dumps(result) + "\n")
            parent = f"r{index}"
    assert path.stat().st_size > 40_000_000
    tracemalloc.start()
    try:
        (conversation,) = claude_code.read(path, Skips())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000  # a few lines at a time, and one summary per call
    assert len(conversation.messages) == 401  # the prompt, one reply per API message
    reply = "\n".join(m.text for m in conversation.messages[1:])
    assert reply.count("[Read: /logs/") == 400 and len(reply) < 100_000


def test_hostile_lines_and_unreadable_files_cost_only_themselves(
    vault: Vault, tmp_path: Path
) -> None:
    folder = session(tmp_path, *FIRST, "[" * 100_000 + "]" * 100_000, *SECOND)
    (folder / "rollout-x.jsonl").write_text(
        '{"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "r"}}\n'
        + "{" * 50_000
        + "\n",
        encoding="utf-8",
    )
    locked = folder / "locked.jsonl"
    locked.write_text(FIRST[0] + "\n", encoding="utf-8")
    locked.chmod(0)
    try:
        readable = os.access(locked, os.R_OK)  # root reads it all the same
        report = vault.mining.mine(folder)
    finally:
        locked.chmod(0o600)
    assert report.skipped["claude-code"]["malformed line"] == 1
    assert report.skipped["codex"]["malformed line"] == 1
    if readable:
        assert report.formats["claude-code"].exchanges == 3 and report.errors == []
    else:
        assert report.formats["claude-code"].exchanges == 2
        assert [e.split(":")[0] for e in report.errors] == ["locked.jsonl"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifos_and_links_are_never_opened(vault: Vault, tmp_path: Path) -> None:
    """A FIFO would block a reader forever: one in the folder is passed over, one named as
    the source is a one-line error, and a link is not followed."""
    folder = session(tmp_path, *FIRST)
    os.mkfifo(folder / "pipe.jsonl")
    (folder / "link.jsonl").symlink_to(folder / "session-1.jsonl")
    report = vault.mining.mine(folder)  # returns: nothing waits on the FIFO
    assert report.formats["claude-code"].files == 1
    assert report.formats["claude-code"].exchanges == 1
    assert report.errors == [] and report.unrecognised == []
    with pytest.raises(CollectionError, match="neither a folder nor a regular file"):
        vault.mining.mine(folder / "pipe.jsonl")


def test_sidechain_lines_inside_a_session_and_embedding(vault: Vault, tmp_path: Path) -> None:
    folder = session(
        tmp_path,
        FIRST[0],
        line("s1", "u1", "user", "Warmup", 0, isSidechain=True),
        line(
            "s2", "s1", "assistant", "Ready to help with the sidechain task.", 0, isSidechain=True
        ),
        FIRST[1],
    )
    report = vault.mining.mine(folder, embed=True)
    assert report.skipped["claude-code"]["sidechain line"] == 2
    (path, _, _) = documents(vault)[0]
    assert "Warmup" not in vault.get(f"conversations/{path}").body
    assert vault.documents.index_stats().embedded_documents == 1
    found = vault.vsearch("rotating refresh tokens", collections=["conversations"])
    assert [r.title for r in found] == ["How do we rotate the refresh tokens?"]


def test_a_mined_collection_is_removed_and_mined_again(vault: Vault, tmp_path: Path) -> None:
    folder = session(tmp_path, *FIRST, *SECOND)
    vault.mining.mine(folder)
    (path, _, _) = documents(vault)[0]
    vault.curation.forget(f"conversations/{path}")
    assert vault.mining.mine(folder).unchanged == 2  # a forgotten exchange stays forgotten
    removed = vault.remove_collection("conversations")
    assert (removed.name, removed.pattern) == ("conversations", "(mined)")
    assert [flag for _, _, flag in documents(vault)] == [0, 0]
    assert vault.mining.mined_collections() == [] and vault.mining.import_status() == []
    assert "conversations" not in {c.name for c in vault.status().collections}
    again = vault.mining.mine(folder)  # back in search, but for the exchange that was forgotten
    assert (again.written, again.unchanged) == (1, 1)
    assert [flag for _, _, flag in documents(vault)] == [0, 1]


def test_update_names_a_mined_collection_for_what_it_is(vault: Vault, tmp_path: Path) -> None:
    vault.mining.mine(session(tmp_path, *FIRST))
    with pytest.raises(CollectionNotFoundError, match="is a mined collection: `memtrove mine"):
        vault.update(["conversations"])
    with pytest.raises(CollectionNotFoundError, match="no collection named 'nothing'"):
        vault.update(["nothing"])


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("x" * 100_000, "cannot read x{100}…x{100}: File name too long"),
        ("/tmp/" + "a" * 300, "cannot read /tmp/a{95}…a{100}: File name too long"),
        ("/a" * 3000, "cannot read (/a){50}…(/a){50}: File name too long"),
    ],
)
def test_a_source_the_system_refuses_is_a_short_error(
    vault: Vault, source: str, message: str
) -> None:
    """The operating system's refusal is a CollectionError (REST answered 500 with a
    traceback), and a path of any length is shortened in it (MCP echoed 100,000
    characters)."""
    with pytest.raises(CollectionError) as caught:
        vault.mining.mine(source, dry_run=True)
    assert re.fullmatch(message, str(caught.value)), str(caught.value)[:300]
