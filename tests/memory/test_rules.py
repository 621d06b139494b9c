"""The prediction and behavior engines: the Bayesian confidence, provenance, surfacing."""

from __future__ import annotations

import pytest

from memtrove.errors import EntryNotFoundError, InvalidQueryError, MemtroveError
from memtrove.memory.rules import SOFT_WEIGHT, confidence
from memtrove.vault import Vault


def test_the_confidence_formula_with_fractional_soft_signals() -> None:
    assert confidence(0, 0) == 0.5
    assert confidence(1, 0) == pytest.approx(3.5 / 6)
    assert confidence(0, 1) == pytest.approx(2.5 / 6)
    assert confidence(SOFT_WEIGHT, 0) == pytest.approx(2.75 / 5.25)
    assert confidence(3 + 2 * SOFT_WEIGHT, 1) == pytest.approx((3.5 + 2.5) / (4.5 + 5))


@pytest.mark.parametrize("kind", ["prediction", "behavior"])
def test_signals_move_confidence_and_every_one_is_recorded(vault: Vault, kind: str) -> None:
    rule = vault.rules.add_rule(kind, "Prefers small focused commits", rationale="said so twice")
    assert rule.confidence == 0.5 and rule.matchers == []
    assert vault.rules.signal_rule(kind, rule.id, "confirm", "merged a 3-file PR") == pytest.approx(
        3.5 / 6
    )
    vault.rules.signal_rule(kind, rule.id, "soft")
    vault.rules.signal_rule(kind, rule.id, "soft")
    final = vault.rules.signal_rule(kind, rule.id, "disconfirm", "asked for one big commit")
    assert final == pytest.approx(confidence(1.5, 1))
    listed = vault.rules.rules(kind)[0]
    assert (listed.confirm_count, listed.disconfirm_count) == (1.5, 1.0)
    assert listed.confidence == pytest.approx(final)
    signals = [name for name, _, _ in vault.rules.rule_provenance(kind, rule.id)]
    assert signals == ["create", "confirm", "soft", "soft", "disconfirm"]
    details = [detail for _, detail, _ in vault.rules.rule_provenance(kind, rule.id)]
    assert details[1] == "merged a 3-file PR" and details[0] == "Prefers small focused commits"
    with pytest.raises(InvalidQueryError, match="signal must be one of"):
        vault.rules.signal_rule(kind, rule.id, "codify")
    with pytest.raises(EntryNotFoundError):
        vault.rules.signal_rule(kind, "p-nope", "confirm")


def test_codify_is_for_behaviors_and_recorded(vault: Vault) -> None:
    behavior = vault.rules.add_rule("behavior", "Run the linter before committing")
    vault.rules.codify_behavior(behavior.id, "added to CONTRIBUTING.md")
    assert vault.rules.rules("behavior")[0].codified_at is not None
    assert vault.rules.rule_provenance("behavior", behavior.id)[-1][:2] == (
        "codify",
        "added to CONTRIBUTING.md",
    )
    prediction = vault.rules.add_rule("prediction", "Likes tabs")
    with pytest.raises(EntryNotFoundError):
        vault.rules.codify_behavior(prediction.id)
    with pytest.raises(InvalidQueryError, match="prediction or behavior"):
        vault.rules.add_rule("habit", "x")


def test_links_and_weights(vault: Vault) -> None:
    rule = vault.rules.add_rule("prediction", "Wants type hints", when=["writing new Python code"])
    assert [m.description for m in rule.matchers] == ["writing new Python code"]
    matcher = rule.matchers[0].id
    other = vault.rules.add_rule("prediction", "Wants docstrings")
    assert vault.rules.link_rule("prediction", other.id, matcher_id=matcher, weight=0.5) == matcher
    assert vault.rules.rules("prediction")[1].matchers[0].weight in (0.5, 1.0)
    with pytest.raises(InvalidQueryError, match="weight"):
        vault.rules.link_rule("prediction", other.id, matcher_id=matcher, weight=0)
    with pytest.raises(MemtroveError, match="either a matcher id or a situation"):
        vault.rules.link_rule("prediction", other.id)
    with pytest.raises(EntryNotFoundError):
        vault.rules.link_rule("prediction", "p-missing", matcher_id=matcher)


def test_surfacing_needs_cosine_weight_and_confidence_over_the_threshold(vault: Vault) -> None:
    situation = "the user asks to refactor a Python module"
    rule = vault.rules.add_rule("behavior", "Keep refactors behavior-preserving", when=[situation])
    store = [vault.memory.resolve_store()]
    assert vault.rules.match_rules(situation, store) == []  # confidence 0.5: at most 0.5
    for _ in range(6):
        vault.rules.signal_rule("behavior", rule.id, "confirm")
    matches = vault.rules.match_rules("please refactor this Python module", store)
    assert [m.rule.id for m in matches] == [rule.id]
    match = matches[0]
    assert match.score == pytest.approx(
        max(0.0, match.cosine) * match.weight * match.rule.confidence
    )
    assert match.score >= 0.60
    assert vault.rules.match_rules("what is the weather in Lisbon tomorrow", store) == []
    low = vault.rules.add_rule("behavior", "Mention the changelog", when=[situation])
    for _ in range(6):
        vault.rules.signal_rule("behavior", low.id, "confirm")
    vault.rules.link_rule("behavior", low.id, matcher_id=low.matchers[0].id, weight=0.1)
    assert low.id not in [m.rule.id for m in vault.rules.match_rules(situation, store)]
    assert vault.rules.match_rules(situation, ["global"]) == []  # another store
