"""Edits and deletions leave BM25 as a fresh index would score it (FTS5 totals recounted)."""

from __future__ import annotations

from pathlib import Path

from memtrove.vault import Vault
from tests.conftest import write

NOTES = {
    "a.md": "# Alpha\n\nThe billing worker retries failed charges twice.\n",
    "b.md": "# Beta\n\nThe billing dashboard shows refunds per day.\n",
    "c.md": "# Gamma\n\nThumbnails are cached for a week.\n",
}


def _scores(vault: Vault) -> list[tuple[str, float]]:
    return [(r.path, round(r.score, 9)) for r in vault.search("billing refunds", limit=10)]


def test_scores_after_many_edits_and_a_deletion_equal_a_fresh_index(tmp_path: Path) -> None:
    used, fresh = tmp_path / "used", tmp_path / "fresh"
    for name, text in NOTES.items():
        write(used, name, text)
    with Vault.open(tmp_path / "used.sqlite", config_dir=tmp_path / "c1") as vault:
        vault.add_collection(used, name="notes")
        vault.update()
        for round_ in range(5):  # a long body written and replaced, again and again
            write(used, "c.md", "# Gamma\n\n" + "thumbnail cache sizes " * (200 + round_))
            vault.update()
        write(used, "d.md", "# Delta\n\n" + "temporary scratch words " * 300)
        vault.update()
        (used / "d.md").unlink()
        write(used, "c.md", NOTES["c.md"])
        vault.update()
        after_use = _scores(vault)
    for name, text in NOTES.items():
        write(fresh, name, text)
    with Vault.open(tmp_path / "fresh.sqlite", config_dir=tmp_path / "c2") as vault:
        vault.add_collection(fresh, name="notes")
        vault.update()
        assert after_use == _scores(vault) and after_use


def test_a_rewritten_agent_memory_is_recounted_by_the_next_update(tmp_path: Path) -> None:
    from memtrove.db.sqlite.fts_totals import fts_totals_drifted

    notes = tmp_path / "notes"
    for name, text in NOTES.items():
        write(notes, name, text)
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "c") as vault:
        vault.add_collection(notes, name="notes")
        vault.update()
        connection = vault._connection
        assert not fts_totals_drifted(connection, "documents_fts")
        vault.memory.remember("billing-retries", "Billing retries twice, then gives up.")
        vault.memory.remember("billing-retries", "Billing retries three times now.", overwrite=True)
        assert fts_totals_drifted(connection, "documents_fts")  # the rewrite left it inflated
        vault.update()  # nothing changed on disk, but the totals are settled
        assert not fts_totals_drifted(connection, "documents_fts")
