"""Profiles (the inventory's table) and the adaptive threshold."""

from __future__ import annotations

import pytest

from memtrove.hooks.profiles import (
    PROFILES,
    adaptive_cutoff,
    apply_adaptive_threshold,
    resolve_profile,
)
from memtrove.hooks.settings import HookSettings


def test_profile_table() -> None:
    rows = {
        name: (
            p.token_budget, p.max_results, p.use_vector, p.vector_timeout_ms, p.min_score,
            p.min_score_ratio, p.absolute_floor, p.activation_floor, p.deep_escalation,
            p.escalation_budget_ms, p.facts_tokens,
        )
        for name, p in PROFILES.items()
    }  # fmt: skip
    # The reference's table, but for the ratios (0.65 / 0.55 / 0.45 there): composite
    # scores are linear in relevance here (see hooks.profiles).
    assert rows == {
        "speed": (400, 5, False, 0, 0.55, 0.40, 0.18, 0.24, False, 0, 0),
        "balanced": (800, 10, True, 900, 0.45, 0.30, 0.15, 0.20, False, 0, 200),
        "deep": (1200, 15, True, 2000, 0.25, 0.25, 0.12, 0.16, True, 4000, 250),
    }


def test_resolve_profile() -> None:
    assert resolve_profile(None) == (PROFILES["balanced"], None)
    assert resolve_profile(" Speed ")[0] is PROFILES["speed"]
    profile, warning = resolve_profile("turbo")
    assert profile is PROFILES["balanced"] and warning and "turbo" in warning


def test_settings_read_the_profile_and_warn(tmp_path: object) -> None:
    settings = HookSettings.from_env({"MEMTROVE_PROFILE": "deep", "HOME": "/h"})
    assert settings.profile is PROFILES["deep"] and settings.warnings == ()
    odd = HookSettings.from_env(
        {"MEMTROVE_PROFILE": "x", "MEMTROVE_HOOK_VECTORS": "sometimes", "HOME": "/h",
         "MEMTROVE_HOOK_DEDUP_WINDOW_SEC": "soon"}
    )  # fmt: skip
    assert odd.profile is PROFILES["balanced"] and odd.vectors == "auto"
    assert odd.dedupe_window_seconds == 600 and len(odd.warnings) == 3


@pytest.mark.parametrize(
    ("name", "best", "cutoff"),
    [
        ("balanced", 1.0, 0.30),  # ratio wins
        ("balanced", 0.25, 0.15),  # 0.075 is under the absolute floor
        ("balanced", 0.19, None),  # under the activation floor: nothing surfaces
        ("speed", 0.5, 0.20),
        ("speed", 0.23, None),
        ("deep", 0.17, 0.12),
        ("deep", 0.15, None),
    ],
)
def test_adaptive_cutoff(name: str, best: float, cutoff: float | None) -> None:
    got = adaptive_cutoff([best * 0.5, best, best * 0.1], PROFILES[name])
    assert got == (pytest.approx(cutoff) if cutoff is not None else None)


def test_threshold_keeps_order_and_uses_the_maximum() -> None:
    # Recency ordering can put a weaker result first: the best is the maximum.
    scored = [("handoff", 0.25), ("decision", 0.9), ("note", 0.5), ("noise", 0.2)]
    assert apply_adaptive_threshold(scored, PROFILES["balanced"]) == [
        ("decision", 0.9),
        ("note", 0.5),
    ]
    assert apply_adaptive_threshold([], PROFILES["balanced"]) == []
    assert apply_adaptive_threshold([("weak", 0.1)], PROFILES["balanced"]) == []
