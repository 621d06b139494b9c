from __future__ import annotations

import json
import os
import re
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memtrove import Vault
from memtrove.index.indexer import update_collections
from memtrove.results import UpdateReport
from tests.conftest import write

DECISION = """---
title: Use PostgreSQL for metadata
type: decision
date: 2026-03-15
tags: [database, storage]
---
# ADR 1

## Context
We compared SQLite and PostgreSQL for concurrent writers.

## Decision
We decided on PostgreSQL because of concurrent writes.
"""


def _rows(vault: Vault) -> dict[str, tuple[Any, ...]]:
    rows = vault._connection.execute(
        "SELECT path, id, active, hash, revision_count, pinned FROM documents"
    ).fetchall()
    return {row[0]: tuple(row[1:]) for row in rows}


def test_add_update_counts_and_metadata(vault: Vault, notes: Path) -> None:
    write(notes, "decisions/pg.md", DECISION)
    write(notes, "a.md", "# Alpha\n\nalpha words here")
    write(notes, "nested/deep/b.md", "no heading at all, just beta words")
    write(notes, "skip.txt", "not markdown")
    vault.add_collection(notes, name="notes")
    report = vault.update()
    assert (report.added, report.updated, report.unchanged, report.removed) == (3, 0, 0, 0)
    assert report.summary == "+3 ~0 =0 -0"
    document = vault.get("notes/decisions/pg.md")
    assert document.title == "Use PostgreSQL for metadata"
    assert document.content_type == "decision"
    assert document.confidence == 0.85
    assert document.authored_at == "2026-03-15T00:00:00Z"
    assert document.quality_score >= 0.5
    assert document.docid == document.hash[:6]
    assert vault.get("notes/a.md").title == "Alpha"
    assert vault.get("notes/nested/deep/b.md").title == "b"
    assert vault.get("#" + document.docid).path == "decisions/pg.md"


def test_unchanged_files_cost_a_stat_not_a_read(
    vault: Vault, notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for index in range(20):
        write(notes, f"n{index}.md", f"# Note {index}\n\nbody {index}")
    vault.add_collection(notes, name="notes")
    vault.update()
    opened: list[str] = []
    real_open = os.open

    def spying_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        # files are opened one folder at a time from the collection's (openat)
        if re.fullmatch(r"n\d+\.md", os.path.basename(str(file))):
            opened.append(os.path.basename(str(file)))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", spying_open)
    report = vault.update()
    assert report.unchanged == 20 and report.added == report.updated == 0
    assert opened == []
    write(notes, "n3.md", "# Note 3\n\nchanged body")
    report = vault.update()
    assert (report.updated, report.unchanged) == (1, 19)
    assert opened == ["n3.md"]


def test_touched_but_identical_file_is_unchanged(vault: Vault, notes: Path) -> None:
    path = write(notes, "a.md", "# A\n\nsame")
    vault.add_collection(notes, name="notes")
    vault.update()
    os.utime(path, ns=(1, 1))
    report = vault.update()
    assert (report.unchanged, report.updated) == (1, 0)


def test_modified_file_is_updated_and_counts_a_revision(vault: Vault, notes: Path) -> None:
    write(notes, "a.md", "# A\n\nfirst version about kittens")
    vault.add_collection(notes, name="notes")
    vault.update()
    before = _rows(vault)["a.md"]
    write(notes, "a.md", "# A\n\nsecond version about puppies, longer now")
    report = vault.update()
    after = _rows(vault)["a.md"]
    assert report.updated == 1
    assert after[0] == before[0] and after[3] == before[3] + 1
    assert [r.path for r in vault.search("puppies")] == ["a.md"]
    assert vault.search("kittens") == []
    # the earlier body is still stored, addressed by its hash
    old = vault._connection.execute("SELECT doc FROM content WHERE hash = ?", (before[2],))
    assert "kittens" in old.fetchone()[0]


def test_deleted_file_is_deactivated_not_deleted_and_comes_back(vault: Vault, notes: Path) -> None:
    path = write(notes, "gone.md", "# Gone\n\nephemeral walrus")
    vault.add_collection(notes, name="notes")
    vault.update()
    path.unlink()
    report = vault.update()
    assert report.removed == 1
    assert _rows(vault)["gone.md"][1] == 0
    assert vault.search("walrus") == []
    write(notes, "gone.md", "# Gone\n\nephemeral walrus")
    report = vault.update()
    assert report.added == 1
    assert [r.path for r in vault.search("walrus")] == ["gone.md"]


def test_rename_keeps_the_document_row_and_its_history(vault: Vault, notes: Path) -> None:
    write(notes, "old-name.md", "# Tapir facts\n\nThe tapir is a large herbivore.")
    vault.add_collection(notes, name="notes")
    vault.update()
    old_id = _rows(vault)["old-name.md"][0]
    vault._connection.execute(
        "UPDATE documents SET pinned = 1, access_count = 7 WHERE id = ?", (old_id,)
    )
    (notes / "renamed").mkdir()
    os.rename(notes / "old-name.md", notes / "renamed" / "new-name.md")
    report = vault.update()
    assert (report.renamed, report.added, report.removed) == (1, 0, 0)
    rows = _rows(vault)
    assert "old-name.md" not in rows
    assert rows["renamed/new-name.md"][0] == old_id and rows["renamed/new-name.md"][4] == 1
    assert [r.path for r in vault.search("tapir")] == ["renamed/new-name.md"]


def test_bad_files_are_skipped_or_noted_with_a_reason(vault: Vault, notes: Path) -> None:
    write(notes, "binary.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR" + bytes(range(256)))
    big = notes / "big.md"
    with big.open("wb") as handle:
        handle.truncate(5 * 1024 * 1024 + 1)
    write(notes, "latin1.md", "# Caf\xe9\n\nna\xefve bytes".encode("latin-1"))
    write(notes, "badfm.md", "---\ntitle: [unclosed\n---\n# Real title\n\nbody text okapi")
    write(notes, "listfm.md", "---\n- a\n- b\n---\nbody text ocelot")
    write(notes, "good.md", "# Good\n\nfine")
    vault.add_collection(notes, name="notes")
    report = vault.update()
    skipped = {issue.path: issue.reason for issue in report.skipped}
    notices = {issue.path: issue.reason for issue in report.notices}
    assert skipped["binary.md"] == "binary file"
    assert skipped["big.md"].startswith("larger than 5 MB")
    assert "invalid UTF-8" in notices["latin1.md"]
    assert "malformed frontmatter" in notices["badfm.md"]
    assert "malformed frontmatter" in notices["listfm.md"]
    assert report.added == 4
    assert vault.get("notes/latin1.md").body.startswith("# Caf\ufffd")
    assert vault.get("notes/badfm.md").title == "Real title"
    assert [r.path for r in vault.search("okapi")] == ["badfm.md"]
    assert [r.path for r in vault.search("ocelot")] == ["listfm.md"]


def test_file_that_turns_binary_leaves_the_index(vault: Vault, notes: Path) -> None:
    write(notes, "a.md", "# A\n\nquokka")
    vault.add_collection(notes, name="notes")
    vault.update()
    write(notes, "a.md", b"\x00\x01\x02 quokka")
    report = vault.update()
    assert report.removed == 1 and report.skipped[0].reason == "binary file"
    assert vault.search("quokka") == []


def test_read_error_never_deactivates_a_document(
    vault: Vault, notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(notes, "locked.md", "# Locked\n\nnarwhal")
    write(notes, "other.md", "# Other\n\nfine")
    vault.add_collection(notes, name="notes")
    vault.update()
    write(notes, "locked.md", "# Locked\n\nnarwhal, edited")  # changed, so it must be read
    real_open = os.open

    def failing_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file).endswith("locked.md"):
            raise PermissionError(13, "Permission denied")
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", failing_open)
    report = vault.update()
    assert report.removed == 0
    assert {i.path: (i.reason, i.detail) for i in report.skipped} == {
        "locked.md": ("not readable", "Permission denied")
    }
    assert [r.path for r in vault.search("narwhal")] == ["locked.md"]


def test_unlistable_folder_keeps_its_documents(
    vault: Vault, notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(notes, "private/inner.md", "# Inner\n\nplatypus")
    write(notes, "top.md", "# Top\n\nfine")
    vault.add_collection(notes, name="notes")
    vault.update()
    real_scandir = os.scandir

    def failing_scandir(path: Any) -> Any:
        if str(path).endswith("private"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", failing_scandir)
    report = vault.update()
    assert report.removed == 0
    assert any("folder not readable" in issue.reason for issue in report.skipped)
    assert [r.path for r in vault.search("platypus")] == ["private/inner.md"]


def test_missing_collection_folder_warns_and_keeps_documents(vault: Vault, notes: Path) -> None:
    write(notes, "a.md", "# A\n\nwombat")
    vault.add_collection(notes, name="notes")
    vault.update()
    notes.rename(notes.with_name("moved-away"))
    report = vault.update()
    assert report.removed == 0
    assert report.warnings and "does not exist" in report.warnings[0]
    assert [r.path for r in vault.search("wombat")] == ["a.md"]


def test_private_and_excluded_folders_are_never_indexed(vault: Vault, example_copy: Path) -> None:
    write(example_copy, "node_modules/pkg/readme.md", "# Pkg\n\nconfidential zebra")
    write(example_copy, ".obsidian/cache.md", "# Cache\n\nconfidential zebra")
    vault.add_collection(example_copy, name="demo")
    report = vault.update()
    assert report.added >= 25
    assert vault.search("confidential zebra") == []
    assert vault.search('"confidential-zebra"') == []
    paths = {d.path for d in vault.list(1000)}
    assert not any("_PRIVATE" in path or "node_modules" in path for path in paths)


def test_symlinks_are_not_followed(vault: Vault, notes: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "secret.md", "# Secret\n\naardvark")
    (notes / "linked").symlink_to(outside, target_is_directory=True)
    (notes / "file-link.md").symlink_to(outside / "secret.md")
    write(notes, "real.md", "# Real\n\nfine")
    vault.add_collection(notes, name="notes")
    report = vault.update()
    assert report.added == 1
    assert vault.search("aardvark") == []
    assert any(i.path == "file-link.md" and "symbolic link" in i.reason for i in report.skipped)


def test_batches_and_progress(vault: Vault, notes: Path) -> None:
    for index in range(450):
        write(notes, f"n{index:03}.md", f"# Note {index}\n\nshared lemur {index}")
    vault.add_collection(notes, name="notes")
    calls: list[tuple[int, int]] = []
    report = vault.update(progress=lambda done, total, _: calls.append((done, total)))
    assert report.added == 450
    assert calls[-1] == (450, 450) and len(calls) == 3
    assert len(vault.search("lemur", limit=1000)) == 450


def test_identical_bodies_share_content_and_fragments(vault: Vault, notes: Path) -> None:
    text = "# Twin\n\n" + "identical body about axolotls. " * 20
    write(notes, "one.md", text)
    write(notes, "two.md", text)
    vault.add_collection(notes, name="notes")
    vault.update()
    connection = vault._connection
    assert connection.execute("SELECT COUNT(*) FROM content").fetchone()[0] == 1
    (found,) = vault.search("axolotls")  # identical copies are shown once
    assert sorted([f"notes/{found.path}", *found.also_at]) == ["notes/one.md", "notes/two.md"]
    assert vault.get("notes/two.md").body == text


def test_remove_collection_deactivates_its_documents(vault: Vault, notes: Path) -> None:
    write(notes, "a.md", "# A\n\nmarmoset")
    vault.add_collection(notes, name="notes")
    vault.update()
    vault.remove_collection("notes")
    assert vault.search("marmoset") == []
    assert vault.collections() == []


# -- exclude globs and skip reasons -----------------------------------------------------------


def set_exclude(vault: Vault, name: str, globs: list[str]) -> None:
    with vault._collections.editing() as data:
        data["collections"][name]["exclude"] = globs


def test_a_file_that_becomes_excluded_is_deactivated_and_comes_back(
    vault: Vault, notes: Path
) -> None:
    write(notes, "guide.md", "# Guide\n\nthe axolotl guide")
    write(notes, "guide.ru.md", "# Guide\n\nthe axolotl guide, in Russian")
    write(notes, "i18n/de/guide.md", "# Guide\n\nthe axolotl guide, in German")
    vault.add_collection(notes, name="notes")
    assert vault.update().added == 3
    set_exclude(vault, "notes", ["**/*.ru.md", "i18n/"])
    report = vault.update()
    assert (report.removed, report.unchanged) == (2, 1)
    assert report.skipped_by_reason == {"excluded by pattern": 2}
    assert _rows(vault)["guide.ru.md"][1] == 0 and _rows(vault)["i18n/de/guide.md"][1] == 0
    assert [r.path for r in vault.search("axolotl")] == ["guide.md"]
    again = vault.update()  # still reported, nothing more to remove
    assert again.removed == 0 and len(again.skipped) == 2
    set_exclude(vault, "notes", [])
    back = vault.update()
    assert back.added == 2 and back.skipped == []
    assert len(vault.search("axolotl")) == 3


def test_excluded_at_the_first_update_is_never_indexed(vault: Vault, notes: Path) -> None:
    write(notes, "a.md", "# A\n\nfine")
    write(notes, "vendor-docs/b.md", "# B\n\nvendored")
    vault.add_collection(notes, name="notes", exclude=["vendor-docs/**"])
    report = vault.update()
    assert report.added == 1 and [str(i) for i in report.skipped] == [
        "notes/vendor-docs/b.md: excluded by pattern"
    ]
    assert "vendor-docs/b.md" not in _rows(vault)


def test_skip_reasons_are_a_fixed_set_with_details_apart(vault: Vault, notes: Path) -> None:
    from memtrove.results import SkipReason

    write(notes, "bin.md", b"\x00\x01")
    big = notes / "big.md"
    with big.open("wb") as handle:
        handle.truncate(5 * 1024 * 1024 + 1)
    write(notes, "x.ru.md", "x")
    write(notes, "y.ru.md", "y")
    vault.add_collection(notes, name="notes", exclude=["*.ru.md"])
    report = vault.update()
    assert {issue.reason for issue in report.skipped} <= set(SkipReason)
    assert report.skipped_by_reason == {
        "excluded by pattern": 2,
        "binary file": 1,
        "larger than 5 MB": 1,
    }
    assert {i.path: i.detail for i in report.skipped}["big.md"] == "5,242,881 bytes"
    data = report.to_dict()
    assert data["skipped_by_reason"] == report.skipped_by_reason
    assert {"collection", "path", "reason", "detail"} == set(data["skipped"][0])


# -- hostile files: odd names and kinds, and files that change under the scan -----------------


def test_odd_names_and_kinds_are_skipped_and_every_collection_indexed(
    vault: Vault, notes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(notes, "good.md", "# Good\n\nbody about capybaras")
    with open(os.fsencode(notes) + b"/bad\xff.md", "wb") as handle:
        handle.write(b"# Bad name\n\ncapybaras too")
    os.mkfifo(notes / "pipe.md")
    other = tmp_path / "other"
    write(other, "x.md", "# Other\n\nanother collection about capybaras")
    vault.add_collection(notes, name="notes")
    vault.add_collection(other, name="other")
    monkeypatch.chdir(notes)
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind("sock.md")
        report = vault.update()
    assert report.added == 2
    assert report.skipped_by_reason == {"name not valid UTF-8": 1, "not a regular file": 2}
    assert {i.path: i.detail for i in report.skipped} == {
        "bad\ufffd.md": "", "pipe.md": "FIFO", "sock.md": "socket"
    }  # fmt: skip
    assert sorted(r.path for r in vault.search("capybaras")) == ["good.md", "x.md"]
    json.dumps(report.to_dict(), ensure_ascii=False).encode("utf-8")


def _race(vault: Vault, notes: Path, change: Callable[[Path], None]) -> UpdateReport:
    """Update ``notes`` one file per batch, calling ``change(b.md)`` after a.md's batch:
    b.md was listed (and stat'ed) but is not read yet."""
    done: list[int] = []

    def progress(count: int, total: int, path: str) -> None:
        if not done:
            change(notes / "b.md")
        done.append(count)

    collection = next(c for c in vault.collections() if c.name == "notes")
    return update_collections(vault._connection, [collection], progress=progress, batch_size=1)


def test_a_file_that_vanishes_before_it_is_read_keeps_its_document(
    vault: Vault, notes: Path
) -> None:
    write(notes, "a.md", "# A\n\nfirst")
    write(notes, "b.md", "# B\n\nmarmoset")
    vault.add_collection(notes, name="notes")
    vault.update()
    write(notes, "a.md", "# A\n\nfirst, edited")
    write(notes, "b.md", "# B\n\nmarmoset, edited")  # changed: it must be read
    report = _race(vault, notes, Path.unlink)
    assert report.removed == 0 and report.updated == 1
    assert [(i.path, i.reason, i.detail) for i in report.skipped] == [
        ("b.md", "not readable", "No such file or directory")
    ]
    assert [r.path for r in vault.search("marmoset")] == ["b.md"]  # kept as it was
    assert vault.update().removed == 1  # gone for good: the next update lets it go


def test_a_file_replaced_by_a_fifo_before_it_is_read_is_never_opened_for_reading(
    vault: Vault, notes: Path
) -> None:
    write(notes, "a.md", "# A\n\nfirst")
    write(notes, "b.md", "# B\n\nsecond")
    vault.add_collection(notes, name="notes")

    def to_fifo(path: Path) -> None:
        path.unlink()
        os.mkfifo(path)  # with no writer, a plain open() would block forever

    report = _race(vault, notes, to_fifo)
    assert report.added == 1
    assert [(i.path, i.reason, i.detail) for i in report.skipped] == [
        ("b.md", "not a regular file", "FIFO")
    ]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_a_file_without_read_permission_keeps_its_document(vault: Vault, notes: Path) -> None:
    write(notes, "locked.md", "# Locked\n\nnarwhal")
    vault.add_collection(notes, name="notes")
    vault.update()
    locked = write(notes, "locked.md", "# Locked\n\nnarwhal, edited")
    locked.chmod(0)
    try:
        report = vault.update()
    finally:
        locked.chmod(0o644)
    assert report.removed == 0
    assert [(i.path, i.reason) for i in report.skipped] == [("locked.md", "not readable")]
    assert [r.path for r in vault.search("narwhal")] == ["locked.md"]
