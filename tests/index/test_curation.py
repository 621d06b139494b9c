"""Pin, snooze and forget: unknown refs, idempotence, snooze dates, forget across updates."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtrove import DocumentNotFoundError, InvalidQueryError, Vault
from memtrove.index.curation import parse_snooze_until
from tests.conftest import text_rows, write

NOW = datetime(2026, 3, 10, 12, 0, 0, tzinfo=UTC)


@pytest.fixture
def indexed(vault: Vault, notes: Path) -> Vault:
    write(notes, "auth.md", "# Auth tokens\n\nRefresh token rotation revokes the old token.\n")
    write(notes, "wal.md", "# SQLite WAL\n\nWrite-ahead logging keeps readers going.\n")
    write(notes, "deep/bread.md", "# Banana bread\n\nMash bananas, add flour, bake.\n")
    vault.add_collection(notes, name="notes")
    vault.update()
    return vault


def fts_rows(vault: Vault, doc_id: int) -> int:
    return text_rows(vault._connection, "documents", doc_id)


# -- snooze dates ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-03-10", "2026-03-10T23:59:59Z"),  # a bare date is the end of that day, even today
        (" 2026-04-01 ", "2026-04-01T23:59:59Z"),
        ("2026-03-10T12:00:01Z", "2026-03-10T12:00:01Z"),
        ("2026-03-11T09:30:00", "2026-03-11T09:30:00Z"),  # no zone: UTC
        ("2026-03-11T09:30:00+02:00", "2026-03-11T07:30:00Z"),
        (None, None),
        ("", None),
        ("   ", None),
    ],
)
def test_snooze_until_parsing(value: str | None, expected: str | None) -> None:
    assert parse_snooze_until(value, NOW) == expected


@pytest.mark.parametrize(
    "value",
    [
        "2026-03-09",
        "2020-01-01T00:00:00Z",
        "2026-03-10T11:59:59Z",
        "2026-03-10T14:00:00+02:00",  # exactly now
    ],
)
def test_past_snooze_dates_are_refused(value: str) -> None:
    with pytest.raises(InvalidQueryError, match="not in the future"):
        parse_snooze_until(value, NOW)


@pytest.mark.parametrize("value", ["tomorrow", "2026-13-01", "10/03/2026", "2026-03-10T25:00"])
def test_snooze_garbage_is_refused(value: str) -> None:
    with pytest.raises(InvalidQueryError, match="ISO date"):
        parse_snooze_until(value, NOW)


def test_snooze_and_unsnooze(indexed: Vault) -> None:
    indexed._clock = lambda: NOW
    snoozed = indexed.curation.snooze("notes/auth.md", "2026-04-01")
    assert snoozed.snoozed_until == "2026-04-01T23:59:59Z"
    assert indexed.get("notes/auth.md").snoozed_until == "2026-04-01T23:59:59Z"
    assert indexed.lifecycle.status().snoozed == 1
    # still searchable: snoozing only matters to context surfacing
    assert indexed.search("refresh token rotation")[0].path == "auth.md"
    assert (
        indexed.curation.snooze("notes/auth.md", "2026-04-01").snoozed_until
        == "2026-04-01T23:59:59Z"
    )
    with pytest.raises(InvalidQueryError):
        indexed.curation.snooze("notes/auth.md", "2026-03-01")
    assert indexed.get("notes/auth.md").snoozed_until == "2026-04-01T23:59:59Z"  # unchanged
    assert indexed.curation.snooze("notes/auth.md").snoozed_until is None
    assert indexed.get("notes/auth.md").snoozed_until is None
    assert indexed.lifecycle.status().snoozed == 0


def test_expired_snooze_is_not_counted(indexed: Vault) -> None:
    indexed._clock = lambda: NOW
    indexed.curation.snooze("notes/auth.md", "2026-03-11")
    indexed._clock = lambda: datetime(2026, 3, 12, tzinfo=UTC)
    assert indexed.lifecycle.status().snoozed == 0


# -- pin ------------------------------------------------------------------------------------


def test_pin_is_idempotent_and_reversible(indexed: Vault) -> None:
    document = indexed.get("notes/wal.md")
    assert not document.pinned
    assert indexed.curation.pin("#" + document.docid).pinned
    assert indexed.curation.pin(document.docid).pinned  # twice: still pinned
    assert indexed.get("notes/wal.md").pinned
    assert indexed.lifecycle.status().pinned == 1
    assert not indexed.curation.pin("memtrove://notes/wal.md", unpin=True).pinned
    assert not indexed.curation.pin("notes/wal.md", unpin=True).pinned
    assert not indexed.get("notes/wal.md").pinned


@pytest.mark.parametrize("reference", ["#000000", "notes/nope.md", "nope/auth.md", "", "zzz"])
def test_unknown_references_are_not_found(indexed: Vault, reference: str) -> None:
    actions: list[Callable[[], object]] = [
        lambda: indexed.curation.pin(reference),
        lambda: indexed.curation.pin(reference, unpin=True),
        lambda: indexed.curation.snooze(reference, "2999-01-01"),
        lambda: indexed.curation.snooze(reference),
        lambda: indexed.curation.forget(reference),
    ]
    for action in actions:
        with pytest.raises(DocumentNotFoundError):
            action()
    assert indexed.lifecycle.status().active == 3


# -- forget ---------------------------------------------------------------------------------


def test_forget_deactivates_and_is_idempotent(indexed: Vault) -> None:
    document = indexed.get("notes/auth.md")
    assert fts_rows(indexed, document.doc_id) == 1
    forgotten = indexed.curation.forget("notes/auth.md")
    assert forgotten.doc_id == document.doc_id and not forgotten.active
    assert fts_rows(indexed, document.doc_id) == 0
    with pytest.raises(DocumentNotFoundError):
        indexed.get("notes/auth.md")
    again = indexed.curation.forget("notes/auth.md")  # an inactive document can still be named
    assert again.doc_id == document.doc_id and not again.active
    assert indexed.curation.forget("#" + document.docid).doc_id == document.doc_id
    assert indexed.search("refresh token rotation") == []
    status = indexed.lifecycle.status()
    assert (status.active, status.inactive) == (2, 1)
    body = indexed._connection.execute(
        "SELECT COUNT(*) FROM content WHERE hash = ?", (document.hash,)
    ).fetchone()[0]
    assert body == 1  # the text stays in the vault


def test_update_does_not_bring_a_forgotten_document_back(indexed: Vault, notes: Path) -> None:
    doc_id = indexed.curation.forget("notes/auth.md").doc_id
    report = indexed.update()
    assert (report.added, report.updated, report.removed) == (0, 0, 0)
    assert report.unchanged == 3
    # touched but not changed: read again, still forgotten
    os.utime(notes / "auth.md", (1_700_000_000, 1_700_000_000))
    report = indexed.update()
    assert (report.added, report.updated) == (0, 0)
    assert indexed.search("refresh token rotation") == []
    assert fts_rows(indexed, doc_id) == 0


def test_changed_content_brings_a_forgotten_document_back(indexed: Vault, notes: Path) -> None:
    doc_id = indexed.curation.forget("notes/auth.md").doc_id
    write(notes, "auth.md", "# Auth tokens\n\nRefresh token rotation, now with reuse detection.\n")
    report = indexed.update()
    assert report.added == 1
    document = indexed.get("notes/auth.md")
    assert document.doc_id == doc_id and document.active
    assert [r.path for r in indexed.search("reuse detection")] == ["auth.md"]
    # forgotten again, with the new body: the same rules apply to it
    indexed.curation.forget("notes/auth.md")
    assert indexed.update().added == 0
    assert indexed.search("reuse detection") == []


def test_a_moved_forgotten_file_stays_forgotten(indexed: Vault, notes: Path) -> None:
    doc_id = indexed.curation.forget("notes/auth.md").doc_id
    (notes / "archive").mkdir()
    (notes / "auth.md").rename(notes / "archive" / "auth.md")
    report = indexed.update()
    assert (report.added, report.renamed) == (0, 1)
    assert indexed.search("refresh token rotation") == []
    row = indexed._connection.execute(
        "SELECT path, active FROM documents WHERE id = ?", (doc_id,)
    ).fetchone()
    assert tuple(row) == ("archive/auth.md", 0)
    assert indexed.update().summary == "+0 ~0 =3 -0"


def test_a_forgotten_file_that_disappears_and_returns_stays_forgotten(
    indexed: Vault, notes: Path
) -> None:
    text = (notes / "auth.md").read_text()
    indexed.curation.forget("notes/auth.md")
    (notes / "auth.md").unlink()
    assert indexed.update().removed == 0  # already inactive
    write(notes, "auth.md", text)
    assert indexed.update().added == 0
    assert indexed.search("refresh token rotation") == []


def test_forgetting_a_removed_document_keeps_it_out(indexed: Vault, notes: Path) -> None:
    text = (notes / "wal.md").read_text()
    (notes / "wal.md").unlink()
    assert indexed.update().removed == 1
    assert not indexed.curation.forget("notes/wal.md").active  # inactive documents can be forgotten
    write(notes, "wal.md", text)
    assert indexed.update().added == 0
    assert indexed.search("write-ahead logging") == []


def test_forgotten_documents_stay_out_when_a_collection_is_re_added(
    indexed: Vault, notes: Path
) -> None:
    indexed.curation.forget("notes/auth.md")
    indexed.remove_collection("notes")
    indexed.add_collection(notes, name="notes")
    report = indexed.update()
    assert report.added == 2  # wal.md and bread.md come back, auth.md does not
    assert indexed.search("refresh token rotation") == []
    assert indexed.search("write-ahead logging")
