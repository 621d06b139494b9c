"""What the agent receives, judged: injected entries and tokens, their precision, whether a
useful document was injected, and what prompts that need no memory got (eval.injection)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from memtrove import Vault
from memtrove.eval.gold import parse_gold_line, run_gold
from memtrove.eval.injection import InjectedPrompt, injection_summary
from tests.conftest import write
from tests.eval.conftest import write_jsonl

HEIC = {"collection": "notes", "path": "heic.md"}
SESSION = [
    {"id": "p1", "prompt": "How does the thumbnail worker decode HEIC uploads?",
     "session": "a", "gold_evidence": [HEIC]},
    {"id": "p2", "prompt": "and what about the fallback for HEIC thumbnails?", "session": "a",
     "gold_evidence": [HEIC]},
    {"id": "p3", "prompt": "thanks, now run the tests", "session": "a", "gold_evidence": []},
    {"id": "p4", "prompt": "which provider takes card payments when the main one is down?",
     "session": "a", "gold_evidence": [{"collection": "notes", "path": "fallbacks.md"}]},
]  # fmt: skip


def _notes(vault: Vault, notes: Path) -> Vault:
    write(notes, "heic.md", "# HEIC decoding\n\nThe thumbnail worker decodes HEIC uploads "
          "with libheif; the fallback converts through ImageMagick when libheif fails.\n")  # fmt: skip
    write(notes, "fallbacks.md", "# Fallbacks for payments\n\nThe fallback provider takes "
          "card payments when the main provider is down, after two retries.\n")  # fmt: skip
    write(notes, "heic-copy.md", "# HEIC decoding\n\nThe thumbnail worker decodes HEIC uploads "
          "with libheif; the fallback converts through ImageMagick when libheif fails.\n")  # fmt: skip
    write(notes, "lisbon.md", "# Lisbon\n\nTrams, tiles and custard tarts by the river.\n")
    vault.add_collection(notes, name="notes")
    vault.update()
    return vault


@pytest.fixture
def notes_vault(vault: Vault, notes: Path) -> Vault:
    return _notes(vault, notes)


def prompt(
    identifier: str, entries: list[tuple[str, ...]], tokens: int, useful: set[str]
) -> InjectedPrompt:
    return InjectedPrompt(identifier, tuple(entries), tokens, frozenset(useful))


def test_empty_gold_is_a_prompt_that_needs_no_memory() -> None:
    parsed = parse_gold_line(json.dumps(SESSION[2]))
    assert parsed.gold_evidence == () and parsed.session == "a"
    for bad in ({}, "notes/heic.md", None, 3):
        with pytest.raises(ValueError, match="'gold_evidence' must be a list"):
            parse_gold_line(json.dumps({**SESSION[2], "gold_evidence": bad}))


def test_precision_is_per_prompt_over_prompts_that_injected() -> None:
    rows = [
        # 1 useful of 4: .25
        prompt("a", [("n/a.md",), ("n/b.md",), ("n/c.md",), ("n/d.md",)], 400, {"n/a.md"}),
        # 1 useful of 1: 1.0; the other useful document was not injected
        prompt("b", [("n/a.md",)], 100, {"n/a.md", "n/z.md"}),
        # needs memory, injected nothing: no precision, no right document
        prompt("c", [], 0, {"n/a.md"}),
        # needs no memory, injected two entries: precision 0
        prompt("d", [("n/a.md",), ("n/b.md",)], 200, set()),
        # needs no memory and got nothing: the ideal
        prompt("e", [], 0, set()),
    ]
    summary = injection_summary(rows)
    assert summary["prompts"] == 5 and summary["prompts_injected"] == 3
    assert summary["precision"] == pytest.approx((0.25 + 1.0 + 0.0) / 3, abs=1e-4)
    assert summary["right_document"] == pytest.approx(2 / 3, abs=1e-4)
    assert summary["right_document_prompts"] == 2
    assert summary["entries"] == {"mean": 1.4, "p50": 1.0, "max": 4.0}
    assert summary["tokens"]["mean"] == 140.0 and summary["tokens"]["max"] == 400.0
    assert summary["answerable"]["prompts"] == 3
    assert summary["answerable"]["tokens"]["mean"] == pytest.approx(166.7)
    assert summary["no_memory"] == {
        "prompts": 2,
        "prompts_injected": 1,
        "entries": {"mean": 1.0, "p50": 1.0, "max": 2.0},
        "tokens": {"mean": 100.0, "p50": 100.0, "max": 200.0},
    }


@pytest.mark.parametrize(
    ("entries", "useful_entries"),
    [
        ([("n/copy.md", "n/a.md")], 1),  # the useful document is a collapsed copy
        ([("n/a.md",), ("n/a-copy.md", "n/a.md")], 2),  # each entry is judged on its own
        ([("n/b.md", "n/c.md")], 0),
    ],
)
def test_an_entry_is_useful_through_any_of_its_copies(
    entries: list[tuple[str, ...]], useful_entries: int
) -> None:
    row = prompt("a", entries, 50, {"n/a.md"})
    assert row.useful_entries == useful_entries
    assert injection_summary([row])["right_document"] == (1.0 if useful_entries else 0.0)


def test_no_prompts_summarise_to_zeros() -> None:
    summary = injection_summary([])
    assert summary["prompts"] == 0 and summary["precision"] == 0.0
    assert summary["right_document"] == 0.0 and summary["no_memory"]["prompts_injected"] == 0


def test_surfacing_reports_what_each_prompt_received(notes_vault: Vault) -> None:
    examples = [parse_gold_line(json.dumps(row)) for row in SESSION]
    report = run_gold(notes_vault, examples, method="surfacing", session=True)
    # The no-memory prompt is not ranked, but what it received is counted.
    assert report.n == 3 and report.skipped["no_gold_examples"] == 1
    injection = report.details["injection"]
    prompts = {row["id"]: row for row in report.details["prompts"]}
    assert injection["prompts"] == 4 and list(prompts) == ["p1", "p2", "p3", "p4"]
    assert injection["no_memory"]["prompts"] == 1
    assert injection["answerable"]["prompts"] == 3
    first = prompts["p1"]
    assert first["injected"] and first["useful_entries"] >= 1
    assert first["tokens"] > 0 and first["entries"] == len(first["injected"])
    assert prompts["p3"]["useful"] == [] and prompts["p3"]["useful_entries"] == 0
    assert 0.0 < injection["precision"] <= 1.0
    assert injection["right_document_prompts"] == sum(
        1 for row in prompts.values() if row["useful"] and row["useful_entries"]
    )
    assert injection["tokens"]["mean"] == pytest.approx(
        sum(row["tokens"] for row in prompts.values()) / 4, abs=0.1
    )


def test_other_methods_skip_prompts_without_gold(notes_vault: Vault) -> None:
    examples = [parse_gold_line(json.dumps(row)) for row in SESSION]
    report = run_gold(notes_vault, examples, method="bm25")
    assert report.n == 3 and report.skipped["no_gold_examples"] == 1
    assert report.details["methods"] == {"bm25": 3}
    assert "injection" not in report.details and "prompts" not in report.details


def test_cli_prints_and_returns_the_injection_figures(
    run_eval: Callable[..., Result], tmp_path: Path
) -> None:
    notes = tmp_path / "cli-notes"
    notes.mkdir()
    with Vault.open(tmp_path / "cli" / "vault.sqlite", config_dir=tmp_path / "cli" / "config") as v:
        _notes(v, notes)
    gold = write_jsonl(tmp_path / "gold.jsonl", SESSION)
    human = run_eval("gold", str(gold), "--method", "surfacing", "--session").stdout
    assert "precision " in human and "right doc " in human and "entries   mean" in human
    assert "no memory " in human and "/1 prompts injected" in human
    data: dict[str, Any] = json.loads(
        run_eval("gold", str(gold), "--method", "surfacing", "--session", "--json").stdout
    )
    assert data["injection"]["prompts"] == 4 and len(data["prompts"]) == 4
    assert data["skipped"]["no_gold_examples"] == 1
    plain = json.loads(run_eval("gold", str(gold), "--method", "bm25", "--json").stdout)
    assert "injection" not in plain and plain["n"] == 3


def test_a_prompt_row_round_trips_with_its_copies() -> None:
    row = prompt("a", [("n/copy.md", "n/a.md"), ("n/b.md",)], 80, {"n/a.md"})
    data = row.to_dict()
    assert data["injected"] == ["n/copy.md", "n/b.md"] and data["copies"] == {
        "n/copy.md": ["n/a.md"]
    }
    back = InjectedPrompt.from_dict(json.loads(json.dumps(data)))
    assert back.entries == row.entries and back.useful_entries == 1 and back.tokens == 80
