"""``lifecycle search`` scores: a term most archived documents share used to score ~1e-6
(BM25's IDF over the small archive clamped to almost zero), printed as 0.00. The scores now
carry the vault-wide IDF, on both engines, and still rank the better match first."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from typer.testing import CliRunner

from memtrove import Vault
from memtrove.cli import app
from tests.conftest import where, write

NOW = datetime(2036, 1, 1, tzinfo=UTC)  # ten years on: every note is long unused
NOTES = {
    "cache.md": "# Cache eviction\n\nThe zephyrine cache evicts entries after an hour.\n",
    "queue.md": "# Queue retries\n\nThe zephyrine queue retries, then parks; zephyrine again.\n",
    "journal.md": "# Journal\n\nA zephyrine journal entry about the broker.\n",
}


def archived_vault(vault: Vault, notes: Path) -> Vault:
    for relative, text in NOTES.items():
        write(notes, relative, text)
    write(notes, "kept.md", "---\ntype: decision\n---\n# Decision\n\nWe keep one broker.\n")
    vault.add_collection(notes, name="notes")
    vault.update()
    vault._clock = lambda: NOW
    report = vault.lifecycle.sweep(apply=True)
    assert report.archived == 3  # the decision is durable: kept
    return vault


def test_a_term_every_archived_document_holds_scores(vault: Vault, notes: Path) -> None:
    archived_vault(vault, notes)
    found = vault.lifecycle.search("zephyrine")
    assert {item.path for item in found} == set(NOTES)
    assert all(0.1 < item.score < 1 for item in found), found
    # the note that says it twice ranks first (the others differ only by length)
    assert found[0].path == "queue.md" and found[0].score > found[1].score >= found[2].score
    # a rarer term scores higher than the shared one
    [cache] = vault.lifecycle.search("eviction")
    assert cache.path == "cache.md" and cache.score > found[0].score
    # two terms add up
    [both] = vault.lifecycle.search("zephyrine eviction")[:1]
    assert both.path == "cache.md" and both.score > cache.score


def test_the_cli_prints_the_scores(vault: Vault, notes: Path) -> None:
    archived_vault(vault, notes)
    env = {"MEMTROVE_CONFIG_DIR": str(vault.config_file.parent)}
    arguments = ["--vault", str(where(vault)), "lifecycle", "search", "zephyrine"]
    result = CliRunner().invoke(app, arguments, env=env)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 3 and not any(line.startswith("0.00") for line in lines)
    assert lines[0].split()[2] == "notes/queue.md"
    data = json.loads(CliRunner().invoke(app, [*arguments, "--json"], env=env).stdout)
    assert data["count"] == 3 and all(row["score"] > 0.1 for row in data["results"])
