from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from memtrove import SchemaTooNewError, Vault
from memtrove.db.connection import open_connection, write_transaction
from memtrove.db.migrations import applied_migrations, migrate
from memtrove.db.schema import MIGRATIONS
from tests.conftest import write


def test_new_vault_applies_every_migration_in_order(tmp_path: Path) -> None:
    connection = open_connection(tmp_path / "v.sqlite")
    assert migrate(connection) == [name for name, _ in MIGRATIONS]
    assert applied_migrations(connection) == [name for name, _ in MIGRATIONS]
    assert connection.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert migrate(connection) == []  # idempotent


def test_pragmas_are_set(tmp_path: Path) -> None:
    connection = open_connection(tmp_path / "v.sqlite", busy_timeout_ms=1500)
    assert connection.execute("PRAGMA busy_timeout").fetchone()[0] == 1500
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert connection.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert connection.execute("SELECT vec_version()").fetchone()[0].startswith("v")


def test_failed_migration_rolls_back_and_is_not_recorded(tmp_path: Path) -> None:
    connection = open_connection(tmp_path / "v.sqlite")
    broken = (
        *MIGRATIONS,
        ("m999_broken", ("CREATE TABLE half_done (x INTEGER)", "THIS IS NOT SQL")),
    )
    with pytest.raises(Exception, match="syntax"):
        migrate(connection, broken)
    assert "m999_broken" not in applied_migrations(connection)
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    assert "half_done" not in tables


def test_vault_written_by_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    Vault.open(path, config_dir=tmp_path / "cfg").close()
    connection = open_connection(path)
    with write_transaction(connection):
        connection.execute(
            "INSERT INTO schema_migrations (name, applied_at) VALUES ('m900_future', 'x')"
        )
    connection.close()
    with pytest.raises(SchemaTooNewError, match="newer memtrove"):
        Vault.open(path, config_dir=tmp_path / "cfg")


def test_upgrade_from_older_schema_keeps_data_and_builds_fragments(
    tmp_path: Path, notes: Path
) -> None:
    """A vault written with only m001 (no fragments) upgrades on open; nothing is lost."""
    path = tmp_path / "v.sqlite"
    connection = open_connection(path)
    migrate(connection, MIGRATIONS[:1])
    body = "# Old note\n\n## Part one\n\n" + "Durable words about sqlite upgrades. " * 20
    with write_transaction(connection):
        body_hash = hashlib.sha256(body.encode()).hexdigest()
        connection.execute(
            "INSERT INTO content (hash, doc, created_at) VALUES (?, ?, 'x')", (body_hash, body)
        )
        connection.execute(
            "INSERT INTO documents (collection, path, title, hash, docid, created_at, modified_at, "
            "file_size, file_mtime_ns) VALUES ('notes', 'old.md', 'Old note', ?, ?, 'x', "
            "'2026-01-01T00:00:00Z', 1, 1)",
            (body_hash, body_hash[:6]),
        )
        connection.execute(
            "INSERT INTO documents_fts (rowid, filepath, title, body) "
            "VALUES (1, 'notes/old.md', 'Old note', ?)",
            (body,),
        )
    connection.close()

    write(notes, "old.md", body)
    with Vault.open(path, config_dir=tmp_path / "cfg") as vault:
        assert applied_migrations(vault._connection) == [name for name, _ in MIGRATIONS]
        assert [r.path for r in vault.search("sqlite upgrades")] == ["old.md"]
        vault.add_collection(notes, name="notes")
        report = vault.update()
        assert (report.added, report.updated, report.unchanged) == (0, 0, 1)
        fragments = vault._connection.execute(
            "SELECT fragment_type FROM fragments ORDER BY seq"
        ).fetchall()
        assert report.removed == 0
        assert fragments and fragments[0][0] == "full"
        assert vault.get("notes/old.md").title == "Old note"


def test_the_names_list_is_the_migrations_list() -> None:
    """An up-to-date vault opens without loading the migration modules: the list of names it
    is compared with must be exactly the migrations, in order."""
    from memtrove.db.migration_names import NAMES

    assert tuple(name for name, _ in MIGRATIONS) == NAMES
