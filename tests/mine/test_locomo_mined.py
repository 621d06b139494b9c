"""LoCoMo dev written out as Claude Code session files and as a ChatGPT export, and mined:
the retrieval eval over the mined collection (one document per exchange, each standing for
its turns) against the per-turn ``eval locomo``, same method, same questions."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtrove.errors import ConfigError
from memtrove.eval.locomo import conversation_turns, load_locomo, parse_session_date, run_locomo
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


@needs_locomo
@pytest.mark.slow
def test_mined_recall_matches_the_per_turn_eval() -> None:
    per_turn = run_locomo(LOCOMO, "bm25")
    turn_r10 = per_turn.metrics["all"]["R@10"]
    for format in FORMATS:
        mined = run_locomo(LOCOMO, "bm25", mined=format)
        assert per_turn.n == mined.n == 997  # 999 questions, 2 without valid evidence
        mined_r10 = mined.metrics["all"]["R@10"]
        assert abs(mined_r10 - turn_r10) <= 0.02, (format, turn_r10, mined_r10)
    with pytest.raises(ConfigError, match="mined must be one of"):
        run_locomo(LOCOMO, "bm25", mined="slack", conversations=1)


@needs_locomo
def test_a_mined_run_also_says_the_recall_over_whole_exchanges() -> None:
    """R@10 counts the first ten turns (about five exchanges); the note gives the recall over
    every turn of the ten exchanges a search returns, which can only be as high or higher."""
    report = run_locomo(LOCOMO, "bm25", mined="chatgpt", conversations=1)
    note = next(note for note in report.notes if note.startswith("mined:"))
    whole = float(note.rsplit(" ", 1)[1])
    assert report.metrics["all"]["R@10"] <= whole <= 1.0
    assert whole > report.metrics["all"]["R@10"] + 0.02  # five more exchanges, more turns
    assert not any(
        n.startswith("mined:") for n in run_locomo(LOCOMO, "bm25", conversations=1).notes
    )
