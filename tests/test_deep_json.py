"""JSON nested past Python's recursion limit (``[`` a hundred thousand times), from a model's
answer, a transcript or a file from elsewhere, is malformed JSON like any other: each reader
answers as for garbage, where a RecursionError used to escape."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.graph.amem_notes import extract_json, parse_note_answer
from memtrove.mine.summaries import tool_line
from memtrove.mine.synthesize import parse_facts
from memtrove.retrieval.intent_classifier import parse_llm_intent
from memtrove.retrieval.planner import parse_plan

DEEP = "[" * 100_000
CLAWMEM = Path(__file__).resolve().parents[2] / "shared" / "bench" / "clawmem-vault"


def test_model_answers_nested_too_deep_are_no_answer() -> None:
    assert extract_json(DEEP, "[") is None
    assert extract_json('{"a": ' * 100_000, "{") is None
    assert parse_facts(DEEP) is None
    assert parse_note_answer('{"keywords": ' + DEEP) is None
    assert parse_llm_intent('{"intent": "WHY", "x": ' + DEEP + "}") is None
    assert parse_plan('{"clauses": ' + DEEP + "}") == []


def test_tool_arguments_nested_too_deep_are_shown_as_text() -> None:
    assert tool_line("Bash", DEEP).startswith("[Bash: [[[")


@pytest.mark.skipif(not (CLAWMEM / "index.sqlite").is_file(), reason="no ClawMem vault")
def test_clawmem_tags_nested_too_deep_or_not_a_list(vault: Vault, tmp_path: Path) -> None:
    copy = tmp_path / "index.sqlite"
    shutil.copy(CLAWMEM / "index.sqlite", copy)
    copy.chmod(0o644)
    with sqlite3.connect(copy) as connection:
        for path, tags in [
            ("19308-number-literals.md", DEEP),
            ("15292-generics.md", "5"),
            ("12302-release-proposal.md", '"release"'),
        ]:
            connection.execute("UPDATE documents SET tags = ? WHERE path = ?", (tags, path))
    connection.close()
    report = vault.portable.import_clawmem(copy)
    assert report.documents["added"] == 38
    tags = dict(
        vault._connection.execute(
            "SELECT path, tags FROM documents WHERE path IN (?, ?, ?)",
            ("19308-number-literals.md", "15292-generics.md", "12302-release-proposal.md"),
        ).fetchall()
    )
    assert tags["15292-generics.md"] == '["5"]'
    assert tags["12302-release-proposal.md"] == '["release"]'
    assert tags["19308-number-literals.md"] == json.dumps(["[" * 100])  # one tag, cut at 100
