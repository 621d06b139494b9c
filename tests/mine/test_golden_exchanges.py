"""A few exchanges rendered as documents, against golden files written by hand from the
source lines (tests/mine/golden/): frontmatter, speakers, times and tool summaries."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from memtrove.mine.exchanges import Skips, exchanges
from memtrove.mine.formats import claude_code, codex, text
from memtrove.mine.writer import render

BENCH = Path(__file__).resolve().parents[3] / "shared" / "bench" / "mine"
GOLDEN = Path(__file__).parent / "golden"
CASES = [
    (
        claude_code,
        "claude-code/codemie-ai-codemie-code__-tmp-private/4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl",
        2,
        "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl",
        "claude-code-tool.md",
    ),
    (
        codex,
        "codex/daaain-claude-code-log__rollout-2026-01-02T03-04-05-"
        "11111111-1111-4111-8111-111111111111.jsonl",
        0,
        "rollout.jsonl",
        "codex-tools.md",
    ),
    (
        text,
        "plain-text/ooboai-oobo__transcript.txt",
        1,
        "ooboai-oobo__transcript.txt",
        "text-labels.md",
    ),
]


@pytest.mark.skipif(not BENCH.is_dir(), reason="bench/mine is not here")
@pytest.mark.parametrize(("module", "source", "ordinal", "name", "golden"), CASES)
def test_an_exchange_renders_as_its_golden_document(
    module: ModuleType, source: str, ordinal: int, name: str, golden: str
) -> None:
    (conversation,) = module.read(BENCH / source, Skips())
    exchange = list(exchanges(conversation))[ordinal]
    document = render(exchange, name)
    assert document is not None
    assert document.text == (GOLDEN / golden).read_text(encoding="utf-8")
