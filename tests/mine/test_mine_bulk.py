"""The bulk write path of mined exchanges (index.internal.write_bulk) against the indexer's
one-by-one path on real vault files, and the vault's lock held per batch only."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any

import pytest

from memtrove import Vault
from memtrove.db.connection import Connection, write_transaction
from memtrove.db.sqlite.fts_totals import fts_totals_drifted
from memtrove.errors import VaultBusyError
from memtrove.index.classify import quality_score
from memtrove.index.indexer import (
    _insert_document,
    _store_content,
    _write_document,
    deactivate_documents,
)
from memtrove.index.internal import BulkDocument, _prepared, write_bulk
from memtrove.index.markdown import document_title, parse_markdown
from memtrove.mine.pipeline import mine_folder
from tests.mine.sessions import claude_line as line

NOW = "2026-01-01T00:00:00Z"
MTIME = 1_767_225_600_000_000_000


def note(path: str, body: str) -> BulkDocument:
    text = f'---\ntitle: "{body[:30]}"\ncontent_type: conversation\n---\n\n{body}\n'
    parsed = parse_markdown(text)
    data = text.encode("utf-8")
    return BulkDocument(
        path=path,
        text=text,
        hash=hashlib.sha256(data).hexdigest(),
        parsed=parsed,
        title=document_title(parsed, path),
        content_type="conversation",
        authored_at="2025-03-01T10:00:00Z",
        size=len(data),
        mtime_ns=MTIME,
    )


LONG = "\n\n".join(
    f"## Step {n}\n\n- check the token family {n}\n- revoke on reuse\n\n```sh\nrotate --id {n}\n```"
    for n in range(12)
)


def one_by_one(connection: Connection, collection: str, items: list[BulkDocument]) -> list[int]:
    """The reference: what the writer did before the bulk path, one document at a time."""
    ids: list[int] = []
    for document in items:
        row = connection.execute(
            "SELECT id, hash, active, forgotten_hash FROM documents "
            "WHERE collection = ? AND path = ?",
            (collection, document.path),
        ).fetchone()
        if row is not None and row[1] == document.hash and (row[2] or row[3] is not None):
            continue
        quality = quality_score(document.parsed.body, bool(document.parsed.frontmatter_span))
        item = _prepared(document, quality)
        item.fragments = None  # cut by _store_content, for a body the vault lacks
        _store_content(connection, item, NOW)
        if row is None:
            ids.append(_insert_document(connection, collection, item, NOW))
        else:
            _write_document(connection, row[0], item, collection, NOW, revision=row[1] != item.hash)
            ids.append(int(row[0]))
    return ids


def snapshot(connection: Connection) -> dict[str, Any]:
    def rows(sql: str) -> list[list[Any]]:
        return [
            [bytes(v).hex() if isinstance(v, bytes) else v for v in r]
            for r in connection.execute(sql)
        ]

    return {
        "documents": rows(
            "SELECT id, collection, path, title, hash, docid, content_type, quality_score, "
            "confidence, created_at, modified_at, authored_at, active, tags, body_length, "
            "file_size, file_mtime_ns, revision_count, forgotten_hash FROM documents ORDER BY id"
        ),
        "content": rows("SELECT hash, doc, created_at FROM content ORDER BY hash"),
        "fragments": rows("SELECT * FROM fragments ORDER BY hash, seq"),
        "vocab": rows("SELECT term, doc, cnt FROM documents_vocab ORDER BY term"),
        "docsize": rows("SELECT id, sz FROM documents_fts_docsize ORDER BY id"),
    }


BATCHES = [
    [
        note("a/1.md", "How do we rotate the refresh tokens? " + LONG),
        note("a/2.md", "Same body twice, so the docids collide."),
        note("a/3.md", "Same body twice, so the docids collide."),
        note("a/4.md", "The first version of an exchange that changes in this batch."),
        note("a/4.md", "The second version of it, later in the same batch."),
        note("a/5.md", "An exchange forgotten after this run."),
        note("a/6.md", "An exchange deactivated after this run, then mined again."),
    ],
    [
        note("a/1.md", "How do we rotate the refresh tokens? " + LONG),  # unchanged
        note("a/2.md", "Edited: a new body for a settled row."),
        note("a/5.md", "An exchange forgotten after this run."),  # forgotten: left alone
        note("a/6.md", "An exchange deactivated after this run, then mined again."),
        note("b/1.md", "Same body twice, so the docids collide."),  # a third copy
        note("b/2.md", "A new exchange in the second batch. " + LONG[:900]),
    ],
]


def test_write_bulk_writes_what_the_one_by_one_path_writes(tmp_path: Path) -> None:
    results: list[tuple[list[list[int]], dict[str, Any]]] = []
    for name, write in (("bulk", None), ("reference", one_by_one)):
        with Vault.open(tmp_path / f"{name}.sqlite", config_dir=tmp_path / name) as vault:
            connection = vault._connection
            written: list[list[int]] = []
            for number, batch in enumerate(BATCHES):
                with write_transaction(connection):
                    if write is None:
                        done = write_bulk(connection, "conversations", batch, NOW)
                        written.append(done.ids)
                    else:
                        written.append(write(connection, "conversations", batch))
                if number == 0:
                    with write_transaction(connection):
                        five, six = (
                            connection.execute(
                                "SELECT id, hash FROM documents WHERE path = ?", (path,)
                            ).fetchone()
                            for path in ("a/5.md", "a/6.md")
                        )
                        deactivate_documents(connection, [five[0], six[0]])
                        connection.execute(
                            "UPDATE documents SET forgotten_hash = ? WHERE id = ?", five[::-1]
                        )
            results.append((written, snapshot(connection)))
    (bulk_ids, bulk), (reference_ids, reference) = results
    assert bulk_ids == reference_ids
    assert bulk == reference
    docids = sorted(row[5] for row in bulk["documents"])
    assert len(set(docids)) == len(docids) == 8  # collisions took the next free places
    assert sum(1 for row in bulk["documents"] if row[12]) == 7  # a/5.md stays forgotten


def test_write_bulk_counts_what_it_left_alone(tmp_path: Path) -> None:
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "config") as vault:
        batch = BATCHES[0][:3]
        with write_transaction(vault._connection):
            first = write_bulk(vault._connection, "conversations", batch, NOW)
        with write_transaction(vault._connection):
            again = write_bulk(vault._connection, "conversations", batch, NOW)
    assert (len(first.ids), first.unchanged, first.rewritten) == (3, 0, 0)
    assert (again.ids, again.unchanged, again.rewritten) == ([], 3, 0)


def prompts(count: int, *, rewind_at: int | None = None) -> list[str]:
    lines: list[str] = []
    parent = None
    for n in range(count):
        if rewind_at is not None and n == rewind_at:
            parent = f"a{n - 2}"  # back to before prompt n - 1: that one is abandoned
        lines.append(line(f"u{n}", parent, "user", f"Question {n}: how do we rotate tokens?", n))
        lines.append(line(f"a{n}", f"u{n}", "assistant", f"Answer {n}: on every use.", n))
        parent = f"a{n}"
    return lines


class RecordingLock:
    """A lock that says which threads hold it, and how often it was taken."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.holders: list[int] = []
        self.taken = 0

    def __enter__(self) -> RecordingLock:
        self._lock.acquire()
        self.holders.append(threading.get_ident())
        self.taken += 1
        return self

    def __exit__(self, *_: object) -> None:
        self.holders.remove(threading.get_ident())
        self._lock.release()


def test_the_lock_is_taken_per_batch_and_never_while_reading(tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    folder.mkdir()
    (folder / "session-1.jsonl").write_text("\n".join(prompts(9)) + "\n", encoding="utf-8")
    lock = RecordingLock()
    held_while_preparing: list[bool] = []

    def redact(text: str) -> str:  # documents are prepared outside the lock
        held_while_preparing.append(threading.get_ident() in lock.holders)
        return text

    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "config") as vault:
        report = mine_folder(
            vault._connection, folder, "conversations", redact, NOW, batch_size=2, lock=lock
        )
        assert vault._connection.execute("SELECT COUNT(*) FROM documents").fetchone()[0] == 9
    assert (report.exchanges, report.written, len(report.document_ids)) == (9, 9, 9)
    assert held_while_preparing == [False] * 9
    # ceil(9 / 2) batches, and one read of the collection's titles (twins, see mine.twins)
    assert lock.taken == 6 and lock.holders == []


def test_a_failed_batch_fails_the_run_and_keeps_the_batches_before_it(tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    folder.mkdir()
    (folder / "session-1.jsonl").write_text("\n".join(prompts(9)) + "\n", encoding="utf-8")

    class FailingLock(RecordingLock):
        def __enter__(self) -> RecordingLock:
            if self.taken == 3:  # the titles' read, two batches, then the third batch
                raise VaultBusyError("the vault stayed locked by another process; try again")
            return super().__enter__()

    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "config") as vault:
        with pytest.raises(VaultBusyError):
            mine_folder(
                vault._connection, folder, "c", vault.redact, NOW, batch_size=2, lock=FailingLock()
            )
        count = vault._connection.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
        assert count == 4 and not vault._connection.in_transaction
        assert vault.mining.mine(folder, "c").written == 5  # a rerun writes the rest


def test_a_run_that_retired_exchanges_recounts_the_fts_totals(tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    folder.mkdir()
    path = folder / "session-1.jsonl"
    path.write_text("\n".join(prompts(6)) + "\n", encoding="utf-8")
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "config") as vault:
        assert vault.mining.mine(folder).written == 6
        path.write_text("\n".join(prompts(7, rewind_at=6)) + "\n", encoding="utf-8")
        report = vault.mining.mine(folder)
        assert (report.written, report.retired) == (1, 1)
        assert not fts_totals_drifted(vault._connection, "documents_fts")


def test_batch_size_does_not_change_what_is_written(tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    folder.mkdir()
    (folder / "session-1.jsonl").write_text("\n".join(prompts(7)) + "\n", encoding="utf-8")
    snapshots = []
    for batch_size in (1, 3, 1000):
        config = tmp_path / f"config-{batch_size}"
        with Vault.open(tmp_path / f"{batch_size}.sqlite", config_dir=config) as vault:
            mine_folder(vault._connection, folder, "c", vault.redact, NOW, batch_size=batch_size)
            snapshots.append(snapshot(vault._connection))
    assert len(snapshots[0]["documents"]) == 7
    assert snapshots[0] == snapshots[1] == snapshots[2]
