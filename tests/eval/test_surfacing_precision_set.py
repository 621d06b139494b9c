"""The judged agent-session set (tests/benchmarks/agent_sessions.jsonl) is what it claims:
working sessions over both real corpora, every judged document a real file of its corpus
(read from ../shared/bench at test time), and prompts that need no memory judged empty."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from memtrove.eval.gold import load_gold

SET = Path(__file__).resolve().parent.parent / "benchmarks" / "agent_sessions.jsonl"
PROSE = Path(__file__).resolve().parents[3] / "shared" / "bench" / "prose"
CORPORA = {"go": PROSE / "go-proposals", "keps": PROSE / "k8s-keps"}


def test_the_set_has_sessions_over_both_corpora() -> None:
    examples = load_gold(SET)
    sessions = Counter(example.session for example in examples)
    assert len(examples) >= 60 and len(sessions) >= 8 and None not in sessions
    corpora = Counter(example.tags[0] for example in examples)
    assert set(corpora) == set(CORPORA) and min(corpora.values()) >= 25
    for example in examples:
        # A session never mixes corpora: it is one engineer's conversation.
        assert example.session is not None and example.session.startswith(example.tags[0])
        assert example.mode == "surfacing"
    no_memory = [example for example in examples if "no-memory" in example.tags]
    assert no_memory and all(not example.gold_evidence for example in no_memory)
    assert all(example.gold_evidence for example in examples if example not in no_memory)
    assert sum("why" in example.tags for example in examples) >= 10


def test_every_judged_document_is_a_file_of_its_corpus() -> None:
    if not all(folder.is_dir() for folder in CORPORA.values()):
        pytest.skip(f"{PROSE} is not here")
    for example in load_gold(SET):
        for evidence in example.gold_evidence:
            path = CORPORA[evidence.collection] / evidence.path
            assert path.is_file(), f"{example.id}: {evidence.reference}"
            assert path.name not in ("LICENSE", "TEMPLATE.md")
            assert "0000-" not in evidence.path  # KEP templates are not answers
