"""The Porter stemmer loaded alone stems as ``snowballstemmer.stemmer("porter")`` does."""

from __future__ import annotations

import subprocess
import sys

import snowballstemmer
from hypothesis import given, settings
from hypothesis import strategies as st

from memtrove.retrieval.stemming import porter_stemmer
from tests.conftest import EXAMPLES

WORD = st.text(alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyzéü'"), min_size=1, max_size=14)


def test_the_examples_words_stem_alike() -> None:
    words = sorted(
        {word.lower() for path in EXAMPLES.rglob("*.md") for word in path.read_text().split()}
    )
    assert len(words) > 1000
    assert porter_stemmer().stemWords(words) == snowballstemmer.stemmer("porter").stemWords(words)


@settings(max_examples=300, deadline=None)
@given(word=WORD)
def test_any_word_stems_alike(word: str) -> None:
    assert porter_stemmer().stemWord(word) == snowballstemmer.stemmer("porter").stemWord(word)


def test_snowballs_other_languages_are_not_loaded() -> None:
    probe = (
        "import sys; from memtrove.retrieval.stemming import porter_stemmer; "
        "print(porter_stemmer().stemWord('caching'), "
        "sorted(m for m in sys.modules if m.startswith('snowballstemmer')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["cach", "[]"]
