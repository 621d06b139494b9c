"""The query-word tokenizer gives exactly the bundled tokenizer's ids, and a query vector
made without loading the model is exactly the one made with it."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import numpy as np
import pytest

from memtrove.models import wordllama
from memtrove.models.wordllama import WordLlamaEmbedder, _lower
from memtrove.models.wordllama_terms import TableRows, TermTokenizer, bpe
from memtrove.text import words

GO_PROPOSALS = Path(
    os.environ.get(
        "MEMTROVE_GO_PROPOSALS",
        Path(__file__).resolve().parents[3] / "shared" / "bench" / "prose" / "go-proposals",
    )
)
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def bundled() -> tuple[object, dict[str, int], dict[str, int], Path]:
    root = wordllama._bundled_root()
    source = wordllama._tokenizer_file(root)
    tokenizer, _ = wordllama._read_bundled(256)
    model = json.loads(source.read_text(encoding="utf-8"))["model"]
    ranks = {merge: rank for rank, merge in enumerate(model["merges"])}
    return tokenizer, model["vocab"], ranks, source


def _real_words() -> list[str]:
    texts = [path.read_text(encoding="utf-8") for path in sorted(EXAMPLES.rglob("*.md"))]
    if GO_PROPOSALS.is_dir():
        texts += [p.read_text(encoding="utf-8") for p in sorted(GO_PROPOSALS.glob("*.md"))[:40]]
    return sorted({_lower(word) for text in texts for word in words(text)})


def _invented_words(count: int) -> list[str]:
    alphabet = [
        chr(code)
        for code in [
            *range(33, 127),
            *range(0xC0, 0x250),
            *range(0x4E00, 0x4E40),
            *range(0x1F600, 0x1F620),
            0x301,
            0x2581,
            0x200B,
            0x20,
        ]
        if chr(code) != "<"
    ]
    chosen = random.Random(7)
    return ["".join(chosen.choices(alphabet, k=chosen.randint(1, 12))) for _ in range(count)]


def test_bpe_gives_the_tokenizers_ids_for_real_and_invented_words(bundled: tuple) -> None:
    tokenizer, vocabulary, ranks, _ = bundled
    samples = _real_words()
    assert len(samples) > 1000
    for word in [*samples, *_invented_words(3000)]:
        mine = bpe(
            word,
            lambda pieces: {p: vocabulary[p] for p in pieces if p in vocabulary},
            lambda pairs: {p: ranks[p] for p in pairs if p in ranks},
        )
        assert mine == tokenizer.encode(word, add_special_tokens=False).ids, word


def test_the_cached_tables_answer_like_the_tokenizer(bundled: tuple, tmp_path: Path) -> None:
    tokenizer, _, _, source = bundled
    terms = TermTokenizer(source, str(tmp_path))
    for word in ["kubernetes", "naïve", "東京", "x", "refresh-token", "ünïcödé"]:
        assert terms.ids(word) == tokenizer.encode(word, add_special_tokens=False).ids
    [cache] = list((tmp_path / "models").glob("wordllama-tokens-*.sqlite"))
    assert TermTokenizer(source, str(tmp_path)).ids("scheduler") is not None  # reused
    assert list((tmp_path / "models").iterdir()) == [cache]  # no temporary left behind
    assert terms.ids("<s>") is None  # special tokens: the real tokenizer answers


def test_no_cache_folder_or_a_broken_one_falls_back(bundled: tuple, tmp_path: Path) -> None:
    _, _, _, source = bundled
    assert TermTokenizer(source, None).ids("kubernetes") is None
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a folder", encoding="utf-8")
    assert TermTokenizer(source, str(blocked)).ids("kubernetes") is None
    damaged = tmp_path / "damaged"
    TermTokenizer(source, str(damaged)).ids("warm")
    [cache] = list((damaged / "models").glob("*.sqlite"))
    cache.write_bytes(b"not a database")
    assert TermTokenizer(source, str(damaged)).ids("kubernetes") is None


def test_rows_read_from_the_weights_file_are_the_tables(bundled: tuple) -> None:
    root = wordllama._bundled_root()
    rows = TableRows(wordllama._weights_file(root, 256), "embedding.weight")
    _, table = wordllama._read_bundled(256)
    ids = [0, 5, 31999, 413, 99999]  # the last one past the end: clipped like the model
    data = np.frombuffer(rows.read(ids), dtype=np.float16).reshape(len(ids), -1)
    assert np.array_equal(data, table[np.clip(ids, 0, len(table) - 1)])


def test_a_query_vector_without_the_model_is_the_models(tmp_path: Path) -> None:
    terms = [("kubernetes", 2.5), ("scheduler", 1.0), ("naïve", 0.4), ("東京", 1.2), ("the", 0.0)]
    light = WordLlamaEmbedder(cache_folder=str(tmp_path))
    light_vector = light.embed_terms(terms)
    assert light._model is None  # the model was never loaded
    loaded = WordLlamaEmbedder()
    loaded._load()
    assert np.array_equal(light_vector, loaded.embed_terms(terms))
    unweighted = [(word, 0.0) for word, _ in terms]
    assert np.array_equal(light.embed_terms(unweighted), loaded.embed_terms(unweighted))
    assert light._model is None
