"""The fast paths of ``update``: the scan compares with what the vault recorded, a run with
nothing to do writes nothing and builds no redaction engine, a batch is written with one
read or write per table, and a first index checkpoints the WAL less often. Each must leave
the vault exactly as the one-by-one path did."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memtrove import Vault
from memtrove.db.sqlite.connection import fewer_checkpoints
from memtrove.errors import ConfigError
from memtrove.index import indexer
from memtrove.index.indexer import update_collections
from memtrove.index.markdown import ParsedMarkdown, parse_markdown
from memtrove.index.preparing import prepare_file
from memtrove.index.scanner import compile_pattern, literal_suffix, scan_collection
from memtrove.results import Collection
from memtrove.security.redaction import DEFAULT, Redactor
from tests.conftest import sqlite_only, write

# -- the scan -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "suffix"),
    [
        ("**/*.md", ".md"),
        ("  /**/*.md ", ".md"),
        ("", ".md"),
        ("**/*", ""),
        ("**/*.ru.md", ".ru.md"),
        ("*.md", None),
        ("notes/**/*.md", None),
        ("**/*.{md,txt}", None),
        ("**/*[ab].md", None),
        ("**/*?.md", None),
        ("**/*/x.md", None),
        ("**/*.md}", None),
    ],
)
def test_literal_suffix(pattern: str, suffix: str | None) -> None:
    assert literal_suffix(pattern) == suffix


@given(
    st.text(alphabet="ab.m-_ 日", max_size=5),
    st.lists(st.text(alphabet="ab.m-_/日", max_size=6), min_size=1, max_size=4),
)
def test_a_literal_suffix_takes_what_the_pattern_takes(tail: str, parts: list[str]) -> None:
    pattern = "**/*" + tail
    suffix = literal_suffix(pattern)
    assert suffix is not None
    path = "/".join(parts)
    assert path.endswith(suffix) == (compile_pattern(pattern).match(path) is not None)


def test_recorded_files_are_counted_not_listed(notes: Path) -> None:
    for name in ("a.md", "b.md", "sub/c.md", "sub/d.md"):
        write(notes, name, f"# {name}\n")
    every = {file.path: file for file in scan_collection(notes, "**/*.md").files}
    recorded: dict[str, tuple[int | None, int | None]] = {
        "a.md": (every["a.md"].size, every["a.md"].mtime_ns),  # as found
        "sub/c.md": (every["sub/c.md"].size, every["sub/c.md"].mtime_ns + 1),  # changed
        "sub/d.md": (None, None),  # recorded before sizes were
        "gone.md": (1, 2),  # not found
    }
    result = scan_collection(notes, "**/*.md", recorded=recorded)
    assert result.unchanged == 1
    assert [file.path for file in result.files] == ["b.md", "sub/c.md", "sub/d.md"]
    assert result.files == [every[path] for path in ("b.md", "sub/c.md", "sub/d.md")]
    assert recorded == {
        "sub/c.md": (every["sub/c.md"].size, every["sub/c.md"].mtime_ns + 1),
        "sub/d.md": (None, None),
        "gone.md": (1, 2),
    }


def test_a_scan_without_records_lists_every_file(notes: Path) -> None:
    write(notes, "z.md", "z")
    write(notes, "a/b.md", "b")
    result = scan_collection(notes, "**/*.md")
    assert (result.unchanged, [file.path for file in result.files]) == (0, ["a/b.md", "z.md"])
    assert result.files[1].absolute == str(notes / "z.md")


# -- nothing to do ------------------------------------------------------------------------------


def test_a_run_with_nothing_to_do_writes_nothing(vault: Vault, notes: Path) -> None:
    for index in range(30):
        write(notes, f"n{index}.md", f"# Note {index}\n\nbody {index} [next](n{index + 1}.md)")
    vault.add_collection(notes, name="notes")
    vault.update()
    before = _writes(vault)
    report = vault.update()
    assert report.summary == "+0 ~0 =30 -0"
    assert _writes(vault) == before


def _writes(vault: Vault) -> object:
    """What changes with any write: SQLite's change counter; on PostgreSQL, every row's
    version (``xmin``, new at each insert or update) and every table's count."""
    connection = vault._connection
    if connection.dialect == "sqlite":
        return connection.total_changes  # type: ignore[attr-defined]
    tables = connection.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = "
        "current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name"
    ).fetchall()
    return {
        table: connection.execute(f'SELECT xmin::text FROM "{table}" ORDER BY 1').fetchall()
        for (table,) in tables
    }


def test_no_redaction_engine_is_built_when_nothing_is_read(vault: Vault, notes: Path) -> None:
    write(notes, "a.md", "# A\n\nalpha")
    vault.add_collection(notes, name="notes")
    built: list[Redactor] = []

    def engine() -> Redactor:
        built.append(DEFAULT)
        return DEFAULT

    collections = vault.collections()
    assert update_collections(vault._connection, collections, redactor=engine).added == 1
    assert len(built) == 1
    assert update_collections(vault._connection, collections, redactor=engine).unchanged == 1
    assert len(built) == 1  # nothing read: not asked for
    write(notes, "b.md", "# B\n\nbeta")
    write(notes, "c.md", "# C\n\ngamma")
    assert update_collections(vault._connection, collections, redactor=engine).added == 2
    assert len(built) == 2  # once per run, however many files


def test_a_bad_redaction_pattern_fails_an_update_with_nothing_to_do(
    tmp_path: Path, notes: Path
) -> None:
    write(notes, "a.md", "# A\n\nalpha")
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as vault:
        vault.add_collection(notes, name="notes")
        vault.update()
        config = tmp_path / "config" / "config.yaml"
        config.write_text(config.read_text() + 'redaction:\n  patterns: ["("]\n')
        with pytest.raises(ConfigError, match="redaction"):
            vault.update()


# -- rows read for a few changes, or for many -----------------------------------------------------


@pytest.mark.parametrize("others", [0, 12])  # every row read, or only the ones at stake
def test_a_rename_takes_the_last_vanished_document_with_its_body(
    vault: Vault, notes: Path, others: int
) -> None:
    for index in range(others):
        write(notes, f"other{index}.md", f"# Other {index}\n")
    write(notes, "one.md", "# Same\n\nbody")
    write(notes, "two.md", "# Same\n\nbody")
    vault.add_collection(notes, name="notes")
    vault.update()
    ids = dict(vault._connection.execute("SELECT path, id FROM documents").fetchall())
    (notes / "one.md").unlink()
    (notes / "two.md").unlink()
    write(notes, "three.md", "# Same\n\nbody")
    report = vault.update()
    assert (report.renamed, report.removed, report.unchanged) == (1, 1, others)
    rows = dict(vault._connection.execute("SELECT id, path FROM documents").fetchall())
    assert rows[ids["two.md"]] == "three.md"  # the higher id, as when every row was read
    assert rows[ids["one.md"]] == "one.md"


@pytest.mark.parametrize("others", [0, 12])
def test_a_forgotten_document_follows_its_file(vault: Vault, notes: Path, others: int) -> None:
    for index in range(others):
        write(notes, f"other{index}.md", f"# Other {index}\n")
    write(notes, "old.md", "# Forgotten\n\nbody")
    vault.add_collection(notes, name="notes")
    vault.update()
    vault.curation.forget("notes/old.md")
    (notes / "old.md").rename(notes / "new.md")
    report = vault.update()
    assert (report.renamed, report.added, report.unchanged) == (1, 0, others)
    row = vault._connection.execute("SELECT path, active FROM documents WHERE path = 'new.md'")
    assert row.fetchall() == [("new.md", 0)]


# -- one batch ----------------------------------------------------------------------------------


def test_a_batch_stores_a_shared_body_once_and_gives_each_document_a_docid(
    vault: Vault, notes: Path
) -> None:
    write(notes, "a.md", "# Shared\n\nthe same words")
    vault.add_collection(notes, name="notes")
    vault.update()
    write(notes, "b.md", "# Shared\n\nthe same words")
    write(notes, "c.md", "# Shared\n\nthe same words")
    write(notes, "d.md", "# Other\n\nother words")
    assert vault.update().added == 3
    connection = vault._connection
    rows = connection.execute("SELECT path, hash, docid FROM documents ORDER BY id").fetchall()
    shared = rows[0][1]
    assert [(path, docid) for path, _, docid in rows[:3]] == [
        ("a.md", shared[:6]),
        ("b.md", shared[:6] + "01"),
        ("c.md", shared[:6] + "02"),
    ]
    assert connection.execute("SELECT COUNT(*) FROM content").fetchone() == (2,)
    for body_hash in (shared, rows[3][1]):
        fragments = connection.execute(
            "SELECT COUNT(*) FROM fragments WHERE hash = ?", (body_hash,)
        ).fetchone()
        assert fragments[0] >= 1


def test_a_long_document_written_in_a_batch_has_its_passages(vault: Vault, notes: Path) -> None:
    sections = "".join(f"\n## Part {n}\n\n" + "words about leases " * 60 for n in range(4))
    write(notes, "long.md", "# Long\n" + sections)
    write(notes, "short.md", "# Short\n\nlease")
    vault.add_collection(notes, name="notes")
    vault.update()
    [(doc_id,)] = vault._connection.execute(
        "SELECT id FROM documents WHERE path = 'long.md'"
    ).fetchall()
    base, last = doc_id << 16, (doc_id << 16) + (1 << 16) - 1
    if vault._connection.dialect == "sqlite":
        count = "SELECT COUNT(*) FROM passages_fts WHERE rowid BETWEEN ? AND ?"
    else:  # the PostgreSQL text index's rows of its passages index (2)
        count = "SELECT COUNT(*) FROM text_rows WHERE idx = 2 AND doc_id BETWEEN ? AND ?"
    assert vault._connection.execute(count, (base, last)).fetchone()[0] >= 4


# -- a first index ------------------------------------------------------------------------------


def test_fewer_checkpoints_puts_the_setting_back(vault: Vault) -> None:
    sqlite_only(vault, "its WAL checkpoints")
    connection = vault._connection

    def setting() -> int:
        return int(connection.execute("PRAGMA wal_autocheckpoint").fetchone()[0])

    assert setting() == 1000
    with fewer_checkpoints(connection, 5000):
        assert setting() == 5000
        with fewer_checkpoints(connection, 2000):  # already larger: left alone
            assert setting() == 5000
    assert setting() == 1000
    with pytest.raises(RuntimeError), fewer_checkpoints(connection, 5000):
        raise RuntimeError("a failed batch")
    assert setting() == 1000


def test_a_bulk_update_indexes_the_same_and_puts_the_setting_back(
    vault: Vault, notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sqlite_only(vault, "its WAL checkpoints")
    monkeypatch.setattr(indexer, "BULK_FILES", 5)
    seen: list[int] = []
    real = indexer.write_batch

    def spying(connection: object, *args: object) -> None:
        seen.append(int(vault._connection.execute("PRAGMA wal_autocheckpoint").fetchone()[0]))
        real(connection, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(indexer, "write_batch", spying)
    for index in range(12):
        write(notes, f"n{index}.md", f"# Note {index}\n\nbody {index}")
    vault.add_collection(notes, name="notes")
    report = update_collections(vault._connection, vault.collections(), batch_size=4)
    assert report.added == 12
    assert seen and set(seen) == {8000}
    assert vault._connection.execute("PRAGMA wal_autocheckpoint").fetchone() == (1000,)
    assert len(vault.search("body", limit=20)) == 12


# -- what crosses to the helper process ---------------------------------------------------------


def test_parsed_markdown_is_immutable_compared_and_pickled(notes: Path) -> None:
    parsed = parse_markdown("---\ntitle: T\n---\n# Heading\n\nbody\n")
    assert parsed == parse_markdown("---\ntitle: T\n---\n# Heading\n\nbody\n")
    assert parsed != parse_markdown("# Other\n")
    assert pickle.loads(pickle.dumps(parsed)) == parsed
    assert parsed.body == "# Heading\n\nbody\n" and parsed.frontmatter == {"title": "T"}
    with pytest.raises(AttributeError):
        parsed.title = "changed"  # type: ignore[misc]
    assert ParsedMarkdown("x", 0).frontmatter == {}
    assert "body_start=0" in repr(ParsedMarkdown("x", 0))

    path = write(notes, "a.md", "# A\n\nalpha [b](b.md)\n")
    stat = path.stat()
    from memtrove.index.scanner import FileEntry

    entry = FileEntry("a.md", str(path), stat.st_size, stat.st_mtime_ns)
    outcome = prepare_file(Collection("notes", notes), entry, DEFAULT.redact)
    copied = pickle.loads(pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL))
    assert copied == outcome and copied.item is not None
    assert copied.item.parsed.title == "A" and copied.item.fragments == outcome.item.fragments  # type: ignore[union-attr]
    assert os.path.basename(copied.item.file.absolute) == "a.md"
