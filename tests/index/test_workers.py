"""The helper process that reads and parses big updates: the same outcome as reading
in-process, whatever goes wrong with the helper."""

from __future__ import annotations

import io
import os
import pickle
import sys
from array import array
from pathlib import Path
from typing import Any

import pytest

from memtrove import Vault
from memtrove.db.postgres.text_batch import Batch
from memtrove.db.text_tokens import document_tokens
from memtrove.index import workers
from memtrove.index.indexer import update_collections
from memtrove.index.preparing import prepare_file
from memtrove.index.scanner import scan_collection
from memtrove.results import Collection
from memtrove.security.redaction import Redactor
from tests.conftest import write
from tests.postgres_server import OFF as POSTGRES_OFF
from tests.postgres_server import fresh_schema

KEY = "AKIA" + "QWERTYUIOPASDFGH"


def corpus(folder: Path, count: int = 60) -> None:
    for number in range(count):
        write(
            folder,
            f"n{number:03d}.md",
            f"---\ntags: [t{number % 5}]\ndate: 2026-0{1 + number % 9}-01\n---\n"
            f"# Note {number}\n\n## Part\nbody words {number} key {KEY}\n",
        )
    (folder / "bad.md").write_bytes(b"# Bad\n\n\xff\xfe not utf-8 " + b"x" * 40)
    (folder / "binary.md").write_bytes(b"\x00\x01\x02")


def indexed(vault: Vault, folder: Path) -> tuple[Any, list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    vault.add_collection(folder, name="notes")
    report = update_collections(
        vault._connection, vault.collections(), batch_size=10, redactor=vault.redactor
    )
    documents = vault._connection.execute(
        "SELECT path, hash, title, content_type, quality_score, authored_at, tags, body_length "
        "FROM documents ORDER BY path"
    ).fetchall()
    fragments = vault._connection.execute(
        "SELECT hash, seq, fragment_type, label, start_offset, end_offset FROM fragments "
        "ORDER BY hash, seq"
    ).fetchall()
    summary = (report.added, [tuple(i) for i in report.skipped], report.notices)
    return summary, documents, fragments


def open_vault(where: Path) -> Vault:
    return Vault.open(where / "vault.sqlite", config_dir=where / "config")


@pytest.fixture
def helper_for_any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """The helper for any update, on any machine (unless MEMTROVE_INDEX_WORKERS says no)."""
    monkeypatch.setattr(workers, "PARALLEL_FILES", 1)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)


def test_the_helper_indexes_exactly_what_this_process_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helper_for_any_size: None
) -> None:
    corpus(tmp_path / "notes")
    answered: list[int] = []
    receive = workers.Helper.receive

    def counted(helper: workers.Helper, valid: Any) -> Any:
        outcomes = receive(helper, valid)
        answered.append(len(outcomes or ()))
        return outcomes

    monkeypatch.setattr(workers.Helper, "receive", counted)
    with open_vault(tmp_path / "a") as vault:
        helped = indexed(vault, tmp_path / "notes")
    assert answered == [10] * 5 + [2]  # every batch after the first came from the helper
    monkeypatch.setenv("MEMTROVE_INDEX_WORKERS", "0")
    with open_vault(tmp_path / "b") as vault:
        alone = indexed(vault, tmp_path / "notes")
    assert helped == alone
    assert helped[0][0] == 61 and len(helped[1]) == 61
    assert all(KEY not in str(row) for row in helped[1])  # redacted in the helper too


def test_a_helper_that_fails_leaves_the_work_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helper_for_any_size: None
) -> None:
    corpus(tmp_path / "notes")
    with open_vault(tmp_path / "b") as vault:
        monkeypatch.setenv("MEMTROVE_INDEX_WORKERS", "0")
        expected = indexed(vault, tmp_path / "notes")
    monkeypatch.delenv("MEMTROVE_INDEX_WORKERS")
    real_executable = sys.executable
    for program in (
        "import sys; sys.exit(3)",
        "print('not pickle')",
        "import time; time.sleep(0.2)",
    ):

        def dud(module: str, code: str = program) -> workers.Helper | None:
            import subprocess

            return workers.Helper(
                subprocess.Popen(
                    [real_executable, "-c", code],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
            )

        monkeypatch.setattr(workers.Helper, "start", dud)
        where = tmp_path / f"dud-{abs(hash(program))}"
        with open_vault(where) as vault:
            assert indexed(vault, tmp_path / "notes") == expected


def test_the_helper_loop_redacts_with_extra_patterns(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "# A\n\nticket ZZ-12345 and key " + KEY)
    collection = Collection("notes", tmp_path)
    files = scan_collection(tmp_path, "**/*.md").files
    extra = (("ticket", r"ZZ-\d+"),)
    requests = io.BytesIO()
    pickle.dump((collection, files, extra, False), requests)
    pickle.dump((collection, files, None, True), requests)
    requests.seek(0)
    answers = io.BytesIO()
    workers.serve(requests, answers)
    answers.seek(0)
    redacted, verbatim = pickle.load(answers), pickle.load(answers)
    assert redacted == [prepare_file(collection, files[0], Redactor(extra).redact)]
    assert "[REDACTED:ticket]" in redacted[0].item.text and KEY not in redacted[0].item.text
    assert redacted[0].item.tokens is None
    item = verbatim[0].item
    assert KEY in item.text
    # asked to tokenize: the text-index row of path, title and body, as the index would
    assert item.tokens is not None
    columns = [f"notes/{item.file.path}", item.title, item.parsed.body]
    numbers = array("i", item.tokens.numbers)
    assert item.tokens.sizes == tuple(len(document_tokens(text)) for text in columns)
    assert [item.tokens.terms[n] for n in numbers] == [
        token for text in columns for token in document_tokens(text)
    ]


def test_off_and_one_processor_mean_no_helper(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMTROVE_INDEX_WORKERS", "off")
    assert not workers.helper_wanted()
    monkeypatch.delenv("MEMTROVE_INDEX_WORKERS")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert not workers.helper_wanted()


def _text_index_rows(vault: Vault) -> list[list[tuple[Any, ...]]]:
    connection = vault._connection
    return [
        [tuple(row) for row in connection.execute(sql).fetchall()]
        for sql in (
            "SELECT idx, term, docs, c0, c1, c2, lengths, positions FROM text_postings "
            "ORDER BY idx, term, seg",
            "SELECT idx, doc_id, sizes FROM text_rows ORDER BY idx, doc_id",
            "SELECT idx, rows, tokens FROM text_totals ORDER BY idx",
        )
    ]


@pytest.mark.skipif(POSTGRES_OFF, reason="no PostgreSQL server")
def test_on_postgresql_the_helper_tokenizes_what_this_process_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helper_for_any_size: None
) -> None:
    corpus(tmp_path / "notes")
    (tmp_path / "notes" / "cjk.md").write_text("# 東京の会議\n\nnaïve café, tab\u2082ed terms\n")
    tokenized: list[bool] = []
    prepare = workers.prepare_file

    def seen(*args: Any) -> Any:
        tokenized.append(bool(args[3:] and args[3]))
        return prepare(*args)

    monkeypatch.setattr(workers, "prepare_file", seen)  # this process's reads
    taken: list[bool] = []
    add_tokenized = Batch.add_tokenized

    def counted(batch: Batch, doc_id: int, row: Any) -> bool:
        taken.append(add_tokenized(batch, doc_id, row))
        return taken[-1]

    monkeypatch.setattr(Batch, "add_tokenized", counted)
    results = []
    for helper in ("1", "0"):
        monkeypatch.setenv("MEMTROVE_INDEX_WORKERS", helper)
        with (
            fresh_schema() as location,
            Vault.open(location, config_dir=tmp_path / helper) as vault,
        ):
            summary = indexed(vault, tmp_path / "notes")
            results.append((summary, _text_index_rows(vault)))
    assert results[0] == results[1]
    assert len(results[0][1][0]) > 50  # postings of many terms
    assert not any(tokenized)  # this process never tokenizes ahead: its index does
    assert len(taken) == 53 and all(taken)  # the batches after the first: the helper's rows
