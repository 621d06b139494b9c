"""A bulk entity pass counts co-occurrences in memory under a lease: one such run at a time;
another run meanwhile writes its own batch by batch, and both give the same counts."""

from __future__ import annotations

from pathlib import Path

from memtrove import Vault
from memtrove.db.connection import open_connection
from memtrove.graph.amem_entities import DEFERRAL_LEASE
from memtrove.lifecycle.leases import Lease
from tests.conftest import write

TOOLS = ["Kafka", "Redis", "PostgreSQL", "Grafana", "Prometheus", "Terraform", "Kubernetes"]
PEOPLE = ["Ada Lovelace", "Alan Turing", "Grace Hopper", "Edsger Dijkstra"]


def notes(folder: Path, count: int = 130) -> Path:
    for index in range(count):
        tools = ", ".join(TOOLS[(index + step) % len(TOOLS)] for step in range(3))
        person = PEOPLE[index % len(PEOPLE)]
        write(
            folder,
            f"n{index:03d}.md",
            f"# Incident {index}\n\n{person} moved the `queue_{index % 9}` service to {tools}.\n",
        )
    return folder


def counts(vault: Vault) -> list[tuple[object, ...]]:
    return [
        tuple(row)
        for row in vault._connection.execute(
            "SELECT entity_a, entity_b, count FROM entity_cooccurrences ORDER BY 1, 2"
        )
    ]


def enriched(tmp_path: Path, name: str, *, hold: bool) -> list[tuple[object, ...]]:
    folder = notes(tmp_path / name / "notes")
    with Vault.open(tmp_path / name / "v.sqlite", config_dir=tmp_path / name / "c") as vault:
        vault.add_collection(folder, name="notes")
        vault.update()
        other = open_connection(tmp_path / name / "v.sqlite")
        held = Lease.acquire(other, DEFERRAL_LEASE) if hold else None
        try:
            report = vault.enrichment.enrich(use_llm=False)
            assert report.documents == 130 and report.entities
            if held is not None:  # the run did not take the lease, and left it alone
                held.renew()
        finally:
            if held is not None:
                held.release()
            other.close()
        state = vault._connection.execute("SELECT COUNT(*) FROM vault_state").fetchone()[0]
        leases = vault._connection.execute(
            "SELECT COUNT(*) FROM worker_leases WHERE worker_name = ?", (DEFERRAL_LEASE,)
        ).fetchone()[0]
        assert state == 0 and leases == 0
        return counts(vault)


def test_a_run_without_the_lease_counts_what_a_run_with_it_counts(tmp_path: Path) -> None:
    deferred = enriched(tmp_path, "deferred", hold=False)
    batch_by_batch = enriched(tmp_path, "held", hold=True)
    assert deferred and deferred == batch_by_batch


def two_runs(tmp_path: Path, name: str, *, die: bool) -> list[tuple[object, ...]]:
    """130 notes enriched, then 130 more: a bulk run each. ``die``: the first run is
    left as a killed one leaves it (its mentions in, its pending mark, no counts)."""
    folder = notes(tmp_path / name / "notes")
    with Vault.open(tmp_path / name / "v.sqlite", config_dir=tmp_path / name / "c") as vault:
        vault.add_collection(folder, name="notes")
        vault.update()
        vault.enrichment.enrich(use_llm=False)
        connection = vault._connection
        if die:
            connection.execute("DELETE FROM entity_cooccurrences")
            connection.execute(
                "INSERT INTO vault_state (key, value, updated_at)"
                " VALUES ('entity_cooccurrences', 'pending', '2026-01-01T00:00:00Z')"
            )
        for index in range(130):
            write(
                folder,
                f"m{index:03d}.md",
                f"# More {index}\n\nAlan Turing and `queue_{index % 9}` on Kafka.\n",
            )
        vault.update()
        assert vault.enrichment.enrich(use_llm=False).documents == 130  # only the new ones
        assert connection.execute("SELECT COUNT(*) FROM vault_state").fetchone()[0] == 0
        return counts(vault)


def test_a_run_that_died_before_writing_its_counts_is_recounted(tmp_path: Path) -> None:
    assert two_runs(tmp_path, "died", die=True) == two_runs(tmp_path, "whole", die=False)


def test_a_small_run_also_recounts_what_an_interrupted_one_left(tmp_path: Path) -> None:
    expected = enriched(tmp_path, "whole", hold=False)
    folder = notes(tmp_path / "died" / "notes")
    with Vault.open(tmp_path / "died" / "v.sqlite", config_dir=tmp_path / "died" / "c") as vault:
        vault.add_collection(folder, name="notes")
        vault.update()
        vault.enrichment.enrich(use_llm=False)
        connection = vault._connection
        connection.execute("DELETE FROM entity_cooccurrences")
        connection.execute(
            "INSERT INTO vault_state (key, value, updated_at)"
            " VALUES ('entity_cooccurrences', 'pending', '2026-01-01T00:00:00Z')"
        )
        write(folder, "late.md", "# Late\n\nNothing named here.\n")
        vault.update()
        assert vault.enrichment.enrich(use_llm=False).documents == 1  # a small run
        assert connection.execute("SELECT COUNT(*) FROM vault_state").fetchone()[0] == 0
        assert counts(vault) == expected
