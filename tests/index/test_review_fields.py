"""Frontmatter ``review_by``, ``domain`` and ``workstream``: stored by ``update``, shown by
``get``, carried by export and import, and a past ``review_by`` makes a document stale."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.db.connection import write_transaction
from memtrove.db.schema import migrations_for
from tests.conftest import write

NOW = datetime(2030, 6, 1, 12, tzinfo=UTC)
MIGRATION = "m027_review_fields"


def note(title: str, **fields: str) -> str:
    head = "".join(f"{key}: {value}\n" for key, value in fields.items())
    return f"---\n{head}---\n# {title}\n\nWords about {title.lower()} for the reviewers.\n"


def fields(vault: Vault, ref: str) -> tuple[str | None, str | None, str | None]:
    document = vault.get(ref)
    return document.review_by, document.domain, document.workstream


def stale(vault: Vault) -> list[str]:
    return [f"{d.collection}/{d.path}" for d in vault.stale_documents(50)]


@pytest.fixture
def clocked(vault: Vault) -> Vault:
    vault._clock = lambda: NOW
    return vault


def test_the_fields_are_stored_and_shown(vault: Vault, notes: Path) -> None:
    write(notes, "runbook.md", note("Runbook", review_by="2030-05-01", domain="auth",
                                    workstream="  mobile\n  sync  "))  # fmt: skip
    write(notes, "quoted.md", note("Quoted", review_by='"2030-07-04"', domain="42"))
    write(notes, "moment.md", note("Moment", review_by="2030-05-01T23:30:00-05:00"))
    write(notes, "plain.md", "# Plain\n\nNo frontmatter at all in this note.\n")
    vault.add_collection(notes, name="notes")
    report = vault.update()
    assert report.notices == []
    assert fields(vault, "notes/runbook.md") == ("2030-05-01", "auth", "mobile sync")
    assert fields(vault, "notes/quoted.md") == ("2030-07-04", "42", None)
    assert fields(vault, "notes/moment.md") == ("2030-05-01", None, None)  # the date written
    assert fields(vault, "notes/plain.md") == (None, None, None)
    shown = vault.get("notes/runbook.md").to_dict()
    assert (shown["review_by"], shown["domain"], shown["workstream"]) == (
        "2030-05-01", "auth", "mobile sync"
    )  # fmt: skip


def test_bad_values_are_noticed_and_left_out(vault: Vault, notes: Path) -> None:
    write(notes, "bad.md", note("Bad", review_by="next week", domain="[a, b]",
                                workstream="{x: 1}"))  # fmt: skip
    write(notes, "month.md", note("Month", review_by='"2030-02-30"', domain="yes"))
    write(notes, "long.md", note("Long", domain="d" * 500, workstream='"\\e[31mred\\e[0m\\u200b"'))
    vault.add_collection(notes, name="notes")
    report = vault.update()
    assert report.added == 3 and report.skipped == []
    issues = sorted(str(issue) for issue in report.notices)
    assert issues == [
        "notes/bad.md: frontmatter domain (a list) is not text; domain ignored",
        "notes/bad.md: frontmatter review_by 'next week' is not a date (YYYY-MM-DD); "
        "review_by ignored",
        "notes/bad.md: frontmatter workstream (a dict) is not text; workstream ignored",
        "notes/month.md: frontmatter domain True is not text; domain ignored",
        "notes/month.md: frontmatter review_by '2030-02-30' is not a date (YYYY-MM-DD); "
        "review_by ignored",
    ]
    assert fields(vault, "notes/bad.md") == (None, None, None)
    assert fields(vault, "notes/month.md") == (None, None, None)
    review_by, domain, workstream = fields(vault, "notes/long.md")
    assert review_by is None and domain == "d" * 100
    assert workstream is not None and "\x1b" not in workstream and "red" in workstream
    assert vault.search("reviewers")  # every note was indexed


def test_an_edit_changes_or_clears_the_fields(vault: Vault, notes: Path) -> None:
    path = write(notes, "runbook.md", note("Runbook", review_by="2030-05-01", domain="auth"))
    vault.add_collection(notes, name="notes")
    vault.update()
    path.write_text(note("Runbook", review_by="2031-01-31", workstream="billing"))
    assert vault.update().updated == 1
    assert fields(vault, "notes/runbook.md") == ("2031-01-31", None, "billing")
    path.write_text("# Runbook\n\nNo review planned any more.\n")
    vault.update()
    assert fields(vault, "notes/runbook.md") == (None, None, None)


def test_a_passed_review_by_is_stale_whatever_the_collection_says(
    clocked: Vault, tmp_path: Path
) -> None:
    manual = tmp_path / "manual"
    write(manual, "due.md", note("Due", review_by="2030-05-01"))
    write(manual, "today.md", note("Today", review_by="2030-06-01"))
    write(manual, "later.md", note("Later", review_by="2030-06-02"))
    write(manual, "pinned.md", note("Pinned", review_by="2029-01-01"))
    write(manual, "snoozed.md", note("Snoozed", review_by="2029-01-01"))
    write(manual, "plain.md", note("Plain"))
    clocked.add_collection(manual, name="manual", stale_after_days=None)  # never, by age
    clocked.update()
    clocked.curation.pin("manual/pinned.md")
    clocked.curation.snooze("manual/snoozed.md", "2030-07-01")
    assert stale(clocked) == ["manual/due.md", "manual/today.md"]
    assert clocked.documents.index_stats().stale_documents == 2


def test_documents_due_for_review_come_first_and_count_once(clocked: Vault, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    write(logs, "old.md", note("Old", date="2029-01-01"))
    write(logs, "older.md", note("Older", date="2028-01-01", review_by="2030-05-20"))
    write(logs, "fresh.md", note("Fresh", date="2030-05-30", review_by="2030-05-10"))
    clocked.add_collection(logs, name="logs", stale_after_days=30)
    clocked.update()
    # due by review_by first (earliest date first), then the rest oldest first
    assert stale(clocked) == ["logs/fresh.md", "logs/older.md", "logs/old.md"]
    assert clocked.documents.index_stats().stale_documents == 3  # older.md both ways: once


def test_export_and_import_carry_the_fields(vault: Vault, notes: Path, tmp_path: Path) -> None:
    write(notes, "runbook.md", note("Runbook", review_by="2030-05-01", domain="auth",
                                    workstream="mobile"))  # fmt: skip
    vault.add_collection(notes, name="notes")
    vault.update()
    vault.portable.export_to(tmp_path / "vault.jsonl")
    with Vault.open(tmp_path / "copy.sqlite", config_dir=tmp_path / "copy-config") as copy:
        copy.portable.import_from(tmp_path / "vault.jsonl", folders={"notes": notes})
        assert fields(copy, "notes/runbook.md") == ("2030-05-01", "auth", "mobile")
        assert copy.update().added == 0


def test_documents_indexed_before_the_fields_existed_get_them_on_the_next_update(
    vault: Vault, notes: Path
) -> None:
    """What m027 does to a vault that indexed the files before it: the next update reads
    the files whose frontmatter names a field again, and fills it without a rewrite."""
    write(notes, "runbook.md", note("Runbook", review_by="2030-05-01", domain="auth"))
    write(notes, "plain.md", note("Plain", tags="[a]"))
    vault.add_collection(notes, name="notes")
    vault.update()
    connection = vault._connection
    with write_transaction(connection):  # the vault as m026 left it: no fields yet
        connection.execute(
            "UPDATE documents SET review_by = NULL, domain = NULL, workstream = NULL"
        )
    [statements] = [s for name, s in migrations_for(connection.dialect) if name == MIGRATION]
    with write_transaction(connection):  # the migration's last step: marks for re-reading
        connection.execute(str(statements[-1]))
    marked = connection.execute(
        "SELECT path FROM documents WHERE file_mtime_ns IS NULL ORDER BY path"
    ).fetchall()
    assert [row[0] for row in marked] == ["runbook.md"]
    report = vault.update()
    assert (report.added, report.updated, report.unchanged) == (0, 0, 2)
    assert fields(vault, "notes/runbook.md") == ("2030-05-01", "auth", None)
