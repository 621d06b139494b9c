"""Composite scoring: order matches by relevance, then by how recent and trusted they are.

Pure functions; the caller supplies every document field and the current time. Every spec
signal is kept (relevance, recency by type half-life with access reinforcement, confidence
with attention decay, quality, length, frequency, co-activation, pins); what changed from
the spec's weighted sum is how they combine, because the sum let the other signals bury a
clearly better match (a 0.25 recency weight moves a score by more than BM25's whole spread).

The rule (see the README's "Composite scoring" for the evidence):

1. Relevance is normalised per query: :func:`apply_composite` divides each candidate's
   search score by the best candidate's, so the best match has relevance 1.0 and the others
   their share of it, whatever the channel's scale. ``scale`` (the best candidate's own
   absolute score) multiplies the result, so thresholds still see how good the best is.
2. Topical questions (``Weights.blend`` False)::

       trust    = (w.recency·recency + w.confidence·confidence) / (w.recency + w.confidence)
       modifier = (1 + (1 - w.search)·0.4·(trust - 0.5)) × quality × length × co-activation
                  × frequency, each factor bounded (see the constants), the product
                  clamped to [1 - MODIFIER_BOUND, 1 + MODIFIER_BOUND]
       score    = scale × relevance × modifier / (1 + MODIFIER_BOUND)

   So the other signals order near-ties and never overturn a match more than 1.5x better
   (0.8 / 1.2 = 0.67): a short, fresh, trusted note beats a long, stale one on the same
   topic, but not a document that answers the question and it does not. Dividing by the
   largest modifier keeps every score in [0, scale], so [0, 1].
3. Questions about time (``Weights.blend`` True; see :mod:`memtrove.retrieval.recency`)
   keep the spec's weighted sum, where recency may overturn relevance: ``scale ×
   min(1, (w.search·relevance + w.recency·age + w.confidence·confidence) × quality ×
   length)``, with ``age`` on one 14-day half-life for every type (:func:`age_score`):
   "what did we do recently" asks for the newest work, and a type's slow decay must not
   make an old decision look fresh.
4. Pins add ``0.3 × scale`` (not past ``scale``, never lowering a score); a superseded
   document is multiplied by SUPERSEDED_FACTOR and a snoozed one (searches still find
   it; context-surfacing drops it) by SNOOZED_FACTOR.
5. Canonical memory: for a question about the user (:func:`has_profile_intent`: "what do
   I prefer", "my setup", "who am I"), a canonical memory (a type of
   :data:`CANONICAL_TYPES`: stated preferences, the user profile, memory-store entries)
   is multiplied by CANONICAL_BOOST (x1.14, the spec's), not past ``scale``; outside the
   bounded modifier, which would otherwise absorb it.

Datetimes may be naive (read as UTC) or aware.
"""

import math
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Generic, NamedTuple, TypeVar

from memtrove.index.types import CONFIDENCE_BASELINE
from memtrove.patterns import LazyPattern

__all__ = [
    "ATTENTION_DECAY_TYPES",
    "CANONICAL_BOOST",
    "CANONICAL_TYPES",
    "CONTINUATION_TYPES",
    "DEFAULT_WEIGHTS",
    "HALF_LIFE_DAYS",
    "QUERY_WEIGHTS",
    "RECENCY_FIRST_TYPES",
    "RECENCY_INTENT_PATTERNS",
    "RECENCY_WEIGHTS",
    "ScoringInput",
    "Weights",
    "age_score",
    "apply_composite",
    "choose_weights",
    "co_activation_boost",
    "composite_score",
    "confidence_score",
    "frequency_boost",
    "half_life_stretch",
    "has_continuation_intent",
    "has_profile_intent",
    "has_recency_intent",
    "length_factor",
    "length_penalty",
    "modifier",
    "quality_factor",
    "quality_multiplier",
    "recency_score",
    "time_reference",
]

K = TypeVar("K", bound=Hashable)

_DAY_SECONDS = 86_400.0


class _WeightFields(NamedTuple):
    search: float
    recency: float
    confidence: float
    # True: the weighted sum, where recency may overturn relevance (questions about time);
    # False: relevance times the bounded modifier (every topical question).
    blend: bool = False


class Weights(_WeightFields):
    """How much relevance, recency and confidence each count in the base score."""

    __slots__ = ()

    def __new__(
        cls, search: float, recency: float, confidence: float, blend: bool = False
    ) -> "Weights":
        for value in (search, recency, confidence):
            if not math.isfinite(value) or value < 0:
                raise ValueError(
                    f"weights must be finite and >= 0, got {(search, recency, confidence)}"
                )
        return super().__new__(cls, search, recency, confidence, blend)


DEFAULT_WEIGHTS = Weights(search=0.5, recency=0.25, confidence=0.25)
# The `query` tool's retrieval-tuned weights: topical relevance dominates.
QUERY_WEIGHTS = Weights(search=0.70, recency=0.15, confidence=0.15)
# Chosen whenever the query asks for recent work; it wins over QUERY_WEIGHTS.
RECENCY_WEIGHTS = Weights(search=0.10, recency=0.70, confidence=0.20, blend=True)

RECENCY_INTENT_PATTERNS: tuple[str, ...] = (
    r"recent(?:ly)?",
    r"latest",
    r"last\s+(?:session|time)",
    r"yesterday",
    r"today",
    r"continue",
    r"where\s+(?:were\s+we|was\s+i)",
    r"left\s+off",
    r"pick\s+up\s+where",
    r"what\s+(?:was\s+i|were\s+we)\s+(?:doing|working\s+on)",
)
_RECENCY_INTENT = LazyPattern(r"\b(?:" + "|".join(RECENCY_INTENT_PATTERNS) + r")\b", re.IGNORECASE)

# "Where were we", "continue", "left off": a request to pick up the last session, answered
# first by its handoff.
_CONTINUATION = LazyPattern(
    r"\b(?:where\s+(?:were\s+we|was\s+i|did\s+(?:we|i)\s+leave\s+off)|left\s+off|continue"
    r"|pick\s+up\s+where|last\s+(?:session|time)|what\s+(?:was\s+i|were\s+we)\s+"
    r"(?:doing|working\s+on))\b",
    re.IGNORECASE,
)
CONTINUATION_TYPES: tuple[str, ...] = ("handoff",)

# A question about the user rather than the work: who they are, what they prefer or use.
_PROFILE_INTENT = LazyPattern(
    r"\b(?:who\s+am\s+i|(?:know|remember)\s+about\s+me|about\s+myself"
    r"|my\s+(?:own\s+)?(?:profile|preferences?|preferred|settings|setup|stack|tooling|tools"
    r"|conventions?|style|habits?|workflow|background|role|defaults?|favou?rites?|likes"
    r"|dislikes)"
    r"|(?:do|did|would)\s+i\s+(?:usually\s+|normally\s+|typically\s+)?(?:prefer|like|use|want)"
    r"|i\s+(?:usually|normally|typically|always)\s+(?:prefer|use|like|want)"
    r"|how\s+do\s+i\s+(?:usually|normally|typically|like\s+to)"
    r"|(?:the\s+)?user(?:'s)?\s+(?:profile|preferences?)"
    r"|the\s+user\s+(?:prefers?|likes?|wants?|uses?))\b",
    re.IGNORECASE,
)
# Canonical memories: what the user stated about themselves (preferences; the user profile,
# written as one), and the memory store's labelled entries.
CANONICAL_TYPES: frozenset[str] = frozenset({"preference", "memory"})
CANONICAL_BOOST = 1.14

# Types listed first under recency intent ("what did we do last session?").
RECENCY_FIRST_TYPES: tuple[str, ...] = ("handoff", "decision", "progress")

# Days for the recency score to halve; None never decays. Decisions never decay, as the
# scoring spec says (the reference code decays them over 180 days): on the composite judged
# set, whose evolving decisions come in three dated versions, both rank every question the
# same (README, "Composite scoring"); a replaced decision yields to its successor through
# superseded_by and the recency-intent age, which counts for every type.
HALF_LIFE_DAYS: Mapping[str, float | None] = {
    "handoff": 30.0,
    "progress": 45.0,
    "conversation": 45.0,
    "note": 60.0,
    "problem": 60.0,
    "milestone": 60.0,
    "research": 90.0,
    "project": 120.0,
    "decision": None,
    "preference": None,
    "hub": None,
    "deductive": None,
    "antipattern": None,
}
_FALLBACK_TYPE = "note"  # unknown content types score like notes

# Access reinforcement: up to 3x the half-life, full at ACCESS_SATURATION accesses, fading
# linearly to nothing REINFORCEMENT_WINDOW_DAYS after the last access.
MAX_HALF_LIFE_STRETCH = 3.0
ACCESS_SATURATION = 10
REINFORCEMENT_WINDOW_DAYS = 90.0

# Attention decay (5 % per week unseen, never below half) hits only these working-state
# types; decisions, research, hubs and the like stay trusted however long they sit unread.
ATTENTION_DECAY_TYPES = frozenset({"handoff", "progress", "conversation", "note", "project"})
ATTENTION_DECAY_PER_WEEK = 0.95
ATTENTION_DECAY_FLOOR = 0.5

PIN_BOOST = 0.3
# The combination rule (module docstring): how far each non-relevance signal may move a
# topical match, and the bound on all of them together.
MODIFIER_BOUND = 0.2
MAX_MODIFIER = 1.0 + MODIFIER_BOUND  # scores are divided by it, so they stay in [0, scale]
TRUST_SPREAD = 0.4  # x (1 - search weight): ±10 % for DEFAULT_WEIGHTS, ±6 % for QUERY_WEIGHTS
QUALITY_SPREAD = 0.1
LENGTH_SHARE = 0.10
CO_ACTIVATION_SHARE = 1 / 3  # the spec's +15 % becomes +5 %
FREQUENCY_SHARE = 0.5  # the spec's +10 % becomes +5 %
SUPERSEDED_FACTOR = 0.5
SNOOZED_FACTOR = 0.5  # searches still find a snoozed document, below the others
# Under recency intent "recent" means recent for every type: one half-life for all, so a
# fresh handoff is not out-aged by a months-old decision whose type decays slowly.
RECENCY_INTENT_HALF_LIFE_DAYS = 14.0
LENGTH_ANCHOR_CHARS = 500
LENGTH_PENALTY_FLOOR = 0.3
FREQUENCY_BOOST_CAP = 0.10
CO_ACTIVATION_CAP = 0.15


def has_recency_intent(query: str) -> bool:
    """Whether the query asks for recent work (latest, yesterday, where were we, ...)."""
    return _RECENCY_INTENT.search(query) is not None


def has_continuation_intent(query: str) -> bool:
    """Whether the query asks to pick up the last session (where were we, continue, ...)."""
    return _CONTINUATION.search(query) is not None


def has_profile_intent(query: str) -> bool:
    """Whether the query asks about the user (who am I, what do I prefer, my setup, ...)."""
    return _PROFILE_INTENT.search(query) is not None


def choose_weights(query: str, default: Weights = DEFAULT_WEIGHTS) -> Weights:
    """RECENCY_WEIGHTS for a recency-phrased query, else ``default`` (e.g. QUERY_WEIGHTS)."""
    return RECENCY_WEIGHTS if has_recency_intent(query) else default


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def _days_between(earlier: datetime, later: datetime) -> float:
    return (_utc(later) - _utc(earlier)).total_seconds() / _DAY_SECONDS


def _known_type(content_type: str) -> str:
    return content_type if content_type in HALF_LIFE_DAYS else _FALLBACK_TYPE


def _unit(value: float | None, default: float) -> float:
    """``value`` clamped to [0, 1]; ``default`` when missing or NaN."""
    if value is None or math.isnan(value):
        return default
    return min(1.0, max(0.0, value))


def age_score(effective_at: datetime | None, now: datetime) -> float:
    """``0.5 ** (age_days / 14)`` for every type (recency intent); 0.5 without a date."""
    if effective_at is None:
        return 0.5
    age_days = _days_between(effective_at, now)
    if age_days <= 0:
        return 1.0
    return float(0.5 ** (age_days / RECENCY_INTENT_HALF_LIFE_DAYS))


def half_life_stretch(access_count: int, last_accessed_at: datetime | None, now: datetime) -> float:
    """Factor in [1, 3] by which frequent, recent access lengthens a half-life.

    ``1 + 2 · min(1, ln(1 + accesses) / ln(11)) · max(0, 1 - days_since_access / 90)``:
    ten accesses today give 3x; the stretch fades linearly and is gone 90 days after the
    last access. Without a last-access time there is no reinforcement (its age is unknown).
    """
    if access_count <= 0 or last_accessed_at is None:
        return 1.0
    idle_days = max(0.0, _days_between(last_accessed_at, now))
    freshness = max(0.0, 1.0 - idle_days / REINFORCEMENT_WINDOW_DAYS)
    strength = min(1.0, math.log1p(access_count) / math.log1p(ACCESS_SATURATION))
    return 1.0 + (MAX_HALF_LIFE_STRETCH - 1.0) * strength * freshness


def recency_score(
    effective_at: datetime | None,
    now: datetime,
    content_type: str,
    access_count: int = 0,
    last_accessed_at: datetime | None = None,
) -> float:
    """``0.5 ** (age_days / half_life)`` in [0, 1], half-life by type and access.

    1.0 for types that never decay, for a missing date and for dates in the future.
    """
    half_life = HALF_LIFE_DAYS[_known_type(content_type)]
    if half_life is None or effective_at is None:
        return 1.0
    age_days = _days_between(effective_at, now)
    if age_days <= 0:
        return 1.0
    stretched = half_life * half_life_stretch(access_count, last_accessed_at, now)
    return float(0.5 ** (age_days / stretched))


def confidence_score(
    confidence: float | None,
    content_type: str,
    last_accessed_at: datetime | None,
    effective_at: datetime | None,
    now: datetime,
) -> float:
    """Stored confidence after attention decay, in [0, 1].

    A missing confidence falls back to the type's baseline. For ATTENTION_DECAY_TYPES it is
    multiplied by ``max(0.5, 0.95 ** weeks)``, weeks counted since the last access or, for a
    document never accessed, since its effective time; the floor is on that factor, so decay
    takes at most half. Other types are exempt.
    """
    known = _known_type(content_type)
    score = _unit(confidence, CONFIDENCE_BASELINE.get(known, 0.5))
    if known not in ATTENTION_DECAY_TYPES:
        return score
    reference = last_accessed_at if last_accessed_at is not None else effective_at
    if reference is None:
        return score
    weeks = max(0.0, _days_between(reference, now) / 7.0)
    decay = max(ATTENTION_DECAY_FLOOR, float(ATTENTION_DECAY_PER_WEEK**weeks))
    return score * decay


def quality_multiplier(quality_score: float | None) -> float:
    """``0.7 + 0.6 · quality`` in [0.7, 1.3]; a missing quality counts as 0.5 (1.0x)."""
    return 0.7 + 0.6 * _unit(quality_score, 0.5)


def length_penalty(body_length: int) -> float:
    """``1 / (1 + 0.5 · log2(max(length / 500, 1)))``, floored at 0.3; short bodies get 1.0."""
    ratio = max(body_length / LENGTH_ANCHOR_CHARS, 1.0)
    return max(LENGTH_PENALTY_FLOOR, 1.0 / (1.0 + 0.5 * math.log2(ratio)))


def frequency_boost(revision_count: int, duplicate_count: int) -> float:
    """Extra weight in [0, 0.10] for documents revised or re-saved often.

    ``min(0.10, ln(1 + (revisions - 1) · 2 + (duplicates - 1)) · 0.03)``; each count is read
    as at least 1 (a stored 0 means "once"), so the first revision and copy add nothing.
    """
    signal = (max(revision_count, 1) - 1) * 2 + (max(duplicate_count, 1) - 1)
    return min(FREQUENCY_BOOST_CAP, math.log1p(signal) * 0.03)


def co_activation_boost(co_count: int) -> float:
    """``1 + min(count / 10, 0.15)``: up to +15 % for documents often surfaced together."""
    return 1.0 + min(max(co_count, 0) / 10.0, CO_ACTIVATION_CAP)


class ScoringInput(NamedTuple, Generic[K]):
    """The fields of one candidate that composite scoring reads."""

    key: K
    search_score: float
    content_type: str = _FALLBACK_TYPE
    effective_at: datetime | None = None
    quality_score: float | None = 0.5
    confidence: float | None = None
    pinned: bool = False
    access_count: int = 0
    last_accessed_at: datetime | None = None
    body_length: int = 0
    revision_count: int = 1
    duplicate_count: int = 1
    superseded: bool = False
    snoozed: bool = False


def _bounded(value: float, low: float, high: float) -> float:
    return min(high, max(low, value))


def modifier(
    item: ScoringInput[K], weights: Weights, now: datetime, co_activation: int = 0
) -> float:
    """The bounded factor the non-relevance signals apply to a topical match (rule 2)."""
    recency = recency_score(
        item.effective_at, now, item.content_type, item.access_count, item.last_accessed_at
    )
    confidence = confidence_score(
        item.confidence, item.content_type, item.last_accessed_at, item.effective_at, now
    )
    share = weights.recency + weights.confidence
    trust = (weights.recency * recency + weights.confidence * confidence) / share if share else 0.5
    factor = 1.0 + (1.0 - weights.search) * TRUST_SPREAD * (trust - 0.5)
    factor *= quality_factor(item.quality_score) * length_factor(item.body_length)
    factor *= 1.0 + (co_activation_boost(co_activation) - 1.0) * CO_ACTIVATION_SHARE
    factor *= 1.0 + frequency_boost(item.revision_count, item.duplicate_count) * FREQUENCY_SHARE
    return _bounded(factor, 1.0 - MODIFIER_BOUND, 1.0 + MODIFIER_BOUND)


def quality_factor(quality_score: float | None) -> float:
    """``1 + 0.1 · (quality - 0.5)``: structure counts for ±5 %."""
    return 1.0 + QUALITY_SPREAD * (_unit(quality_score, 0.5) - 0.5)


def length_factor(body_length: int) -> float:
    """The length penalty's [0.3, 1] range mapped onto [1 - LENGTH_SHARE, 1]."""
    penalty = length_penalty(body_length)
    return 1.0 - LENGTH_SHARE * (1.0 - penalty) / (1.0 - LENGTH_PENALTY_FLOOR)


def composite_score(
    item: ScoringInput[K],
    weights: Weights,
    now: datetime,
    co_activation: int = 0,
    scale: float = 1.0,
    profile_intent: bool = False,
) -> float:
    """One candidate's composite score (rules 2-5 of the module docstring).

    ``item.search_score`` is relevance already normalised against the best candidate,
    clamped to [0, 1] (NaN counts as 0); ``scale`` is the best candidate's absolute score.
    ``profile_intent``: the query asks about the user (:func:`has_profile_intent`).
    """
    relevance = _unit(item.search_score, 0.0)
    scale = _unit(scale, 1.0)
    if not weights.blend:
        score = scale * relevance * modifier(item, weights, now, co_activation) / MAX_MODIFIER
    else:
        recency = age_score(item.effective_at, now)
        confidence = confidence_score(
            item.confidence, item.content_type, item.last_accessed_at, item.effective_at, now
        )
        base = (
            weights.search * relevance + weights.recency * recency + weights.confidence * confidence
        )
        score = base * quality_factor(item.quality_score) * length_factor(item.body_length)
        score = scale * min(1.0, score)
    if item.superseded:
        score *= SUPERSEDED_FACTOR
    if item.snoozed:
        score *= SNOOZED_FACTOR
    if profile_intent and item.content_type in CANONICAL_TYPES:
        score = max(score, min(scale, score * CANONICAL_BOOST))
    if item.pinned:
        score = max(score, min(scale, score + PIN_BOOST * scale))
    return score


def time_reference(items: Iterable[ScoringInput[K]], weights: Weights, now: datetime) -> datetime:
    """The moment ages count from: ``now``, except for pure recency questions (blended
    weights where recency outweighs relevance), where it is the newest candidate's time
    when that is earlier.

    "Where were we?" asks for the newest work, however long ago the last session was: ages
    relative to it keep the newest handoff at full recency instead of every candidate
    decayed to nothing. A question that names a topic ("what did Joanna watch recently?")
    keeps ``now``: in a vault whose dates are all long past, relevance then decides."""
    if not weights.blend or weights.recency <= weights.search:
        return now
    times = [_utc(item.effective_at) for item in items if item.effective_at is not None]
    newest = max(times, default=None)
    return min(_utc(now), newest) if newest is not None else now


def apply_composite(
    items: Iterable[ScoringInput[K]],
    weights: Weights,
    now: datetime,
    co_activation: Callable[[K], int] | None = None,
    recency_first_types: Sequence[str] = (),
    scale: float | None = None,
    lead_types: Sequence[str] = (),
    profile_intent: bool = False,
) -> list[tuple[K, float]]:
    """Composite-score ``items`` and sort them best first (ties keep input order).

    Search scores are normalised against the best one (rule 1); they must be on a linear
    scale (a fused score, a cosine, a raw BM25 magnitude), not squashed. ``scale`` defaults
    to the best search score clamped to [0, 1]. ``co_activation`` maps a key to its
    co-activation count (omitted: no boost). Items whose content type is in
    ``recency_first_types`` (pass RECENCY_FIRST_TYPES under recency intent) come before all
    others, each group still ordered by score; ``lead_types`` (CONTINUATION_TYPES for "where
    were we") come before those. ``profile_intent`` (:func:`has_profile_intent` of the
    query) lifts canonical memories (rule 5).
    """
    pool = list(items)
    top = max((_unit(item.search_score, 0.0) for item in pool), default=None)
    if scale is None:
        scale = 1.0 if top is None else top
    best = top if top else 1.0
    now = time_reference(pool, weights, now)
    first = frozenset(recency_first_types)
    lead = frozenset(lead_types)
    scored = [
        (
            0 if item.content_type in lead else 1 if item.content_type in first else 2,
            item.key,
            composite_score(
                item._replace(search_score=_unit(item.search_score, 0.0) / best),
                weights,
                now,
                co_activation(item.key) if co_activation else 0,
                scale,
                profile_intent,
            ),
        )
        for item in pool
    ]
    scored.sort(key=lambda entry: (entry[0], -entry[2]))
    return [(key, score) for _, key, score in scored]
