"""LoCoMo dev written out as Claude Code session files and as a ChatGPT export, and mined:
the retrieval eval over the mined collection (one document per exchange, each standing for
its turns) against the per-turn ``eval locomo``, same method, same questions."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtrove.errors import ConfigError
from memtrove.eval.locomo import (
    LocomoReport,
    conversation_turns,
    exchange_metrics,
    load_locomo,
    parse_session_date,
    run_locomo,
)
from memtrove.eval.locomo_mined import FORMATS, exchange_turns, write_sessions

LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "bench" / "locomo" / "locomo-dev.json"
needs_locomo = pytest.mark.skipif(not LOCOMO.is_file(), reason="bench/locomo is not here")


@needs_locomo
@pytest.mark.parametrize("format", FORMATS)
def test_every_turn_lands_in_one_exchange(tmp_path: Path, format: str) -> None:
    sample = load_locomo(LOCOMO)[0]
    turns = conversation_turns(sample)
    write_sessions(sample, turns, tmp_path, parse_session_date, format)
    held = [dia_id for ids in exchange_turns(tmp_path, format).values() for dia_id in ids]
    assert sorted(held) == sorted(turn.dia_id for turn in turns)


def _equal_text(report: LocomoReport) -> float:
    note = next(note for note in report.notes if note.startswith("mined:"))
    return float(note.rsplit(" ", 1)[1])


@needs_locomo
@pytest.mark.slow
def test_mined_recall_matches_the_per_turn_eval() -> None:
    """Ten exchanges hold about twenty turns, so the mined R@10 may only be higher; over the
    first ten turns (the same text) BM25 finds as much as it does one turn a document."""
    per_turn = run_locomo(LOCOMO, "bm25")
    turn_r10 = per_turn.metrics["all"]["R@10"]
    for format in FORMATS:
        mined = run_locomo(LOCOMO, "bm25", mined=format)
        assert per_turn.n == mined.n == 997  # 999 questions, 2 without valid evidence
        mined_r10 = mined.metrics["all"]["R@10"]
        assert mined_r10 >= turn_r10 - 0.02, (format, turn_r10, mined_r10)
        assert abs(_equal_text(mined) - turn_r10) <= 0.02, (format, turn_r10, mined.notes)
    with pytest.raises(ConfigError, match="mined must be one of"):
        run_locomo(LOCOMO, "bm25", mined="slack", conversations=1)


@needs_locomo
def test_a_mined_run_also_says_the_recall_at_equal_text() -> None:
    """R@10 counts the turns of the ten exchanges a search returns; the note gives the recall
    over their first ten turns, which can only be as high or lower."""
    report = run_locomo(LOCOMO, "bm25", mined="chatgpt", conversations=1)
    equal = _equal_text(report)
    assert 0.0 < equal < report.metrics["all"]["R@10"] - 0.02  # five exchanges fewer
    assert not any(
        n.startswith("mined:") for n in run_locomo(LOCOMO, "bm25", conversations=1).notes
    )


def test_exchange_metrics_count_the_turns_of_the_first_k_documents() -> None:
    documents = [["D1:1", "D1:2"], ["D1:5"], ["D2:3", "D2:4"]] + [["D9:1"]] * 8
    values = exchange_metrics(documents, ["D1:5", "D2:4", "D3:1"])
    assert values["MRR"] == 0.5  # the second document holds the first evidence
    assert values["hit@3"] == 1.0
    assert values["R@5"] == values["R@10"] == pytest.approx(2 / 3)
    assert values["SessR@5"] == pytest.approx(2 / 3)  # sessions 1 and 2 of 1, 2, 3
    late = exchange_metrics([["D9:1"]] * 10 + [["D1:5"]], ["D1:5"])
    assert late["MRR"] == late["R@10"] == late["hit@3"] == 0.0  # the eleventh is not read
