"""Performance profiles of ``context-surfacing`` and its adaptive score threshold.

``MEMTROVE_PROFILE`` picks one of ``speed``, ``balanced`` (the default) and ``deep``; the
numbers are the reference implementation's profile table. Every profile filters by the
adaptive threshold of concepts/composite-scoring: composite scores vary with vault size,
document structure, embedding model and age, so instead of a fixed minimum the hook keeps
results within a ratio of the best one, and gives up when even the best is too weak.

``min_score`` is the legacy absolute threshold (0.35 under recency intent); it is kept for
reference, as every profile runs the adaptive mode.

The ratios are lower than the reference's (0.65 / 0.55 / 0.45) because relevance is now
linear: composite scores follow the BM25 and fused scores in proportion (see
``retrieval.scoring``), where the reference's squashed BM25 put every hit of a query
within ~10 % of the best. On LoCoMo dev the balanced profile's R@10 over the injected
documents was .769 at 0.20, .766 at 0.30, .759 at 0.40 and .689 at 0.55.
"""

from collections.abc import Callable, Sequence
from typing import NamedTuple, TypeVar

__all__ = [
    "DEFAULT_PROFILE",
    "PROFILES",
    "RECENCY_MIN_SCORE",
    "Profile",
    "adaptive_cutoff",
    "apply_adaptive_threshold",
    "lead_cut",
    "resolve_profile",
]

K = TypeVar("K")

DEFAULT_PROFILE = "balanced"
RECENCY_MIN_SCORE = 0.35  # the legacy absolute threshold under recency intent
# The lead cut of speed and balanced (deep keeps every result the threshold passes):
# measured on the judged working sessions (tests/benchmarks/agent_sessions.jsonl), 0.8
# injects 4.9 entries instead of 9.9 (median tokens 381 instead of 714) and precision .32
# instead of .10, for a right document in 82 % of prompts instead of 86 %; 0.85 would reach
# 263 tokens and .38 but lose Go proposals' top-3 hits below query's (.818 against .841).
LEAD_RATIO = 0.8


class Profile(NamedTuple):
    """One row of the profile table (times in milliseconds, budgets in estimated tokens);
    ``_replace`` makes a changed copy."""

    name: str
    token_budget: int
    max_results: int
    use_vector: bool
    vector_timeout_ms: int
    min_score: float
    min_score_ratio: float
    absolute_floor: float
    activation_floor: float
    deep_escalation: bool
    escalation_budget_ms: int
    facts_tokens: int
    # The entries cut (:func:`lead_cut`): once ranked, only results within this share of
    # the best are injected, so a prompt one document answers gets that one.
    lead_ratio: float = 0.0


# fmt: off
_TABLE = (
    # name, token_budget, max_results, use_vector, vector_timeout_ms, min_score,
    # min_score_ratio, absolute_floor, activation_floor, deep_escalation,
    # escalation_budget_ms, facts_tokens, lead_ratio: the fields of Profile, in order
    ("speed",     400,  5, False,    0, 0.55, 0.40, 0.18, 0.24, False,    0,   0, LEAD_RATIO),
    ("balanced",  800, 10, True,   900, 0.45, 0.30, 0.15, 0.20, False,    0, 200, LEAD_RATIO),
    ("deep",     1200, 15, True,  2000, 0.25, 0.25, 0.12, 0.16, True,  4000, 250, 0.0),
)
# fmt: on
PROFILES: dict[str, Profile] = {row[0]: Profile(*row) for row in _TABLE}


def resolve_profile(name: str | None) -> tuple[Profile, str | None]:
    """The profile called ``name`` (case-insensitive; empty means the default).

    An unknown name falls back to the default profile; the second value then says so, for
    the hook log (a hook never fails on configuration).
    """
    key = (name or "").strip().lower() or DEFAULT_PROFILE
    if key in PROFILES:
        return PROFILES[key], None
    known = ", ".join(PROFILES)
    warning = f"unknown MEMTROVE_PROFILE {name!r} (known: {known}); using {DEFAULT_PROFILE}"
    return PROFILES[DEFAULT_PROFILE], warning


def adaptive_cutoff(scores: Sequence[float], profile: Profile) -> float | None:
    """The minimum score a result needs, or None when nothing should surface at all.

    None when there are no scores or the best is below ``activation_floor``; otherwise
    ``max(best * min_score_ratio, absolute_floor)``. The best is the maximum, not the first
    score: recency ordering can put a lower score first.
    """
    if not scores:
        return None
    best = max(scores)
    if best < profile.activation_floor:
        return None
    return max(best * profile.min_score_ratio, profile.absolute_floor)


def lead_cut(
    scored: Sequence[tuple[K, float]],
    profile: Profile,
    exempt: Callable[[K], bool] = lambda _: False,
    leads: Callable[[K], bool] = lambda _: True,
) -> list[tuple[K, float]]:
    """The items of ``scored`` within ``profile.lead_ratio`` of the best score of those
    that may ``leads`` (all by default), in order; ``exempt`` items stay whatever their
    score (they passed the adaptive threshold)."""
    if not scored or profile.lead_ratio <= 0:
        return list(scored)
    best = max((score for key, score in scored if leads(key)), default=0.0)
    floor = (best or max(score for _, score in scored)) * profile.lead_ratio
    return [(key, score) for key, score in scored if score >= floor or exempt(key)]


def apply_adaptive_threshold(
    scored: Sequence[tuple[K, float]], profile: Profile
) -> list[tuple[K, float]]:
    """The items of ``scored`` that pass :func:`adaptive_cutoff`, in their order."""
    cutoff = adaptive_cutoff([score for _, score in scored], profile)
    if cutoff is None:
        return []
    return [(key, score) for key, score in scored if score >= cutoff]
