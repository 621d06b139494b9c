"""The Porter stemmer memtrove loads (PyStemmer's, in C) stems as snowball's pure-Python
``porter`` module does."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st
from snowballstemmer.porter_stemmer import PorterStemmer

from memtrove.retrieval.stemming import porter_stemmer
from tests.conftest import EXAMPLES

WORD = st.text(alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyzéü'"), min_size=1, max_size=14)


def test_the_examples_words_stem_alike() -> None:
    words = sorted(
        {word.lower() for path in EXAMPLES.rglob("*.md") for word in path.read_text().split()}
    )
    assert len(words) > 1000
    assert porter_stemmer().stemWords(words) == PorterStemmer().stemWords(words)


@settings(max_examples=300, deadline=None)
@given(word=WORD)
def test_any_word_stems_alike(word: str) -> None:
    assert porter_stemmer().stemWord(word) == PorterStemmer().stemWord(word)


def test_the_c_stemmer_is_the_one_used() -> None:
    assert type(porter_stemmer()).__module__ == "Stemmer"


def test_snowballs_other_languages_are_not_loaded() -> None:
    probe = (
        "import sys; from memtrove.retrieval.stemming import porter_stemmer; "
        "print(porter_stemmer().stemWord('caching'), "
        "sorted(m for m in sys.modules if m.startswith('snowballstemmer')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["cach", "[]"]
