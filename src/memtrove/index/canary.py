"""The geometry canary: does the embedder still place texts where it placed them before?

A model server can change under an unchanged model name (another quantization, a new
build, a context cut short, a different model loaded behind the same alias). Its vectors
then no longer match the stored ones, and nothing fails: searches just get worse. The
canary catches that before vectors are written.

A fixed, versioned set of probe texts is embedded through the embedder's own paths (document
and query formatting as the index uses them):

- a pair of paraphrases and an unrelated text: the paraphrases must be nearer each other
  than either is to the unrelated text (``pair``);
- a question and the passage that answers it (``echo``);
- two texts equal but for their last word (``terminus``): a model that reads only the end
  of its input, or a pooling bug, drops them apart;
- a passage and the same passage continued (``truncation``): a prefix must stay near its
  whole text.

Each *margin* is the similarity of the related pair minus that of the probe and the
unrelated text. A margin must clear an absolute floor (0.10), and, once a baseline exists,
half of the baseline's margin. The baseline is the probe vectors and margins of the first
healthy run of a *profile* (probe version, embedder identity, dimension), stored in
``embed_canary``; healthy runs never roll it forward (drift below the threshold could
otherwise walk it anywhere), only ``embed --force --recalibrate-canary`` replaces it.
*Drift*: each probe embedded now against its baseline vector, cosine at least 0.98.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memtrove.db.connection import Connection
from memtrove.errors import ModelResponseError
from memtrove.models.protocols import Embedder
from memtrove.retrieval.vectors import format_document_input, format_query_input
from memtrove.text import now_iso

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]

__all__ = [
    "ABSOLUTE_FLOOR",
    "BASELINE_RATIO",
    "CANARY_VERSION",
    "DRIFT_FLOOR",
    "PROBES",
    "Baseline",
    "CanaryResult",
    "cosine",
    "embed_probes",
    "load_baseline",
    "measure",
    "profile_key",
    "save_baseline",
]

CANARY_VERSION = 1
ABSOLUTE_FLOOR = 0.10
BASELINE_RATIO = 0.5
DRIFT_FLOOR = 0.98

_ANSWER = (
    "The backup job skips locked database files: copying a locked file could capture a half "
    "written page."
)
# probe id -> (how the index embeds it: "document" or "query", text). Changing a text
# means a new CANARY_VERSION: baselines are keyed by it.
PROBES: Mapping[str, tuple[str, str]] = {
    "paraphrase_a": ("document", "the old dog slept by the warm fireplace all evening"),
    "paraphrase_b": ("document", "all evening an old dog was sleeping near the warm fire"),
    "unrelated": ("document", "interest rates on government bonds rose in the third quarter"),
    "question": ("query", "backup job skipping locked database files"),
    "answer": ("document", _ANSWER),
    "terminus_a": (
        "document",
        "the release script builds the wheel, tags the commit and uploads the archive",
    ),
    "terminus_b": (
        "document",
        "the release script builds the wheel, tags the commit and uploads the checksum",
    ),
    "truncation": (
        "document",
        f"{_ANSWER} Locked files are tried again after the nightly maintenance window, once "
        "every writer has closed them, and the report lists the files that were late.",
    ),
}
# margin name -> (probe, its related probe); each minus the probe's similarity to "unrelated".
MARGINS: Mapping[str, tuple[str, str]] = {
    "pair": ("paraphrase_a", "paraphrase_b"),
    "echo": ("question", "answer"),
    "terminus": ("terminus_a", "terminus_b"),
    "truncation": ("truncation", "answer"),
}


def profile_key(identity: str, dimensions: int) -> str:
    """The canary profile of an embedder: probe version, identity and dimension."""
    return f"v{CANARY_VERSION}:{identity}:{dimensions}"


def cosine(left: Vector, right: Vector) -> float:
    """The cosine similarity of two vectors (0.0 when either is zero)."""
    import numpy as np

    a = np.asarray(left, dtype=np.float64)
    b = np.asarray(right, dtype=np.float64)
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norms if norms > 0 else 0.0


@dataclass
class Baseline:
    """A profile's stored probe vectors and margins, from its first healthy run."""

    vectors: dict[str, Vector]
    margins: dict[str, float]
    embedded_at: str


@dataclass
class CanaryResult:
    """One run of the probes: margins, drift against the baseline, and what failed."""

    profile: str
    vectors: dict[str, Vector]
    margins: dict[str, float]
    failures: list[str] = field(default_factory=list)
    drift: dict[str, float] = field(default_factory=dict)  # probe -> cos(baseline, now)
    baseline: Baseline | None = None  # the baseline compared with (None: none, or ignored)

    @property
    def passed(self) -> bool:
        return not self.failures

    def summary(self) -> str:
        """One line: passed (with the smallest margin and drift) or the first failures."""
        smallest = min(self.margins.values()) if self.margins else 0.0
        if self.failures:
            shown = "; ".join(self.failures[:3])
            more = f" (+{len(self.failures) - 3} more)" if len(self.failures) > 3 else ""
            return f"failed: {shown}{more}"
        if self.baseline is None:
            return f"passed without a baseline (smallest margin {smallest:.3f})"
        drift = min(self.drift.values()) if self.drift else 1.0
        return (
            f"passed (smallest margin {smallest:.3f}, drift cos >= {drift:.4f} against the "
            f"baseline of {self.baseline.embedded_at})"
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "profile": self.profile,
            "passed": self.passed,
            "margins": {name: round(value, 4) for name, value in self.margins.items()},
            "drift": {name: round(value, 4) for name, value in self.drift.items()},
            "baseline": self.baseline.embedded_at if self.baseline else None,
            "failures": list(self.failures),
        }


def embed_probes(embedder: Embedder) -> dict[str, Vector]:
    """Every probe's vector, embedded as the index embeds documents and queries."""
    documents = [name for name, (kind, _) in PROBES.items() if kind == "document"]
    inputs = [format_document_input(embedder, "", PROBES[name][1]) for name in documents]
    rows = embedder.embed_documents(inputs)
    if len(rows) != len(documents):
        raise ModelResponseError(
            f"the embedder returned {len(rows)} vectors for {len(documents)} canary probes"
        )
    vectors: dict[str, Vector] = {name: rows[n] for n, name in enumerate(documents)}
    for name, (kind, text) in PROBES.items():
        if kind == "query":
            vectors[name] = embedder.embed_query(format_query_input(embedder, text))
    return {name: vectors[name] for name in PROBES}


def _margins(vectors: Mapping[str, Vector]) -> dict[str, float]:
    unrelated = vectors["unrelated"]
    return {
        name: cosine(vectors[probe], vectors[partner]) - cosine(vectors[probe], unrelated)
        for name, (probe, partner) in MARGINS.items()
    }


def measure(
    embedder: Embedder, dimensions: int, baseline: Baseline | None, profile: str
) -> CanaryResult:
    """Embed the probes and judge them: margins against their floors, drift against the
    baseline (``None``: margins only, as on a first run or a recalibration)."""
    vectors = embed_probes(embedder)
    result = CanaryResult(profile, vectors, {})
    sizes = sorted({len(vector) for vector in vectors.values()})
    if sizes != [dimensions]:
        shown = ", ".join(str(size) for size in sizes)
        result.failures.append(f"probe vectors of dimension {shown}, expected {dimensions}")
        return result
    result.margins = _margins(vectors)
    result.baseline = baseline
    for name, value in result.margins.items():
        before = baseline.margins.get(name) if baseline else None
        floor = ABSOLUTE_FLOOR
        if before is not None and before > 0:
            floor = max(ABSOLUTE_FLOOR, before * BASELINE_RATIO)
        if value < floor:
            was = f", baseline {before:.3f}" if before is not None else ""
            result.failures.append(f"{name} margin {value:.3f} < {floor:.3f}{was}")
    if baseline is not None:
        for name, stored in baseline.vectors.items():
            fresh = vectors.get(name)
            if fresh is None:
                continue
            if len(fresh) != len(stored):
                result.failures.append(f"{name} changed dimension ({len(stored)} -> {len(fresh)})")
                continue
            similarity = cosine(stored, fresh)
            result.drift[name] = similarity
            if similarity < DRIFT_FLOOR:
                result.failures.append(
                    f"{name} drifted (cos {similarity:.4f} < {DRIFT_FLOOR} against the baseline)"
                )
    return result


def load_baseline(connection: Connection, profile: str) -> Baseline | None:
    """The stored baseline of ``profile``, or None."""
    import numpy as np

    rows = connection.execute(
        "SELECT probe_id, embedding, pair_margins, embedded_at FROM embed_canary "
        "WHERE profile_key = ? ORDER BY probe_id",
        (profile,),
    ).fetchall()
    if not rows:
        return None
    vectors = {str(row[0]): np.frombuffer(bytes(row[1]), dtype=np.float32) for row in rows}
    try:
        margins = {str(k): float(v) for k, v in json.loads(str(rows[0][2])).items()}
    except (ValueError, AttributeError, TypeError):
        margins = {}
    return Baseline(vectors, margins, str(rows[0][3]))


def save_baseline(connection: Connection, result: CanaryResult, *, replace: bool) -> bool:
    """Store ``result`` as its profile's baseline when the profile has none (or ``replace``);
    whether it was stored. Call inside a write transaction."""
    import numpy as np

    if not replace and load_baseline(connection, result.profile) is not None:
        return False
    connection.execute("DELETE FROM embed_canary WHERE profile_key = ?", (result.profile,))
    margins = json.dumps({name: round(value, 6) for name, value in result.margins.items()})
    now = now_iso()
    connection.executemany(
        "INSERT INTO embed_canary (probe_id, profile_key, embedding, pair_margins, embedded_at) "
        "VALUES (?, ?, ?, ?, ?)",
        [
            (name, result.profile, np.ascontiguousarray(vector, np.float32).tobytes(), margins, now)
            for name, vector in result.vectors.items()
        ],
    )
    return True
