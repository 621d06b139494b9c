"""Phase 2 on a real vault: observations merged into consolidated_observations behind the
merge-safety and contradiction gates, with and without an LLM."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memtrove import Vault
from memtrove.lifecycle import consolidation
from memtrove.lifecycle.consolidation import (
    ConsolidationOptions,
    Phase2Report,
    consolidate_observations,
    heuristic_patterns,
    select_observations,
    surprising_observations,
)
from memtrove.lifecycle.maintenance import LaneSettings
from tests.conftest import where
from tests.fakes.model_server import ModelServer
from tests.lifecycle.consolidation_helpers import observe, rows, smart_vault

ALICE = "Alice decided to use PostgreSQL for the billing service"
BOB = "Bob decided to use PostgreSQL for the billing service"


def run(vault: Vault, **options: Any) -> Phase2Report:
    return consolidate_observations(
        vault._connection,
        llm=vault.models.llm if vault.models.has_llm else None,
        options=ConsolidationOptions(**options),
    )


def test_two_observations_of_one_fact_become_a_pattern(vault: Vault) -> None:
    a = observe(vault, "a1", [ALICE, "The invoices table moves first"])
    b = observe(vault, "a2", [ALICE + ".", "Unrelated note about the office plants"])
    report = run(vault)
    assert report.selected == 2 and report.patterns == 1 and report.created == 1
    [row] = rows(vault)
    assert row["observation"] in (ALICE, ALICE + ".")
    assert sorted(row["source_doc_ids"]) == sorted([a, b])
    assert row["proof_count"] == 2 and row["trend"] == "NEW" and row["collection"] == "_memtrove"
    # Consolidated observations are not selected again.
    assert select_observations(vault._connection) == []
    assert run(vault).selected == 0


def test_alice_is_never_merged_into_bob(vault: Vault) -> None:
    observe(vault, "a1", [ALICE])
    observe(vault, "a2", [ALICE])
    run(vault)
    b1, b2 = observe(vault, "b1", [BOB]), observe(vault, "b2", [BOB])
    report = run(vault)
    assert report.created == 1 and report.merged == 0 and report.guard_rejections == 1
    alice, bob = rows(vault)
    assert "Alice" in alice["observation"] and "Bob" in bob["observation"]
    assert sorted(bob["source_doc_ids"]) == sorted([b1, b2])


def test_alice_and_bob_in_one_batch_stay_apart(vault: Vault) -> None:
    for name, fact in (("a1", ALICE), ("b1", BOB), ("a2", ALICE), ("b2", BOB)):
        observe(vault, name, [fact])
    assert run(vault).created == 2
    assert {r["observation"].split()[0] for r in rows(vault)} == {"Alice", "Bob"}


def test_the_same_subject_merges_and_counts_its_proofs(vault: Vault) -> None:
    observe(vault, "a1", [ALICE])
    observe(vault, "a2", [ALICE])
    run(vault)
    observe(vault, "a3", [ALICE])
    observe(vault, "a4", [ALICE])
    report = run(vault)
    assert report.merged == 1 and report.created == 0
    [row] = rows(vault)
    assert row["proof_count"] == 4 and len(set(row["source_doc_ids"])) == 4


def test_the_guard_in_dry_run_logs_but_merges_unless_guarded(vault: Vault) -> None:
    observe(vault, "a1", [ALICE])
    observe(vault, "a2", [ALICE])
    run(vault)
    observe(vault, "b1", [BOB])
    observe(vault, "b2", [BOB])
    guarded = run(vault, guard_dry_run=True, guarded=True, dry_run=True)
    assert guarded.created == 1 and guarded.merged == 0
    report = run(vault, guard_dry_run=True)
    assert report.merged == 1 and report.guard_dry_run_merges == 1
    [row] = rows(vault)
    assert row["proof_count"] == 4


def test_dry_run_writes_nothing(vault: Vault) -> None:
    observe(vault, "a1", [ALICE])
    observe(vault, "a2", [ALICE])
    report = run(vault, dry_run=True)
    assert report.dry_run and report.created == 1
    assert rows(vault) == []


LONG = "Alice set the billing service request timeout to {} seconds in the staging cluster"


@pytest.mark.parametrize("policy", ["link", "supersede"])
def test_a_contradiction_links_or_supersedes(vault: Vault, policy: str) -> None:
    observe(vault, "t1", [LONG.format(30)])
    observe(vault, "t2", [LONG.format(30)])
    run(vault)
    observe(vault, "t3", [LONG.format(45)])
    observe(vault, "t4", [LONG.format(45)])
    report = run(vault, policy=policy, normal=0.9)
    assert report.contradictions == 1 and report.merged == 0 and report.created == 1
    old, new = rows(vault, everything=True)
    assert new["contradicts_id"] == old["id"] and new["status"] == "active"
    assert old["invalidated_by"] == new["id"]
    if policy == "supersede":
        assert old["status"] == "inactive" and old["superseded_by"] == new["id"]
        assert old["invalidated_at"] is not None
        assert [r["id"] for r in rows(vault)] == [new["id"]]
    else:
        assert old["status"] == "active" and old["invalidated_at"] is None


def test_a_weak_contradiction_does_not_block_the_merge(vault: Vault) -> None:
    observe(vault, "t1", [LONG.format(30)])
    observe(vault, "t2", [LONG.format(30)])
    run(vault)
    observe(vault, "t3", [LONG.format(45)])
    observe(vault, "t4", [LONG.format(45)])
    report = run(vault, normal=0.9, min_confidence=0.55)  # the number heuristic says 0.5
    assert report.merged == 1 and report.contradictions == 0


def test_facts_that_negate_each_other_do_not_cluster() -> None:
    from memtrove.lifecycle.consolidation import Observation

    def obs(i: int, fact: str) -> Observation:
        return Observation(i, "_memtrove", "t", (fact,), "decision", "", "")

    patterns = heuristic_patterns(
        [obs(1, "We deploy on Fridays"), obs(2, "We never deploy on Fridays")]
    )
    assert patterns == []


def test_observations_without_facts_or_elsewhere_are_ignored(vault: Vault, notes: Path) -> None:
    observe(vault, "a1", [ALICE])
    from memtrove.db.connection import write_transaction
    from memtrove.index.internal import write_internal

    with write_transaction(vault._connection):
        write_internal(
            vault._connection, "_memtrove", "agent/observations/nofacts.md",
            "---\ntitle: x\nfacts: not a list\n---\n\n" + ALICE, "observation",
            "2026-01-01T00:00:00Z",
        )  # fmt: skip
        write_internal(
            vault._connection, "_memtrove", "agent/handoffs/h.md",
            f"---\nfacts: [{json.dumps(ALICE)}]\n---\n", "handoff", "2026-01-01T00:00:00Z",
        )  # fmt: skip
    assert [o.facts for o in select_observations(vault._connection)] == [(ALICE,)]


def test_stale_first_orders_by_the_coalesce_chain_without_recall_stats(vault: Vault) -> None:
    old = observe(vault, "old", ["an old fact"], age_days=30)
    new = observe(vault, "new", ["a new fact"], age_days=1)
    middle = observe(vault, "middle", ["a middle fact"], age_days=10)
    connection = vault._connection
    assert connection.execute("SELECT COUNT(*) FROM recall_stats").fetchone()[0] == 0
    stale = [o.id for o in select_observations(connection, stale=True)]
    assert stale == [old, middle, new]
    assert [o.id for o in select_observations(connection)] == [new, middle, old]
    # A recent recall makes the oldest document the freshest.
    connection.execute(
        "INSERT INTO recall_stats (doc_id, last_recalled_at) VALUES (?, '2999-01-01T00:00:00Z')",
        (old,),
    )
    assert [o.id for o in select_observations(connection, stale=True)] == [middle, new, old]


def test_an_empty_candidate_list_selects_nothing(vault: Vault) -> None:
    observe(vault, "a1", [ALICE])
    observe(vault, "a2", [ALICE])
    assert run(vault, candidate_ids=()).selected == 0
    assert rows(vault) == []


def test_surprisal_needs_embedded_observations(vault: Vault) -> None:
    for i in range(7):
        observe(vault, f"o{i}", [f"fact number {i} about topic {'ab'[i % 2]}"])
    assert surprising_observations(vault._connection, 10) == []  # nothing embedded yet
    vault.embed()
    found = surprising_observations(vault._connection, 3)
    assert len(found) == 3 and len(set(found)) == 3


def test_lane_settings_thresholds_reach_the_gate(vault: Vault) -> None:
    lanes = LaneSettings(merge_normal=0.5, merge_strict=0.5)
    observe(vault, "a1", ["we keep the release notes in the wiki"])
    observe(vault, "a2", ["we keep the release notes in the wiki"])
    vault.consolidation.consolidate(lanes=lanes, use_llm=False)
    observe(vault, "a3", ["we keep all of the release notes in the wiki pages"])
    observe(vault, "a4", ["we keep all of the release notes in the wiki pages"])
    report = vault.consolidation.consolidate(lanes=lanes, use_llm=False)
    assert report.phase2 is not None and report.phase2.merged == 1


# -- with an LLM -----------------------------------------------------------------------------


def test_llm_patterns_are_validated(tmp_path: Path, model_server: ModelServer) -> None:
    with smart_vault(tmp_path, model_server) as vault:
        a = observe(vault, "a1", [ALICE])
        b = observe(vault, "a2", ["Alice moved invoices first"])
        c = observe(vault, "c1", ["Carol wrote the runbook"])
        model_server.set_chat_reply(
            json.dumps(
                [
                    {
                        "observation": "Alice leads the billing PostgreSQL move",
                        "source_indices": [3, 2],
                    },
                    {"observation": "Bob leads it", "source_indices": [3, 2]},  # bleed
                    {"observation": "only one source", "source_indices": [1, 1]},
                    {"observation": "", "source_indices": [1, 2]},
                    "not an object",
                ]
            )
        )
        report = run(vault)
        assert report.source == "llm" and report.patterns == 1 and report.created == 1
        [row] = rows(vault)
        assert sorted(row["source_doc_ids"]) == sorted([a, b]) and c not in row["source_doc_ids"]


@pytest.mark.parametrize("mode", ["http500", "malformed_json", "degenerate"])
def test_a_failing_llm_falls_back_to_the_heuristic(
    tmp_path: Path, model_server: ModelServer, mode: str
) -> None:
    with smart_vault(tmp_path, model_server) as vault:
        observe(vault, "a1", [ALICE])
        observe(vault, "a2", [ALICE])
        model_server.set_mode("chat", mode)
        report = run(vault)
        assert report.llm_failures == 1 and report.source == "heuristic" and report.created == 1


def test_garbage_and_truncated_answers_fall_back(tmp_path: Path, model_server: ModelServer) -> None:
    with smart_vault(tmp_path, model_server) as vault:
        observe(vault, "a1", [ALICE])
        observe(vault, "a2", [ALICE])
        model_server.set_chat_reply('[{"observation": "Alice uses Postg')
        assert run(vault, dry_run=True).llm_failures == 1
        model_server.set_chat_reply("I cannot help with that.")
        report = run(vault)
        assert report.llm_failures == 1 and report.created == 1


def test_the_llm_confirms_a_contradiction(tmp_path: Path, model_server: ModelServer) -> None:
    with smart_vault(tmp_path, model_server) as vault:
        observe(vault, "a1", [ALICE])
        observe(vault, "a2", [ALICE])
        model_server.set_chat_reply("garbage")  # patterns by the heuristic
        run(vault)
        observe(vault, "a3", [ALICE])
        observe(vault, "a4", [ALICE])

        def reply(prompt: str) -> str:
            if "logic checker" in prompt:
                return '{"contradictory": true, "confidence": 0.8, "reason": "changed"}'
            return "garbage"

        model_server.set_chat_reply(reply)
        report = run(vault, policy="supersede")
        assert report.contradictions == 1 and report.superseded == 1
        assert len(rows(vault)) == 1 and len(rows(vault, everything=True)) == 2


def test_a_timing_out_llm_falls_back_and_writes_whole_rows(
    tmp_path: Path, model_server: ModelServer
) -> None:
    from memtrove.models.openai_compat import HttpLLM

    model_server.slow_seconds = 1.0
    model_server.set_mode("chat", "slow")
    with smart_vault(tmp_path, model_server) as vault:
        a, b = observe(vault, "a1", [ALICE]), observe(vault, "a2", [ALICE])
        vault.models._llm = HttpLLM(model_server.url, timeout=0.2)
        report = run(vault)
        assert report.llm_failures == 1 and report.created == 1
        [row] = rows(vault)
        assert sorted(row["source_doc_ids"]) == sorted([a, b]) and row["proof_count"] == 2


def test_a_hostile_observation_is_bounded(vault: Vault) -> None:
    observe(vault, "huge", [f"fact {i} " + "x" * 2000 for i in range(1000)] + [""])
    [observation] = select_observations(vault._connection)
    assert len(observation.facts) == 20 and all(len(f) <= 500 for f in observation.facts)


def test_a_pattern_another_writer_stored_meanwhile_is_not_stored_twice(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two lanes (or hosts) compare the same observations with the same rows: the one that
    writes second sees the rows changed under it and leaves the pattern to its next pass."""
    observe(vault, "a1", [ALICE])
    observe(vault, "a2", [ALICE])
    compare = consolidation._candidate
    others: list[Phase2Report] = []

    def compared_then_the_other_lane_writes(*args: Any, **kwargs: Any) -> Any:
        found = compare(*args, **kwargs)
        if not others:
            others.append(Phase2Report())
            others[0] = run(vault)  # commits its row between this pass's read and write
        return found

    monkeypatch.setattr(consolidation, "_candidate", compared_then_the_other_lane_writes)
    report = run(vault)
    assert others[0].created == 1
    assert report.created == 0 and report.merged == 0
    [row] = rows(vault)
    assert row["proof_count"] == 2
    assert run(vault).selected == 0  # nothing left for the next pass


def test_a_row_another_lane_commits_between_the_reads_is_not_written_twice(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows a pass compares with and their ids are read in one snapshot: another lane
    committing its row between the two reads leaves this pass's write to the next pass."""
    observe(vault, "a1", [ALICE])
    observe(vault, "a2", [ALICE + "."])
    existing = consolidation._existing
    interleaved: list[bool] = []

    def then_the_other_lane(connection: Any, collection: str) -> Any:
        found = existing(connection, collection)
        if not interleaved:
            interleaved.append(True)
            with Vault.open(where(vault), config_dir=tmp_path / "other") as other:
                assert run(other).created == 1  # the other lane's pass, committed
        return found

    monkeypatch.setattr(consolidation, "_existing", then_the_other_lane)
    run(vault)
    assert interleaved and len(rows(vault)) == 1
