"""The discovery legs of ``context-surfacing``: which documents are candidates at all.

- Keywords: ``Vault.hybrid(vectors=False, passages=True)`` over the retrieval query (the
  multi-turn combined query; see lookback), twice the profile's ``max_results`` deep: BM25,
  a long document scored by its best section as well (:mod:`memtrove.db.passages`), with
  conversation context (a dialogue turn next to a strong hit shares in its score), so
  filters and composite scoring have room to work.
- Vectors: the full ``Vault.hybrid`` (BM25 and vectors fused by score, then context), in a
  thread on its own connection, started first and raced against the profile's
  ``vector_timeout_ms`` while the keyword leg runs; a leg that loses the race is
  abandoned, never awaited, and the keyword leg's ranking stands.
- File-path supplements: up to three paths or file names in the *raw* prompt, two BM25
  hits each (earlier turns' file names would pollute this channel).
- The newest handoffs, decisions and progress notes for a "where were we?" prompt (see
  :mod:`memtrove.retrieval.recency`), which shares no word with what answers it.
- Deep escalation (``deep`` profile, only with an LLM or reranker configured, and only when
  the fast path took less than ``escalation_budget_ms``): the full query pipeline
  (expansion, reranking) on the retrieval query, blended ``0.6 * fast + 0.4 * pipeline``,
  with a hard stop six seconds after the hook started.

Cold vectors: a hook is a fresh process, and the embedded wordllama model takes ~0.5 s to
load and a 10k-note vector index ~0.2 s more, far over what a prompt may wait. So with
``MEMTROVE_HOOK_VECTORS=auto`` (the default) only a profile whose vector timeout can absorb
that cold start (``deep``, 2 s) runs the vector leg, served or not, so a served hook answers
exactly as a hook process would; ``on`` races them for every profile that uses vectors
(worth it with ``memtrove serve``, where they are warm), ``off`` never does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypedDict, TypeVar

from memtrove.errors import MemtroveError
from memtrove.hooks.settings import HookSettings
from memtrove.patterns import LazyPattern
from memtrove.results import SearchResult, SearchResults
from memtrove.retrieval.recency import recency_plan
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
NAMED_SHARE = 0.7  # a file the prompt names counts at least 70 % of the best match
RECENT_RESULTS = 5
SCALE_FLOOR = 0.5
LOOKBACK_SHARE = 0.35  # hits of the lookback's combined query, for a prompt not a follow-up
RECENT_SHARE = 0.3

# Absolute paths, and file names with a known extension, bare or under relative folders
# (the reference matches only bare names, missing ``decisions/0005-x.md``).
_FILE_PATH = LazyPattern(
    r"(?:^|\s)((?:/[\w.@-]+)+(?:\.\w+)?|(?:[\w.@-]+/)*[\w.@-]+\.(?:ts|js|py|md|sh|yaml|yml"
    r"|json|toml|rs|go|tsx|jsx|css|html))\b"
)


class Candidate:
    """A discovered document: its search result, its channel scores, and its relevance.

    ``fused`` is its hybrid score (a share of the leg's best, which is 1.0), None when no
    ranking leg found it. ``relevance`` in [0, 1] is set by :meth:`Discovery.fuse`. ``prescored`` marks a score
    that is already composite: ``Vault.search`` ranks a query with recency intent by
    composite score (recency weights) itself. ``named``: found by a file name or path the
    prompt mentions; ``recent``: one of the newest documents, for a "where were we?" prompt.

    A plain class, not a dataclass: a hook process never imports :mod:`dataclasses`.
    """

    __slots__ = ("fused", "named", "prescored", "recent", "relevance", "result")

    def __init__(
        self,
        result: SearchResult,
        relevance: float,
        prescored: bool = False,
        fused: float | None = None,
        named: bool = False,
        recent: bool = False,
    ) -> None:
        self.result = result
        self.relevance = relevance
        self.prescored = prescored
        self.fused = fused
        self.named = named
        self.recent = recent

    def _fields(self) -> tuple[object, ...]:
        return (self.result, self.relevance, self.prescored, self.fused, self.named, self.recent)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Candidate) or type(other) is not type(self):
            return NotImplemented
        return self._fields() == other._fields()

    def __repr__(self) -> str:
        return (
            f"Candidate(result={self.result!r}, relevance={self.relevance!r}, "
            f"prescored={self.prescored!r}, fused={self.fused!r}, named={self.named!r}, "
            f"recent={self.recent!r})"
        )


class Discovery:
    """Candidates by ``collection/path``, and notes on legs that were skipped or lost."""

    __slots__ = ("candidates", "notes", "scale")

    def __init__(
        self,
        candidates: dict[str, Candidate] | None = None,
        notes: list[str] | None = None,
        scale: float = 0.0,
    ) -> None:
        self.candidates: dict[str, Candidate] = {} if candidates is None else candidates
        self.notes: list[str] = [] if notes is None else notes
        self.scale = scale

    def _fields(self) -> tuple[object, ...]:
        return (self.candidates, self.notes, self.scale)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Discovery) or type(other) is not type(self):
            return NotImplemented
        return self._fields() == other._fields()

    def __repr__(self) -> str:
        return (
            f"Discovery(candidates={self.candidates!r}, notes={self.notes!r}, scale={self.scale!r})"
        )

    def also_at(self, key: str) -> tuple[str, ...]:
        """The paths of candidate ``key``'s identical copies (none for an unknown key)."""
        candidate = self.candidates.get(key)
        return tuple(candidate.result.also_at) if candidate is not None else ()

    def add(self, results: SearchResults, channel: str = "fused", weight: float = 1.0) -> None:
        """Add one leg's results; a document several legs find keeps each channel's best.

        ``fused``: a hybrid ranking (scores normalised to a best of 1.0, its strength in
        ``results.scale``), each score times ``weight`` (below 1 for the lookback leg,
        which then does not set the scale); ``named``: hits for a file the prompt names.
        """
        prescored = "composite" in results.stages
        if channel == "fused" and results.scale is not None and weight >= 1.0:
            self.scale = max(self.scale, results.scale)
        for result in results:
            key = self._key(result)
            score = result.score * weight
            known = self.candidates.get(key)
            if known is None:
                known = self.candidates[key] = Candidate(result, score, prescored)
            known.relevance = max(known.relevance, score)
            known.prescored = known.prescored or prescored
            if channel == "named":
                known.named = True
            else:
                known.fused = max(known.fused or 0.0, score)

    def _key(self, result: SearchResult) -> str:
        """The candidate key of ``result``: a copy of a known candidate (one leg found one
        path of identical files, another leg the other) joins that candidate."""
        key = f"{result.collection}/{result.path}"
        if key in self.candidates:
            return key
        for other in result.also_at:
            if other in self.candidates:
                return other
        return key

    def add_recent(self, results: SearchResults) -> None:
        """The newest handoffs, decisions and progress notes for a "where were we?" prompt,
        at RECENT_SHARE of the best relevance when no other leg found them."""
        for result in results:
            key = self._key(result)
            if key not in self.candidates:
                self.candidates[key] = Candidate(result, 0.0, recent=True)

    def fuse(self) -> None:
        """Each candidate's relevance: its share of the best fused score, times the best
        hit's own strength (``scale``), so the adaptive threshold still sees how good the
        best match is. A document whose file the prompt names is worth at least
        NAMED_SHARE of the best, a recent one for "where were we?" RECENT_SHARE.
        Prescored candidates (questions about time) keep their composite score."""
        pool = [c for c in self.candidates.values() if not c.prescored]
        best = max((c.fused or 0.0 for c in pool), default=0.0)
        scale = self.scale or max((c.relevance for c in pool), default=0.0)
        if best > 0:
            # BM25 says little in a vault of a handful of notes (FTS5 floors the weight of a
            # word most of them share near zero): a match found at all is worth surfacing.
            scale = max(scale, SCALE_FLOOR)
        for candidate in pool:
            share = (candidate.fused or 0.0) / best if best > 0 else 0.0
            if candidate.named:
                share = max(share, NAMED_SHARE)
            if candidate.recent:
                share = max(share, RECENT_SHARE)
            candidate.relevance = min(1.0, scale) * share


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
    """Whether this hook runs the vector leg (see the module docstring)."""
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
    vault: Vault,
    query: str,
    prompt: str,
    settings: HookSettings,
    started: float,
    *,
    thread: str | None = None,
) -> Discovery:
    """Run the legs for ``query`` (the retrieval query) and ``prompt`` (raw); ``thread`` is
    the lookback's combined query for a prompt that is not a follow-up, searched by a
    keyword leg whose hits count LOOKBACK_SHARE. ``started`` is the hook's
    ``time.monotonic()`` start, which the escalation's hard stop counts from."""
    profile = settings.profile
    depth = profile.max_results * 2
    # What the hook never injects is left out in the search, not after it: the Stop hooks'
    # notes (or an experiments/ folder, a surface: false collection) would otherwise fill
    # the depth and leave nothing to surface.
    unseen = _unseen(vault)
    found = Discovery()
    vector_leg: _Leg[SearchResults] | None = None
    if vectors_wanted(settings):
        vector_leg = _Leg(
            "vectors",
            _on_own_connection(
                vault,
                lambda own: own.hybrid(query, limit=depth, snippets=False, passages=True, **unseen),
            ),
        )
    vector_deadline = time.monotonic() + profile.vector_timeout_ms / 1000
    # The keyword leg runs while the vector leg loads its model and index.
    keyword = vault.hybrid(
        query, limit=depth, vectors=False, snippets=False, passages=True, **unseen
    )
    ranking = keyword
    if vector_leg is not None:
        fused, why = vector_leg.wait(vector_deadline)
        if fused is not None and "vector" in fused.stages:
            ranking = fused
        else:
            found.notes.append(f"vector leg skipped: {why or fused_skip(fused)}")
    found.add(ranking)
    if thread:
        found.add(
            vault.hybrid(
                thread, limit=depth, vectors=False, snippets=False, passages=True, **unseen
            ),
            weight=LOOKBACK_SHARE,
        )
    for reference in file_references(prompt):
        try:
            found.add(vault.search(reference, limit=FILE_RESULTS, **unseen), channel="named")
        except MemtroveError as error:
            found.notes.append(f"file supplement {reference!r} failed: {error}")
    plan = recency_plan(prompt)
    if plan is not None and plan.recent_candidates:
        found.add_recent(vault.retrieval.recent(RECENT_RESULTS, **unseen))
    found.fuse()
    if profile.deep_escalation:
        _escalate(vault, query, found, settings, started)
    return found


class _Unseen(TypedDict):
    include_internal: bool
    kept_internal: tuple[str, ...]
    hidden_parts: tuple[str, ...]
    hidden_collections: tuple[str, ...]


def _unseen(vault: Vault) -> _Unseen:
    """What context-surfacing never injects, as the search methods' arguments (its
    ``admission.admit`` checks each candidate all the same)."""
    from memtrove.hooks.admission import FILTERED_PATHS, SURFACED_INTERNAL

    try:
        unsurfaced = tuple(sorted(vault.unsurfaced_collections()))
    except MemtroveError:  # a broken config.yaml costs the setting, never the answer
        unsurfaced = ()
    return {
        "include_internal": False,
        "kept_internal": SURFACED_INTERNAL,
        "hidden_parts": tuple(part for part in FILTERED_PATHS if part != "_memtrove/"),
        "hidden_collections": unsurfaced,
    }


def fused_skip(results: SearchResults | None) -> str:
    """Why a finished vector leg brought no vectors (for the hook log)."""
    if results is None:
        return "no result"
    return results.skipped.get("vector", "no vector hits")


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
