"""The merge gates: name-aware merge safety (the spec's own examples) and contradictions."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.lifecycle.merge_gates import (
    anchors_differ,
    check_contradiction,
    heuristic_contradiction,
    lexical_anchors,
    llm_contradiction,
    merge_safety,
    trigram_cosine,
    word_jaccard,
)
from memtrove.models.registry import Models, ModelSettings
from tests.fakes.model_server import ModelServer


def test_trigram_cosine_is_normalised_and_bounded() -> None:
    assert trigram_cosine("Use PostgreSQL!", "use   postgresql") == 1.0
    assert trigram_cosine("", "anything") == 0.0
    assert 0.0 < trigram_cosine("Dan visited Paris", "Dad visited Paris") < 1.0
    assert trigram_cosine("ab", "ab") == 1.0


def test_word_jaccard_uses_long_words_only() -> None:
    assert word_jaccard("the cat sat on a mat", "a mat") == 0.0
    assert word_jaccard("billing service uses postgres", "postgres billing service") == 0.75


def test_lexical_anchors_skip_sentence_start_words() -> None:
    assert lexical_anchors("The team chose PostgreSQL after Alice asked") == {"postgresql", "alice"}
    assert lexical_anchors("we use it") == set()


@pytest.mark.parametrize(
    ("a", "b", "differ"),
    [
        ({"alice"}, {"bob"}, True),  # "Alice decided X" vs "Bob decided X"
        ({"dan", "paris"}, {"dad", "paris"}, True),  # shared context is not the subject
        ({"alice", "auth-service"}, {"bob", "auth-service"}, True),
        ({"bob"}, {"bob", "smith"}, False),  # "Bob" and "Bob Smith": a subset
        ({"a", "b", "c"}, {"a", "b", "d"}, False),  # two of three shared
        (set(), {"bob"}, False),  # one side empty: the strict default decides
    ],
)
def test_anchor_sets_differ_materially(a: set[str], b: set[str], differ: bool) -> None:
    assert anchors_differ(a, b) is differ


def test_alice_never_merges_into_bob() -> None:
    decision = merge_safety(
        None,
        "Alice decided to use PostgreSQL for the billing service",
        [1],
        "Bob decided to use PostgreSQL for the billing service",
        [2],
    )
    assert not decision.accepted
    assert decision.method == "lexical_only"
    assert "materially different" in decision.reason


def test_identical_wording_with_different_subjects_is_still_refused() -> None:
    # Hard reject, not a stricter threshold: a templated text at score ~1 must not pass.
    decision = merge_safety(None, "Dan visited Paris.", [1], "Dad visited Paris.", [2])
    assert not decision.accepted
    assert decision.score > 0.6


def test_compatible_anchors_merge_at_the_normal_threshold() -> None:
    text = "Bob Smith moved the nightly export job to the new scheduler on Monday"
    same = merge_safety(None, text, [1], text.replace("Monday", "Monday."), [2])
    assert same.accepted and same.threshold == 0.93
    near = merge_safety(
        None, "Bob moved the export job to the scheduler", [1], "Bob Smith moved a job", [2]
    )
    assert not near.accepted and near.threshold == 0.93


def test_no_anchors_needs_the_strict_threshold() -> None:
    a = "we moved the nightly export job to the new scheduler"
    b = "we moved the nightly export jobs to the new scheduler"
    decision = merge_safety(None, a, [1], b, [2])
    assert decision.method == "strictest_default" and decision.threshold == 0.98
    assert decision.accepted is (decision.score >= 0.98)
    assert merge_safety(None, a, [1], b, [2], strict=0.9).accepted


def test_entity_mentions_decide_when_every_source_has_them(vault: Vault) -> None:
    connection = vault._connection
    connection.execute(
        "INSERT INTO content (hash, doc, created_at) VALUES ('h', 'x', '2026-01-01T00:00:00Z')"
    )
    for doc_id in (1, 2):
        connection.execute(
            "INSERT INTO documents (id, collection, path, title, hash, docid, created_at, "
            "modified_at) VALUES (?, 'notes', ?, 't', 'h', ?, '2026-01-01T00:00:00Z', "
            "'2026-01-01T00:00:00Z')",
            (doc_id, f"{doc_id}.md", f"d{doc_id}0000"),
        )
    for entity in ("person:alice", "person:bob"):
        connection.execute(
            "INSERT INTO entity_nodes (entity_id, entity_type, name) VALUES (?, 'person', ?)",
            (entity, entity.split(":")[1]),
        )
    connection.execute("INSERT INTO entity_mentions (entity_id, doc_id) VALUES ('person:alice', 1)")
    connection.execute("INSERT INTO entity_mentions (entity_id, doc_id) VALUES ('person:bob', 2)")
    # The texts name nobody, the entities differ: refused, entity-aware.
    decision = merge_safety(connection, "they chose postgres", [1], "they chose postgres", [2])
    assert not decision.accepted and decision.method == "entity_aware"
    # One side without entity state: both sides lexical, like with like.
    lexical = merge_safety(connection, "they chose postgres", [1], "they chose postgres", [3])
    assert lexical.method == "strictest_default" and lexical.accepted


@pytest.mark.parametrize(
    ("a", "b", "contradictory", "confidence"),
    [
        ("We deploy on Fridays", "We never deploy on Fridays", True, 0.6),
        ("The timeout is 30 seconds", "The timeout is 45 seconds", True, 0.5),
        ("Released on 2026-04-10", "Released on 2026-04-10 at noon", False, 0.0),
        ("Use PostgreSQL", "Use PostgreSQL for billing", False, 0.0),
    ],
)
def test_the_heuristic_sees_negation_and_numbers(
    a: str, b: str, contradictory: bool, confidence: float
) -> None:
    verdict = heuristic_contradiction(a, b)
    assert (verdict.contradictory, verdict.confidence, verdict.source) == (
        contradictory,
        confidence,
        "heuristic",
    )


def _llm(tmp_path: Path, server: ModelServer) -> Models:
    return Models(ModelSettings(llm_url=server.url))


def test_a_good_llm_answer_decides(tmp_path: Path, model_server: ModelServer) -> None:
    llm = _llm(tmp_path, model_server).llm
    model_server.set_chat_reply(
        '```json\n{"contradictory": true, "confidence": 0.9, "reason": "r"}\n```'
    )
    verdict = check_contradiction(llm, "We use X", "We use X")
    assert verdict == (True, 0.9, "r", "llm") and verdict.actionable()
    model_server.set_chat_reply('{"contradictory": false, "confidence": 7, "reason": 3}')
    assert check_contradiction(llm, "a", "not a") == (False, 1.0, "", "llm")


@pytest.mark.parametrize(
    "reply", ['{"contradictory": "yes"}', '{"contradictory": tr', "no JSON at all", ""]
)
def test_an_unusable_llm_answer_falls_back_to_the_heuristic(
    tmp_path: Path, model_server: ModelServer, reply: str
) -> None:
    llm = _llm(tmp_path, model_server).llm
    model_server.set_chat_reply(reply)
    assert llm_contradiction(llm, "a", "b") is None
    assert check_contradiction(llm, "We deploy", "We never deploy").source == "heuristic"


def test_a_failing_llm_falls_back_to_the_heuristic(
    tmp_path: Path, model_server: ModelServer
) -> None:
    llm = _llm(tmp_path, model_server).llm
    model_server.set_mode("chat", "http500")
    verdict = check_contradiction(llm, "The limit is 5", "The limit is 6")
    assert verdict.source == "heuristic" and verdict.contradictory
    assert not verdict.actionable(0.55)
