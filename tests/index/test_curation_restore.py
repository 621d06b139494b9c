"""Restore: a forgotten document back in search with its full-text row, passages and links,
an archived one through the lifecycle path, and ``update`` keeping it afterwards."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtrove import DocumentNotFoundError, InvalidQueryError, Vault
from memtrove.db.passages import LONG_CHARS
from memtrove.db.sqlite.passages import STRIDE
from memtrove.lifecycle.archive import archive_documents
from tests.conftest import text_rows, totals_drifted, write

SECTION = "Write-ahead logging keeps readers going while one writer appends pages. " * 12
LONG = (
    "# SQLite operations\n\n"
    + "".join(f"## Part {number}\n\n{SECTION}\n\n" for number in range(8))
    + "## Checkpoints\n\nA checkpoint folds the journal back into the database file.\n"
)


@pytest.fixture
def indexed(vault: Vault, notes: Path) -> Vault:
    write(notes, "long.md", LONG + "\nSee [auth](auth.md).\n")
    write(notes, "auth.md", "# Auth tokens\n\nRefresh token rotation revokes the old token.\n")
    write(notes, "links.md", "# Index\n\nRead [the long one](long.md) first.\n")
    vault.add_collection(notes, name="notes")
    vault.update()
    return vault


def passages(vault: Vault, doc_id: int) -> int:
    return text_rows(vault._connection, "passages", doc_id * STRIDE, (doc_id + 1) * STRIDE - 1)


def found(vault: Vault, query: str) -> list[str]:
    return [result.path for result in vault.search(query)]


def test_restore_brings_a_forgotten_document_back(indexed: Vault) -> None:
    assert len(LONG) > LONG_CHARS
    document = indexed.get("notes/long.md")
    sections = passages(indexed, document.doc_id)
    assert sections > 1
    links = indexed.graph.links("notes/long.md")
    indexed.curation.forget("notes/long.md")
    assert found(indexed, "checkpoint journal") == []
    assert passages(indexed, document.doc_id) == 0

    restored = indexed.curation.restore("notes/long.md")
    assert restored.active and restored.doc_id == document.doc_id
    assert found(indexed, "checkpoint journal") == ["long.md"]
    assert passages(indexed, document.doc_id) == sections
    assert indexed.graph.links("notes/long.md") == links  # its own links, resolved again
    assert links and links[0][3] == indexed.get("notes/auth.md").doc_id
    # the link written to it resolves again too
    assert indexed.graph.links("notes/links.md")[0][3] == document.doc_id
    assert not totals_drifted(indexed._connection)

    report = indexed.update()  # the file is unchanged: the document stays as it is
    assert (report.added, report.updated, report.removed) == (0, 0, 0)
    assert indexed.get("notes/long.md").active
    assert found(indexed, "checkpoint journal") == ["long.md"]
    assert passages(indexed, document.doc_id) == sections


def test_restore_is_idempotent(indexed: Vault) -> None:
    document = indexed.get("notes/auth.md")
    assert indexed.curation.restore("notes/auth.md") == document  # active: returned as is
    indexed.curation.forget("#" + document.docid)
    indexed.curation.restore("#" + document.docid)
    assert indexed.curation.restore("notes/auth.md").active
    assert found(indexed, "refresh token rotation") == ["auth.md"]
    assert text_rows(indexed._connection, "documents", document.doc_id) == 1


def test_a_restored_document_is_forgotten_again_like_any_other(indexed: Vault, notes: Path) -> None:
    indexed.curation.forget("notes/auth.md")
    indexed.curation.restore("notes/auth.md")
    indexed.curation.forget("notes/auth.md")
    assert indexed.update().added == 0
    assert found(indexed, "refresh token rotation") == []


def test_an_archived_document_is_restored_by_the_lifecycle_path(indexed: Vault) -> None:
    doc_id = indexed.get("notes/auth.md").doc_id
    archive_documents(indexed._connection, [(doc_id, "stale")], datetime.now(UTC))
    assert found(indexed, "refresh token rotation") == []
    assert indexed.curation.restore("notes/auth.md").active
    assert found(indexed, "refresh token rotation") == ["auth.md"]
    assert indexed.lifecycle.status().archived == 0


def test_a_document_whose_file_left_is_not_restored(indexed: Vault, notes: Path) -> None:
    (notes / "auth.md").unlink()
    indexed.update()
    with pytest.raises(InvalidQueryError, match="was not forgotten"):
        indexed.curation.restore("notes/auth.md")
    with pytest.raises(DocumentNotFoundError):
        indexed.curation.restore("notes/none.md")


def test_confidence_and_type_are_set_by_hand(indexed: Vault) -> None:
    assert indexed.curation.set_confidence("notes/auth.md", 0.4).confidence == 0.4
    assert indexed.curation.set_type("notes/auth.md", "decision").content_type == "decision"
    document = indexed.get("notes/auth.md")
    assert (document.confidence, document.content_type) == (0.4, "decision")
    for value in (-0.01, 1.01, float("nan"), float("inf"), True, "0.5", None, 10**400):
        with pytest.raises(InvalidQueryError, match="confidence must be"):
            indexed.curation.set_confidence("notes/auth.md", value)  # type: ignore[arg-type]
    for kind in ("observation", "Decision", "", None, 3):
        with pytest.raises(InvalidQueryError, match="type must be one of"):
            indexed.curation.set_type("notes/auth.md", kind)  # type: ignore[arg-type]
    assert indexed.get("notes/auth.md").confidence == 0.4
    assert indexed.update().updated == 0  # an unchanged file keeps what was set by hand
    assert indexed.get("notes/auth.md").content_type == "decision"
