"""The passage index: a long record is found by the section that answers, and the index
follows every way a document's text enters or leaves search."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.db.connection import open_connection, write_transaction
from memtrove.db.migrations import migrate
from memtrove.db.schema import MIGRATIONS
from memtrove.db.sqlite.passages import STRIDE
from memtrove.lifecycle.archive import archive_documents
from memtrove.retrieval.filters import Filters
from memtrove.retrieval.fts import search_passage_fts
from memtrove.retrieval.hybrid import PASSAGE_DOC_SHARE, blend_passages
from tests.conftest import text_rows, write

FILLER = (
    "The controller reconciles objects, the scheduler places workloads, and the API server "
    "validates every request against its schema before storing it. "
)
RESIZE = (
    "## Resizing a running container\n\n"
    "Raise the CPU limit of a running pod in place: the kubelet applies the new limit "
    "without restarting the container.\n\n"
)


def _long_record() -> str:
    sections = [f"## Topic {n}\n\n" + FILLER * 12 + "\n\n" for n in range(40)]
    sections.insert(20, RESIZE)
    return "# Workload records\n\n" + "".join(sections)


PAIRS = (
    ("running", "pod"),
    ("CPU", "limit"),
    ("restarting", "pod"),
    ("raise", "limit"),
    ("running", "CPU"),
    ("restarting", "limit"),
)


def _corpus(notes: Path) -> None:
    write(notes, "resources.md", _long_record())
    for n, (first, second) in enumerate(PAIRS):
        # short pages that each hold two of the question's words
        write(notes, f"short-{n}.md", f"# Page {n}\n\nA note on the {first} {second} counter.\n")
    for n in range(20):
        write(notes, f"other-{n}.md", f"# Other {n}\n\nGardening, tea and the weather {n}.\n")


def _passage_rows(vault: Vault, doc_id: int) -> int:
    base = doc_id * STRIDE
    return text_rows(vault._connection, "passages", base, base + STRIDE - 1)


def _found(vault: Vault, query: str) -> list[int]:
    return [doc for doc, _, _ in search_passage_fts(vault._connection, query, limit=10)]


def test_a_long_record_leads_by_the_section_that_answers(vault: Vault, notes: Path) -> None:
    _corpus(notes)
    vault.add_collection(notes, name="notes")
    vault.update()
    question = "Can we raise a running pod's CPU limit without restarting it?"
    whole = [r.path for r in vault.search(question, limit=5)]
    assert whole[0] != "resources.md"  # whole-document BM25 buries the long record
    blended = [
        r.path
        for r in vault.hybrid(question, limit=5, vectors=False, snippets=False, passages=True)
    ]
    assert "resources.md" in blended[:2]  # its best section scores like the best page
    assert "resources.md" not in whole[:2]
    record = vault.get("notes/resources.md")
    hits = search_passage_fts(vault._connection, question, limit=3)
    assert hits[0][0] == record.doc_id
    text = vault._connection.execute(
        "SELECT doc FROM content WHERE hash = (SELECT hash FROM documents WHERE id = ?)",
        (record.doc_id,),
    ).fetchone()[0]
    assert "Resizing a running container" in text  # the best passage is the resize section
    assert hits[0][2] > 0


def test_filters_run_inside_the_passage_query(vault: Vault, notes: Path) -> None:
    _corpus(notes)
    other = notes.parent / "other"
    write(other, "resize.md", "# Resize\n\n## Intro\n\n" + FILLER * 30 + "\n\n" + RESIZE)
    vault.add_collection(notes, name="notes")
    vault.add_collection(other, name="other")
    vault.update()
    question = "raise the CPU limit without restarting"
    only = search_passage_fts(
        vault._connection, question, limit=10, filters=Filters(collections=("other",))
    )
    assert [doc for doc, _, _ in only] == [vault.get("other/resize.md").doc_id]
    # phrases and exclusions hold for whole documents: the passage channel stays out
    assert search_passage_fts(vault._connection, '"cpu limit"', limit=10) == []
    assert search_passage_fts(vault._connection, "cpu -kubelet", limit=10) == []


def test_passages_follow_edits_removals_forgetting_and_archiving(vault: Vault, notes: Path) -> None:
    pad = FILLER * 14  # two sections of these make a long document
    write(notes, "a.md", f"# A\n\n## One\n\nzeppelin hangar {pad}\n\n## Two\n\nquartz {pad}\n")
    write(notes, "b.md", f"# B\n\n## One\n\nquartz lantern {pad}\n\n## Two\n\n{pad}\n")
    write(notes, "tiny.md", "# Tiny\n\nquartz lantern, one piece\n")
    write(notes, "short.md", "# Short\n\n## One\n\nquartz lantern\n\n## Two\n\nquartz again\n")
    vault.add_collection(notes, name="notes")
    vault.update()
    a = vault.get("notes/a.md").doc_id
    b = vault.get("notes/b.md").doc_id
    assert _passage_rows(vault, a) >= 2 and _passage_rows(vault, b) >= 2
    assert _passage_rows(vault, vault.get("notes/tiny.md").doc_id) == 0  # its own passage
    assert _passage_rows(vault, vault.get("notes/short.md").doc_id) == 0  # scored whole
    assert _found(vault, "zeppelin") == [a]

    write(notes, "a.md", f"# A\n\n## One\n\nmarmalade orchard {pad}\n\n## Two\n\n{pad}\n")
    vault.update()
    assert _found(vault, "zeppelin") == [] and _found(vault, "marmalade") == [a]

    (notes / "a.md").unlink()
    vault.update()
    assert _passage_rows(vault, a) == 0 and _found(vault, "marmalade") == []

    vault.curation.forget("notes/b.md")
    assert _passage_rows(vault, b) == 0 and _found(vault, "lantern") == []  # short ones: none

    write(notes, "c.md", f"# C\n\n## One\n\nyellow submarine {pad}\n\n## Two\n\n{pad}\n")
    vault.update()
    c = vault.get("notes/c.md").doc_id
    archive_documents(vault._connection, [(c, "test")], datetime.now(UTC))
    assert _found(vault, "submarine") == []
    assert vault.lifecycle.restore(query="submarine").restored == 1
    assert _found(vault, "submarine") == [c]


def test_an_older_vault_gets_its_passages_when_it_opens(tmp_path: Path, notes: Path) -> None:
    path = tmp_path / "v.sqlite"
    write(notes, "long.md", _long_record())
    with Vault.open(path, config_dir=tmp_path / "cfg") as vault:
        vault.add_collection(notes, name="notes")
        vault.update()
        doc = vault.get("notes/long.md").doc_id
    connection = open_connection(path)
    with write_transaction(connection):  # back to the schema before the passage index
        connection.execute("DROP TABLE passages_fts")
        connection.execute(
            "DELETE FROM schema_migrations WHERE name IN ('m020_passages', 'm021_long_passages')"
        )
    assert migrate(connection, MIGRATIONS) == ["m020_passages", "m021_long_passages"]
    hits = search_passage_fts(connection, "restarting the container", limit=3)
    assert hits and hits[0][0] == doc
    connection.close()


def test_a_failing_step_rolls_its_migration_back(tmp_path: Path) -> None:
    connection = open_connection(tmp_path / "v.sqlite")

    def half(connection: object) -> None:
        raise RuntimeError("stopped halfway")

    steps = (*MIGRATIONS, ("m999_step", ("CREATE TABLE half_done (x INTEGER)", half)))
    with pytest.raises(RuntimeError, match="halfway"):
        migrate(connection, steps)
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    assert "half_done" not in tables


def test_an_older_vault_drops_the_passages_of_short_documents(tmp_path: Path, notes: Path) -> None:
    path = tmp_path / "v.sqlite"
    write(notes, "long.md", _long_record())
    write(notes, "short.md", "# Short\n\n## One\n\nquartz lantern\n\n## Two\n\nmarmalade\n")
    with Vault.open(path, config_dir=tmp_path / "cfg") as vault:
        vault.add_collection(notes, name="notes")
        vault.update()
        long_doc = vault.get("notes/long.md").doc_id
        short = vault.get("notes/short.md").doc_id
    connection = open_connection(path)
    with write_transaction(connection):  # as m020 indexed it: every sectioned document
        base = short * STRIDE
        connection.executemany(
            "INSERT INTO passages_fts (rowid, body) VALUES (?, ?)",
            [(base, "quartz lantern"), (base + 1, "marmalade")],
        )
        connection.execute("DELETE FROM schema_migrations WHERE name = 'm021_long_passages'")
    assert [doc for doc, _, _ in search_passage_fts(connection, "marmalade", limit=3)] == [short]
    assert migrate(connection, MIGRATIONS) == ["m021_long_passages"]
    assert search_passage_fts(connection, "marmalade", limit=3) == []
    hits = search_passage_fts(connection, "restarting the container", limit=3)
    assert hits and hits[0][0] == long_doc
    connection.close()


def test_a_long_document_scores_its_best_passage_and_a_share_of_itself() -> None:
    documents = [(1, 10.0), (2, 6.0), (3, 2.0)]
    # 3 is a long record whose best passage is the best passage of all; 2 has a weak one
    blended = dict(blend_passages(documents, [(3, 8.0), (2, 2.0)]))
    assert blended[1] == 10.0  # no passages: its own BM25
    assert blended[3] == pytest.approx((1.0 + PASSAGE_DOC_SHARE * 0.2) * 10.0)
    assert blended[2] == 6.0  # its own score is higher than its passage's
    assert blend_passages(documents, []) == documents
    assert blend_passages([], [(4, 3.0)]) == [(4, 3.0)]
