"""Phase 3: deductive synthesis with the three-layer validator, against the fake model
server (good drafts, contamination, bad indices, unsupported, fail-open validator,
dedupe, failures) and without an LLM."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memtrove import Vault
from memtrove.lifecycle.synthesis import (
    DeductiveSynthesisStats,
    Draft,
    Source,
    generate_deductions,
    select_sources,
    validate_draft,
)
from tests.fakes.model_server import ModelServer
from tests.lifecycle.consolidation_helpers import observe, smart_vault

MIGRATION = "Alice moved the billing service to PostgreSQL"
LATENCY = "Billing latency fell after the PostgreSQL move"
OTHER = "Carol owns the deployment runbook for Kubernetes"


def seed(vault: Vault) -> list[int]:
    return [
        observe(vault, "m1", [MIGRATION], kind="decision"),
        observe(vault, "m2", [LATENCY], kind="milestone"),
        observe(vault, "m3", [OTHER], kind="problem"),
        observe(vault, "m4", ["Refactored the parser"], kind="refactor"),  # not a deductive type
    ]


def replies(draft: object, validator: str = '{"supported": true}') -> Callable[[str], str]:
    def reply(prompt: str) -> str:
        if "genuinely support" in prompt:
            return validator
        if "logic checker" in prompt:
            return '{"contradictory": false, "confidence": 0.1}'
        return draft if isinstance(draft, str) else json.dumps(draft)

    return reply


def deductions(vault: Vault) -> list[tuple[int, str, str]]:
    return [
        (int(r[0]), str(r[1]), str(r[2]))
        for r in vault._connection.execute(
            "SELECT id, title, content_type FROM documents WHERE collection = '_memtrove' "
            "AND path LIKE 'agent/deductions/%' AND active = 1 ORDER BY id"
        ).fetchall()
    ]


def synthesize(vault: Vault, **options: Any) -> DeductiveSynthesisStats:
    return generate_deductions(vault._connection, llm=vault.models.llm, **options)


def test_sources_are_recent_deductive_types_not_yet_used(vault: Vault) -> None:
    ids = seed(vault)
    observe(vault, "old", ["An old decision"], age_days=10)
    sources = select_sources(vault._connection)
    assert [s.id for s in sources] == [ids[2], ids[1], ids[0]]


def test_a_supported_deduction_is_written_with_its_provenance(
    tmp_path: Path, model_server: ModelServer
) -> None:
    with smart_vault(tmp_path, model_server) as vault:
        seed(vault)
        conclusion = "Alice's PostgreSQL move made billing faster"
        model_server.set_chat_reply(
            replies(
                [{"conclusion": conclusion, "premises": ["p1", "p2"], "source_indices": [3, 2]}]
            )
        )
        stats = synthesize(vault)
        assert (stats.considered, stats.drafted, stats.accepted, stats.created) == (3, 1, 1, 1)
        assert stats.validator_fallback_accepts == 0
        [(doc_id, title, content_type)] = deductions(vault)
        assert title == conclusion and content_type == "deductive"
        sources = {
            int(r[0])
            for r in vault._connection.execute(
                "SELECT source_id FROM deductive_sources WHERE deductive_id = ?", (doc_id,)
            )
        }
        assert len(sources) == 2
        edges = vault._connection.execute(
            "SELECT source_id, relation_type FROM memory_relations WHERE target_id = ?", (doc_id,)
        ).fetchall()
        assert {(int(a), b) for a, b in edges} == {(s, "supporting") for s in sources}
        # The sources are used now: nothing is drafted from them again.
        assert {s.id for s in select_sources(vault._connection)}.isdisjoint(sources)
        assert vault.search("faster billing")  # indexed like any document


@pytest.mark.parametrize(
    ("draft", "counter"),
    [
        ({"conclusion": "Carol made billing faster", "source_indices": [3, 2]}, "contamination_rejects"),
        ({"conclusion": "Billing got faster after the move", "source_indices": [3, 9]}, "invalid_index_rejects"),
        ({"conclusion": "Billing got faster after the move", "source_indices": [3, 3]}, "invalid_index_rejects"),
        ({"conclusion": "", "source_indices": [3, 2]}, "empty_rejects"),
        ({"conclusion": "faster", "source_indices": [3, 2]}, "empty_rejects"),
    ],
)  # fmt: skip
def test_the_deterministic_checks_reject(
    tmp_path: Path, model_server: ModelServer, draft: dict[str, object], counter: str
) -> None:
    with smart_vault(tmp_path, model_server) as vault:
        seed(vault)
        model_server.set_chat_reply(replies([draft]))
        stats = synthesize(vault)
        assert stats.rejected == 1 and getattr(stats, counter) == 1 and stats.created == 0
        assert deductions(vault) == []


def test_contamination_is_entity_aware(vault: Vault) -> None:
    pool = [Source(1, "a", ("the move happened",), "decision"),
            Source(2, "b", ("latency fell",), "milestone"),
            Source(3, "c", ("the runbook exists",), "problem")]  # fmt: skip
    connection = vault._connection
    connection.execute(
        "INSERT INTO content (hash, doc, created_at) VALUES ('h', 'x', '2026-01-01T00:00:00Z')"
    )
    for doc_id in (1, 2, 3):
        connection.execute(
            "INSERT INTO documents (id, collection, path, title, hash, docid, created_at, "
            "modified_at) VALUES (?, 'n', ?, 't', 'h', ?, '2026-01-01T00:00:00Z', "
            "'2026-01-01T00:00:00Z')",
            (doc_id, f"{doc_id}.md", f"e{doc_id}0000"),
        )
    connection.execute(
        "INSERT INTO entity_nodes (entity_id, entity_type, name) VALUES ('tool:kube', 'tool', "
        "'kubectl')"
    )
    connection.execute("INSERT INTO entity_mentions (entity_id, doc_id) VALUES ('tool:kube', 3)")
    bleed = validate_draft(
        connection, None, Draft("the move made kubectl faster", (), (1, 2)), pool
    )
    assert not bleed.accepted and bleed.reason == "contamination" and bleed.hits == ("kubectl",)
    clean = validate_draft(connection, None, Draft("the move made latency fall", (), (1, 2)), pool)
    assert clean.accepted and clean.fallback


def test_the_validator_can_refuse(tmp_path: Path, model_server: ModelServer) -> None:
    with smart_vault(tmp_path, model_server) as vault:
        seed(vault)
        draft = [{"conclusion": "Billing got faster after the move", "source_indices": [3, 2]}]
        model_server.set_chat_reply(replies(draft, '{"supported": false, "reason": "no"}'))
        stats = synthesize(vault)
        assert stats.unsupported_rejects == 1 and stats.created == 0


@pytest.mark.parametrize("validator", ["garbage", '{"supported": "yes"}', '{"suppo'])
def test_a_broken_validator_fails_open_and_is_counted(
    tmp_path: Path, model_server: ModelServer, validator: str
) -> None:
    with smart_vault(tmp_path, model_server) as vault:
        seed(vault)
        draft = [{"conclusion": "Billing got faster after the move", "source_indices": [3, 2]}]
        model_server.set_chat_reply(replies(draft, validator))
        stats = synthesize(vault)
        assert stats.created == 1 and stats.validator_fallback_accepts == 1


def test_a_duplicate_is_skipped_and_a_contradiction_linked(
    tmp_path: Path, model_server: ModelServer
) -> None:
    with smart_vault(tmp_path, model_server) as vault:
        seed(vault)
        first = "The PostgreSQL move made billing latency fall"
        model_server.set_chat_reply(replies([{"conclusion": first, "source_indices": [3, 2]}]))
        assert synthesize(vault).created == 1
        observe(vault, "n1", [MIGRATION + " again"], kind="decision")
        observe(vault, "n2", [LATENCY + " again"], kind="milestone")
        model_server.set_chat_reply(
            replies([{"conclusion": first + ".", "source_indices": [1, 2]}])
        )
        assert synthesize(vault).dedup_skipped == 1
        observe(vault, "n3", [MIGRATION + " once more"], kind="decision")
        observe(vault, "n4", [LATENCY + " once more"], kind="milestone")

        def reply(prompt: str) -> str:
            if "logic checker" in prompt:
                return '{"contradictory": true, "confidence": 0.9}'
            if "genuinely support" in prompt:
                return '{"supported": true}'
            return json.dumps([{"conclusion": "The PostgreSQL move made billing latency rise",
                                "source_indices": [1, 2]}])  # fmt: skip

        model_server.set_chat_reply(reply)
        assert synthesize(vault).created == 1
        (old, _, _), (new, _, _) = deductions(vault)
        edge = vault._connection.execute(
            "SELECT contradict_confidence FROM memory_relations WHERE source_id = ? AND "
            "target_id = ? AND relation_type = 'contradicts'",
            (new, old),
        ).fetchone()
        assert edge is not None and edge[0] == 0.9


@pytest.mark.parametrize("mode", ["http500", "slow"])
def test_a_failing_draft_call_writes_nothing(
    tmp_path: Path, model_server: ModelServer, mode: str
) -> None:
    model_server.slow_seconds = 0.3
    with smart_vault(tmp_path, model_server) as vault:
        seed(vault)
        model_server.set_mode("chat", mode)
        if mode == "slow":
            model_server.set_chat_reply("garbage after a wait")
        stats = synthesize(vault)
        assert stats.null_calls == 1 and stats.created == 0 and deductions(vault) == []


def test_fenced_and_truncated_drafts_are_read(tmp_path: Path, model_server: ModelServer) -> None:
    with smart_vault(tmp_path, model_server) as vault:
        seed(vault)
        good = {"conclusion": "Billing got faster after the move", "source_indices": [3, 2]}
        model_server.set_chat_reply(replies(f'```json\n[{json.dumps(good)}, {{"concl'))
        stats = synthesize(vault)
        assert stats.drafted == 1 and stats.created == 1


def test_without_an_llm_phase_3_is_skipped(vault: Vault) -> None:
    seed(vault)
    stats = generate_deductions(vault._connection, llm=None)
    assert stats.skipped == "no_llm" and stats.created == 0
    assert "skipped (no llm)" in stats.text()


def test_dry_run_counts_but_writes_nothing(tmp_path: Path, model_server: ModelServer) -> None:
    with smart_vault(tmp_path, model_server) as vault:
        seed(vault)
        draft = [{"conclusion": "Billing got faster after the move", "source_indices": [3, 2]}]
        model_server.set_chat_reply(replies(draft))
        stats = synthesize(vault, dry_run=True)
        assert stats.created == 1 and deductions(vault) == []


def test_a_timing_out_llm_writes_no_deduction(tmp_path: Path, model_server: ModelServer) -> None:
    from memtrove.models.openai_compat import HttpLLM

    model_server.slow_seconds = 1.0
    model_server.set_mode("chat", "slow")
    with smart_vault(tmp_path, model_server) as vault:
        seed(vault)
        vault.models._llm = HttpLLM(model_server.url, timeout=0.2)
        stats = synthesize(vault)
        assert stats.null_calls == 1 and stats.drafted == 0 and deductions(vault) == []
        assert (
            vault._connection.execute("SELECT COUNT(*) FROM deductive_sources").fetchone()[0] == 0
        )
