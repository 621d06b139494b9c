"""The discovery legs of ``context-surfacing``: which documents are candidates at all.

- BM25 over the retrieval query (the multi-turn combined query; see lookback), twice the
  profile's ``max_results`` deep, so filters and composite scoring have room to work.
- Vectors over the same query, in a thread on its own connection, started first and
  raced against the profile's ``vector_timeout_ms`` while BM25 runs; a leg that loses the
  race is abandoned, never awaited. A document both legs find keeps its better score.
- File-path supplements: up to three paths or file names in the *raw* prompt, two BM25
  hits each (earlier turns' file names would pollute this channel).
- Deep escalation (``deep`` profile, only with an LLM or reranker configured, and only when
  the fast path took less than ``escalation_budget_ms``): the full query pipeline
  (expansion, reranking) on the retrieval query, blended ``0.6 * fast + 0.4 * pipeline``,
  with a hard stop six seconds after the hook started.

Cold vectors: a hook is a fresh process, and the embedded wordllama model takes ~0.5 s to
load and a 10k-note vector index ~0.2 s more, far over the 300 ms a prompt may wait. So
with ``MEMTROVE_HOOK_VECTORS=auto`` (the default) only a profile whose vector timeout can
absorb that cold start (``deep``, 2 s) runs the vector leg in-process; ``balanced`` is
BM25-first and gets vectors once a warm process serves them. ``on`` races them for every
profile that uses vectors, ``off`` never does.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from memtrove.errors import MemtroveError
from memtrove.hooks.settings import HookSettings
from memtrove.results import SearchResult, SearchResults
from memtrove.vault import Vault

__all__ = [
    "COLD_VECTOR_MS",
    "Candidate",
    "Discovery",
    "discover",
    "file_references",
    "vectors_wanted",
]

T = TypeVar("T")

COLD_VECTOR_MS = 1500  # a vector timeout this long absorbs a cold model and index load
FILE_REFERENCES = 3
FILE_RESULTS = 2
ESCALATION_HARD_STOP = 6.0
ESCALATION_RESULTS = 15
ESCALATION_BLEND = 0.6

# Absolute paths, and file names with a known extension, bare or under relative folders
# (the reference matches only bare names, missing ``decisions/0005-x.md``).
_FILE_PATH = re.compile(
    r"(?:^|\s)((?:/[\w.@-]+)+(?:\.\w+)?|(?:[\w.@-]+/)*[\w.@-]+\.(?:ts|js|py|md|sh|yaml|yml"
    r"|json|toml|rs|go|tsx|jsx|css|html))\b"
)


@dataclass
class Candidate:
    """A discovered document: its search result and relevance in [0, 1].

    ``prescored`` marks a score that is already composite: ``Vault.search`` ranks a query
    with recency intent by composite score (recency weights) itself.
    """

    result: SearchResult
    relevance: float
    prescored: bool = False


@dataclass
class Discovery:
    """Candidates by ``collection/path``, and notes on legs that were skipped or lost."""

    candidates: dict[str, Candidate] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, results: SearchResults, weight: float = 1.0) -> None:
        prescored = "composite" in results.stages
        for result in results:
            key = f"{result.collection}/{result.path}"
            score = result.score * weight
            known = self.candidates.get(key)
            if known is None or score > known.relevance:
                self.candidates[key] = Candidate(result, score, prescored)


class _Leg(Generic[T]):
    """A retrieval leg on a daemon thread; :meth:`wait` gives up at a deadline."""

    def __init__(self, name: str, work: Callable[[], T]) -> None:
        self._work = work
        self._value: T | None = None
        self._error: BaseException | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"memtrove-hook-{name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._work()
        except BaseException as error:  # reported by wait(), never raised in the thread
            self._error = error
        finally:
            self._done.set()

    def wait(self, deadline: float) -> tuple[T | None, str | None]:
        """(value, None), or (None, why) when it failed or was still running at ``deadline``."""
        if not self._done.wait(max(0.0, deadline - time.monotonic())):
            return None, "timed out"
        if self._error is not None:
            return None, f"{type(self._error).__name__}: {self._error}"
        return self._value, None


def vectors_wanted(settings: HookSettings) -> bool:
    """Whether this hook process runs the vector leg (see the module docstring)."""
    profile = settings.profile
    if not profile.use_vector or settings.vectors == "off":
        return False
    return settings.vectors == "on" or profile.vector_timeout_ms >= COLD_VECTOR_MS


def file_references(prompt: str, limit: int = FILE_REFERENCES) -> list[str]:
    """Up to ``limit`` paths and file names mentioned in ``prompt``, first seen first."""
    found = dict.fromkeys(match.group(1).strip() for match in _FILE_PATH.finditer(prompt))
    return [reference for reference in found if reference][:limit]


def _on_own_connection(vault: Vault, work: Callable[[Vault], T]) -> Callable[[], T]:
    """``work`` on a second connection: a leg must not hold the hook's connection lock."""

    def run() -> T:
        with vault.reader() as own:
            return work(own)

    return run


def discover(
    vault: Vault, query: str, prompt: str, settings: HookSettings, started: float
) -> Discovery:
    """Run the legs for ``query`` (combined) and ``prompt`` (raw); ``started`` is the
    hook's ``time.monotonic()`` start, which the escalation's hard stop counts from."""
    profile = settings.profile
    found = Discovery()
    vector_leg: _Leg[SearchResults] | None = None
    if vectors_wanted(settings):
        vector_leg = _Leg(
            "vectors",
            _on_own_connection(vault, lambda own: own.vsearch(query, limit=profile.max_results)),
        )
    vector_deadline = time.monotonic() + profile.vector_timeout_ms / 1000
    # BM25 runs while the vector leg loads its model and index.
    found.add(vault.search(query, limit=profile.max_results * 2))
    for reference in file_references(prompt):
        try:
            found.add(vault.search(reference, limit=FILE_RESULTS))
        except MemtroveError as error:
            found.notes.append(f"file supplement {reference!r} failed: {error}")
    if vector_leg is not None:
        vectors, why = vector_leg.wait(vector_deadline)
        if vectors:
            found.add(vectors)
        else:
            found.notes.append(f"vector leg skipped: {why or 'no vector hits'}")
    if profile.deep_escalation:
        _escalate(vault, query, found, settings, started)
    return found


def _escalate(
    vault: Vault, query: str, found: Discovery, settings: HookSettings, started: float
) -> None:
    """Deep profile: blend the query pipeline's ranking into the fast path's."""
    profile = settings.profile
    models = vault.models
    if len(found.candidates) < 2 or not (models.has_llm or models.has_reranker):
        return
    if (time.monotonic() - started) * 1000 >= profile.escalation_budget_ms:
        found.notes.append("escalation skipped: the fast path used the budget")
        return
    leg = _Leg(
        "escalation",
        _on_own_connection(vault, lambda own: own.query(query, limit=ESCALATION_RESULTS)),
    )
    ranked, why = leg.wait(started + ESCALATION_HARD_STOP)
    if ranked is None or not ranked:
        found.notes.append(f"escalation skipped: {why or 'no results'}")
        return
    best = max(result.score for result in ranked) or 1.0
    pipeline = {f"{r.collection}/{r.path}": (r, r.score / best) for r in ranked}
    for key, candidate in found.candidates.items():
        _, score = pipeline.get(key, (candidate.result, 0.0))
        candidate.relevance = (
            ESCALATION_BLEND * candidate.relevance + (1 - ESCALATION_BLEND) * score
        )
    for key, (result, score) in pipeline.items():
        if key not in found.candidates:
            found.candidates[key] = Candidate(result, (1 - ESCALATION_BLEND) * score)
