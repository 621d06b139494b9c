"""``--method surfacing``: what context-surfacing injects, scored (eval.surfacing)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from memtrove import ConfigError, Vault
from memtrove.cli import app
from memtrove.db.connection import open_connection
from memtrove.eval.beir import run_beir
from memtrove.eval.gold import parse_gold_line, run_gold
from memtrove.eval.locomo import run_locomo
from memtrove.eval.surfacing import Surfacer
from tests.conftest import where, write
from tests.eval.conftest import write_jsonl

THREAD = [
    # A question, then a follow-up that names nothing itself.
    {"id": "t1", "prompt": "How does the thumbnail worker decode HEIC uploads?",
     "session": "a", "gold_evidence": [{"collection": "notes", "path": "heic.md"}]},
    {"id": "t2", "prompt": "and what about the fallback?", "session": "a",
     "gold_evidence": [{"collection": "notes", "path": "heic.md"}]},
]  # fmt: skip


@pytest.fixture
def notes_vault(vault: Vault, notes: Path) -> Vault:
    write(notes, "heic.md", "# HEIC decoding\n\nThe thumbnail worker decodes HEIC uploads "
          "with libheif; the fallback converts through ImageMagick when libheif fails.\n")  # fmt: skip
    write(notes, "fallbacks.md", "# Fallbacks for payments\n\nThe fallback provider takes "
          "card payments when the main provider is down, after two retries.\n")  # fmt: skip
    write(notes, "lisbon.md", "# Lisbon\n\nTrams, tiles and custard tarts by the river.\n")
    vault.add_collection(notes, name="notes")
    vault.update()
    return vault


def test_the_injected_documents_are_the_ranking(notes_vault: Vault) -> None:
    surfacer = Surfacer(notes_vault)
    results = surfacer("How does the thumbnail worker decode HEIC uploads?", 10)
    assert [r.path for r in results][:1] == ["heic.md"]
    assert results.stages == ["surfacing"] and surfacer.tokens and surfacer.tokens[0] > 0
    assert list(surfacer("zebra migration patterns", 10)) == []  # nothing injected


def test_gates_are_off_for_the_eval(notes_vault: Vault) -> None:
    # A short prompt the hook's length gate would stop still gets an answer.
    assert [r.path for r in Surfacer(notes_vault)("HEIC?", 10)][:1] == ["heic.md"]


def usage_rows(vault: Vault) -> int:
    """Counted on a connection of its own: what the vault holds, committed."""
    connection = open_connection(where(vault))
    try:
        return int(connection.execute("SELECT COUNT(*) FROM context_usage").fetchone()[0])
    finally:
        connection.close()


def test_fresh_questions_leave_no_trace(notes_vault: Vault) -> None:
    Surfacer(notes_vault)("How does the thumbnail worker decode HEIC uploads?", 10)
    assert usage_rows(notes_vault) == 0


def test_a_session_carries_lookback(notes_vault: Vault) -> None:
    examples = [parse_gold_line(json.dumps(row)) for row in THREAD]
    fresh = run_gold(notes_vault, examples, method="surfacing")
    session = run_gold(notes_vault, examples, method="surfacing", session=True)
    # Fresh, the follow-up's "fallback" finds the payments note first; in the session it
    # borrows the HEIC question and finds the HEIC note.
    assert fresh.metrics["MRR"] < 1.0
    assert session.metrics["MRR"] == 1.0
    assert session.details["session"] is True and session.details["tokens"]["max"] > 0
    # The session ran on a scratch copy: the vault keeps no usage rows.
    assert usage_rows(notes_vault) == 0


def test_gold_prompt_and_session_fields() -> None:
    parsed = parse_gold_line(json.dumps(THREAD[1]))
    assert parsed.query == "and what about the fallback?" and parsed.session == "a"
    with pytest.raises(ValueError, match="exactly one of 'query' and 'prompt'"):
        parse_gold_line(json.dumps({**THREAD[0], "query": "also"}))


def test_context_mode_runs_the_hook(notes_vault: Vault) -> None:
    row = {**THREAD[0], "mode": "context"}
    report = run_gold(notes_vault, [parse_gold_line(json.dumps(row))])
    assert report.details["methods"] == {"surfacing": 1} and report.metrics["MRR"] == 1.0


def test_locomo_and_beir_run_surfacing(locomo_file: Path, beir_folder: Path) -> None:
    fresh = run_locomo(locomo_file, "surfacing")
    session = run_locomo(locomo_file, "surfacing", session=True)
    assert fresh.n == session.n > 0 and session.session and fresh.tokens["max"] > 0
    assert 0.0 < fresh.metrics["all"]["R@10"] <= 1.0
    assert "hit@3" in fresh.metrics["all"]
    beir = run_beir(beir_folder, "surfacing", session=True)
    assert beir.n == 3 and beir.details["tokens"]


def test_unknown_profile_is_a_config_error(notes_vault: Vault) -> None:
    with pytest.raises(ConfigError, match="unknown profile"):
        Surfacer(notes_vault, profile="turbo")


def test_cli(run_eval: Callable[..., Result], locomo_file: Path, tmp_path: Path) -> None:
    out = run_eval("locomo", str(locomo_file), "-m", "surfacing", "--session").stdout
    assert "method=surfacing  one session" in out and "injected  mean" in out
    data: dict[str, Any] = json.loads(
        run_eval(
            "locomo", str(locomo_file), "-m", "surfacing", "--hook-vectors", "off", "--json"
        ).stdout
    )
    assert data["method"] == "surfacing" and data["tokens"]["max"] > 0
    gold = write_jsonl(tmp_path / "g.jsonl", THREAD)
    missing = run_eval("gold", str(gold), "--method", "surfacing", "--session", code=1)
    assert "no vault at" in missing.stderr  # evaluating a vault that is not there
    assert CliRunner().invoke(app, ["init"]).exit_code == 0
    run_eval("gold", str(gold), "--method", "surfacing", "--session", code=0)
