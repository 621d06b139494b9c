"""document_tokens and name_tokens against FTS5 itself: each text goes into an FTS5 table
with the same tokenizer, and its tokens come back in order through fts5vocab. The corpora
are read from the shared bench folder beside the repository (skipped when it is absent)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlean
from hypothesis import given, settings
from hypothesis import strategies as st

from memtrove.db.text_tokens import document_tokens, name_tokens
from memtrove.text import segment_cjk

BENCH = Path(__file__).resolve().parents[2].parent / "shared" / "bench"
DOCUMENTS = "porter unicode61"
NAMES = "unicode61 remove_diacritics 2"
OURS: dict[str, Callable[[str], list[str]]] = {DOCUMENTS: document_tokens, NAMES: name_tokens}


class Fts5:
    """An in-memory FTS5 table per tokenizer; tokens read back as FTS5 stores them."""

    def __init__(self) -> None:
        self.db = sqlean.connect(":memory:")
        # A stemmed token can end inside a multi-byte character: keep its bytes.
        self.db.text_factory = lambda raw: raw.decode("utf-8", "surrogateescape")

    def tokens(self, tokenize: str, texts: list[str]) -> list[list[str]]:
        self.db.execute("DROP TABLE IF EXISTS v")
        self.db.execute("DROP TABLE IF EXISTS t")
        self.db.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize = '{tokenize}')")
        self.db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        self.db.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(texts))
        found: list[list[str]] = [[] for _ in texts]
        rows = self.db.execute("SELECT doc, term FROM v ORDER BY doc, offset")
        for doc, term in rows:
            found[doc].append(term)
        return found


@pytest.fixture(scope="module")
def fts5() -> Iterator[Fts5]:
    engine = Fts5()
    yield engine
    engine.db.close()


def compare(fts5: Fts5, tokenize: str, texts: list[str]) -> tuple[int, int]:
    """Assert equality text by text; return (texts, tokens) compared."""
    expected = fts5.tokens(tokenize, texts)
    ours = OURS[tokenize]
    mismatches = [
        (text[:200], want, got)
        for text, want in zip(texts, expected, strict=True)
        if (got := ours(text)) != want
    ]
    assert not mismatches, mismatches[:3]
    return len(texts), sum(map(len, expected))


def _bench(*parts: str) -> Path:
    path = BENCH.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent")
    return path


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _sample(paths: list[Path], count: int) -> list[Path]:
    return sorted(random.Random(7).sample(sorted(paths), min(count, len(paths))))


def _prose(folder: str, count: int) -> list[str]:
    paths = _sample(list(_bench("prose", folder).rglob("*.md")), count)
    return [path.read_text(encoding="utf-8", errors="replace") for path in paths]


def _locomo() -> list[str]:
    samples = json.loads(_bench("locomo", "locomo-dev.json").read_text(encoding="utf-8"))
    return [
        f"{turn['speaker']}: {turn['text']}"
        for sample in samples
        for key, session in sample["conversation"].items()
        if key.startswith("session_") and isinstance(session, list)
        for turn in session
    ]


def _transcripts() -> list[str]:
    texts: list[str] = []
    for path in sorted(_bench("mine").rglob("*")):
        if path.suffix in (".md", ".txt") and path.name != "README.md":
            texts.append(path.read_text(encoding="utf-8", errors="replace"))
        elif path.suffix == ".json":
            texts.extend(_strings(json.loads(path.read_text(encoding="utf-8"))))
        elif path.suffix == ".jsonl":
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    try:
                        texts.extend(_strings(json.loads(line)))
                    except json.JSONDecodeError:
                        continue
    unique = sorted({text for text in texts if text.strip()})
    return random.Random(7).sample(unique, min(6000, len(unique)))


CORPORA: dict[str, Callable[[], list[str]]] = {
    "go-proposals": lambda: _prose("go-proposals", 40),
    "k8s-keps": lambda: _prose("k8s-keps", 60),
    "locomo": _locomo,
    "transcripts": _transcripts,
}


@pytest.mark.parametrize("corpus", list(CORPORA))
def test_real_text_tokens_as_fts5(fts5: Fts5, corpus: str) -> None:
    texts = [segment_cjk(text) for text in CORPORA[corpus]()]
    for tokenize in OURS:
        counted = compare(fts5, tokenize, texts)
        print(f"{corpus} {tokenize}: {counted[0]} texts, {counted[1]} tokens")


def test_every_code_point_tokenizes_as_fts5(fts5: Fts5) -> None:
    """Each character between two letters and after a space: whether it separates, joins
    or starts a token, and what it folds to. Every code point of the first three planes, and
    a sample of the others (all of them, checked once, take ~30 s)."""
    codes = [code for code in range(1, 0x30000) if not 0xD800 <= code <= 0xDFFF]
    codes += random.Random(7).sample(range(0x30000, 0x110000), 10000)
    texts = [f"a{chr(code)}b {chr(code)}b" for code in codes]
    for tokenize in OURS:
        compare(fts5, tokenize, texts)


# Hypothesis: mixed scripts, with the awkward parts of each.
_PIECES = st.sampled_from(
    [
        "running", "generalizations", "caresses", "ponies", "agreed", "hopping", "sky",
        "controlling", "rational", "y", "by", "eed", "ied", "sses", "ing", "ed", "s",
        "café", "Ærøskøbing", "Đặng", "naïve", "ŒUVRE", "ǕBER", "İstanbul", "straße",
        "λόγος", "ΣΟΦΊΑ", "Москва", "ЁЛКА", "中文字", "日本語", "한국어", "ｶﾀｶﾅ",
        "123", "٣٤٥", "e\u0301", "a\u0308\u0301", "\u0301x", "🤖", "👍🏽", "🇫🇷", "❤️",
        "don't", "it’s", "l'été", "—", "…", "-", "_", "@", "#", ".", ",", "\t", "\n",
        "\u200b", "\u00a0", "\ufeff", "ｆｕｌｌ", "ﬁne", "\u1041ed", "a\u1041ing",
        "x" * 70, "é" * 40, "ab" * 33, "ational" * 10,
    ]
)  # fmt: skip
_CHARS = st.characters(blacklist_categories=("Cs",), min_codepoint=1)
_TEXT = st.lists(
    st.one_of(_PIECES, st.text(_CHARS, max_size=12), st.sampled_from([" ", " ", "  "])),
    max_size=25,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(_TEXT)
def test_generated_text_tokens_as_fts5(fts5: Fts5, text: str) -> None:
    texts = [text, segment_cjk(text)]
    for tokenize in OURS:
        compare(fts5, tokenize, texts)


@pytest.mark.parametrize(
    "text",
    [
        "a\u1041ed a\u1041ing",  # the stemmer cuts the doubled last byte of U+1041
        "x" * 40000 + " y",  # FTS5 keeps 32,768 bytes of a token
        "é" * 20000,
        "\u00e9" * 16383 + "ab",
        "日" * 11000,
        "",
        "\u0301\u0301 \u0301a",
    ],
)
def test_edge_texts_tokenize_as_fts5(fts5: Fts5, text: str) -> None:
    for tokenize in OURS:
        compare(fts5, tokenize, [text])


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(min_codepoint=1, max_codepoint=127), max_size=80))
def test_ascii_text_tokens_as_fts5(fts5: Fts5, text: str) -> None:
    """ASCII text takes a path of its own (bytes translated, then split)."""
    for tokenize in OURS:
        compare(fts5, tokenize, [text, text + " running caresses"])
