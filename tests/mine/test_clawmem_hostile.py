"""``Vault.portable.import_clawmem`` on ClawMem files that are damaged, unusual or crafted: each
imports what it can and names what it left out, or is refused in one line; none hangs,
writes outside a collection or prints a traceback.

Each case is a copy of the real ClawMem 0.28 vault (38 documents) with one change."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.errors import CollectionError, PortableFormatError

SOURCE = Path(__file__).resolve().parents[3] / "shared" / "bench" / "clawmem-vault"

pytestmark = pytest.mark.skipif(
    not (SOURCE / "index.sqlite").is_file(), reason="the ClawMem vault is not here"
)


def _copy(tmp_path: Path, *statements: str) -> Path:
    copy = tmp_path / "index.sqlite"
    shutil.copy(SOURCE / "index.sqlite", copy)
    copy.chmod(0o644)
    with sqlite3.connect(copy) as connection:
        for statement in statements:
            connection.execute(statement)
    connection.close()
    return copy


def _count(vault: Vault, where: str = "1 = 1") -> int:
    return int(
        vault._connection.execute(f"SELECT COUNT(*) FROM documents WHERE {where}").fetchone()[0]
    )


def test_a_vault_with_its_vector_index_imports_and_names_the_vectors(
    vault: Vault, tmp_path: Path
) -> None:
    """A ClawMem vault that has embedded holds ``vectors_vec``, a sqlite-vec table whose
    module the source connection does not load: counting it stopped the import."""
    import sqlean
    import sqlite_vec

    copy = _copy(tmp_path)
    connection = sqlean.connect(str(copy))
    connection.enable_load_extension(True)
    sqlite_vec.load(connection)
    connection.execute(
        "CREATE VIRTUAL TABLE vectors_vec USING vec0(hash_seq TEXT PRIMARY KEY, "
        "embedding float[4] distance_metric=cosine)"
    )
    connection.executemany(
        "INSERT INTO vectors_vec (hash_seq, embedding) VALUES (?, ?)",
        [("a_0", "[1, 0, 0, 0]"), ("b_0", "[0, 1, 0, 0]")],
    )
    connection.commit()
    connection.close()
    report = vault.portable.import_clawmem(copy)
    assert report.documents["added"] == 38
    assert report.not_mapped["vectors_vec"] == {
        "rows": 2,
        "reason": "vectors of another model: `--embed` embeds here",
    }
    assert not any(name.startswith("vectors_vec_") for name in report.not_mapped)


def test_views_in_place_of_its_tables_are_never_read(vault: Vault, tmp_path: Path) -> None:
    """A view runs whatever query it holds (a recursive one never ends): documents and
    content must be tables, and a view named like another table is left alone."""
    endless = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x FROM n"
    copy = _copy(
        tmp_path,
        "ALTER TABLE memory_relations RENAME TO relations_kept",
        f"CREATE VIEW memory_relations AS SELECT x AS source_id, x AS target_id, "
        f"'causal' AS relation_type, 1.0 AS weight FROM ({endless})",
    )
    report = vault.portable.import_clawmem(copy)
    assert report.documents["added"] == 38 and "memory_relations" not in report.records
    copy.unlink()
    copy = _copy(
        tmp_path,
        "ALTER TABLE documents RENAME TO documents_kept",
        "CREATE VIEW documents AS SELECT * FROM documents_kept",
    )
    with pytest.raises(PortableFormatError, match="not a ClawMem vault"):
        vault.portable.import_clawmem(copy)
    assert _count(vault) == 38  # the first import, nothing more


def test_computed_columns_are_refused(vault: Vault, tmp_path: Path) -> None:
    """A column computed as it is read can cost any time and memory per row."""
    copy = tmp_path / "index.sqlite"
    with sqlite3.connect(copy) as connection:
        connection.executescript(
            """
            CREATE TABLE content (hash TEXT PRIMARY KEY, doc TEXT, created_at TEXT);
            CREATE TABLE documents (id INTEGER PRIMARY KEY, collection TEXT, path TEXT,
                hash TEXT, title TEXT GENERATED ALWAYS AS (hex(zeroblob(1000000))) VIRTUAL);
            """
        )
    connection.close()
    with pytest.raises(PortableFormatError, match="not a ClawMem vault"):
        vault.portable.import_clawmem(copy)


def test_odd_table_and_column_names_and_unknown_virtual_tables(
    vault: Vault, tmp_path: Path
) -> None:
    copy = _copy(
        tmp_path,
        'CREATE TABLE "odd""name" (a)',
        'INSERT INTO "odd""name" VALUES (1), (2)',
        'ALTER TABLE documents ADD COLUMN "a b; --" TEXT',
        """UPDATE documents SET "a b; --" = 'x' WHERE id = (SELECT MIN(id) FROM documents)""",
        "PRAGMA writable_schema = ON",
        "INSERT INTO sqlite_master (type, name, tbl_name, rootpage, sql) VALUES "
        "('table', 'elsewhere', 'elsewhere', 0, 'CREATE VIRTUAL TABLE elsewhere USING nosuch(a)')",
    )
    report = vault.portable.import_clawmem(copy)
    assert report.documents["added"] == 38
    assert report.not_mapped['odd"name'] == {"rows": 2, "reason": "unknown to this import"}
    assert report.not_mapped["documents.a b; --"]["rows"] == 1
    assert report.not_mapped["elsewhere"]["reason"] == "a virtual table: not read"


def test_blobs_are_read_as_text(vault: Vault, tmp_path: Path) -> None:
    target = "SELECT id FROM documents WHERE path = '19308-number-literals.md'"
    copy = _copy(
        tmp_path,
        f"UPDATE documents SET title = CAST('Number literals' AS BLOB) WHERE id = ({target})",
        "UPDATE content SET doc = CAST('# Literals\n\nGo 2 number literal changes' AS BLOB) "
        f"WHERE hash = (SELECT hash FROM documents WHERE id = ({target}))",
    )
    vault.portable.import_clawmem(copy)
    document = vault.get("goprop/19308-number-literals.md")
    assert document.title == "Number literals"
    assert document.body == "# Literals\n\nGo 2 number literal changes"


@pytest.mark.parametrize("name", ["../evil", "a/b", "", "_private"])
def test_a_collection_name_this_vault_cannot_hold_is_refused_and_can_be_renamed(
    vault: Vault, tmp_path: Path, name: str
) -> None:
    copy = _copy(
        tmp_path,
        f"UPDATE documents SET collection = '{name}' WHERE collection = 'chats'",
    )
    with pytest.raises(CollectionError, match=r"not a name this vault can hold: .*--rename"):
        vault.portable.import_clawmem(copy)
    assert _count(vault) == 0
    report = vault.portable.import_clawmem(copy, renames={name: "chats-here"})
    assert report.documents["added"] == 38
    assert _count(vault, "collection = 'chats-here'") == 7


def test_a_path_outside_its_collection_is_left_out_and_counted(
    vault: Vault, tmp_path: Path
) -> None:
    copy = _copy(
        tmp_path,
        "UPDATE documents SET path = '../../outside.md' WHERE path = '19308-number-literals.md'",
        "UPDATE documents SET path = '/etc/x.md' WHERE path = '15292-generics.md'",
    )
    report = vault.portable.import_clawmem(copy)
    assert report.documents == {"total": 38, "added": 36, "updated": 0, "unchanged": 0}
    assert report.not_mapped["documents (with a path outside their collection)"]["rows"] == 2
    assert _count(vault, "path LIKE '%outside%' OR path LIKE '/%'") == 0
