"""``memtrove curate``: orphaned collections, sweep and duplicate candidates and the BM25
sanity probe, in the printed report and curator-report.json, on both engines."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner, Result

from memtrove import Vault
from memtrove.cli import app
from tests.conftest import where, write

NOTES = {
    "adr/0001-queue.md": "# Architecture decision: one queue\n\nWe chose a single queue.\n",
    "ops/deploy.md": "# Friday deploy freeze\n\nBlue-green deploys on Fridays are banned.\n",
    "ops/deploy-copy.md": (
        "# Friday deploy freeze\n\nBlue-green deploys on Fridays are banned, always.\n"
    ),
    "pets/ferret.md": "# Ferret\n\nThe ferret sleeps in the piano.\n",
    "music/piano.md": "# Piano\n\nThe piano needs tuning.\n",
    "travel/lisbon.md": "# Lisbon\n\nTrams and tiles.\n",
}


def curate(vault: Vault, *args: str) -> Result:
    env = {"MEMTROVE_CONFIG_DIR": str(vault.config_file.parent)}
    result = CliRunner().invoke(app, ["--vault", str(where(vault)), "curate", *args], env=env)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result


def test_findings_in_the_report_and_the_file(
    vault: Vault, tmp_path: Path, notes: Path, isolated_environment: Path
) -> None:
    for relative, text in NOTES.items():
        write(notes, relative, text)
    old = tmp_path / "old"
    write(old, "a.md", "# Old\n\nAn old note.\n")
    gone = tmp_path / "gone"
    write(gone, "b.md", "# Gone\n\nA note whose folder goes.\n")
    vault.add_collection(notes, name="notes")
    vault.add_collection(old, name="old")
    vault.add_collection(gone, name="gone")
    vault.update()
    vault.curation.set_confidence("notes/ops/deploy-copy.md", 0.2)
    # unused for a year (the policy archives after 90 days)
    stamp = "2020-01-01T00:00:00Z"
    vault.database.connection.execute(
        "UPDATE documents SET created_at = ?, modified_at = ? WHERE path = ?",
        (stamp, stamp, "travel/lisbon.md"),
    )
    # config.yaml edited by hand: "old" left out, its documents still searchable
    config = yaml.safe_load(vault.config_file.read_text(encoding="utf-8"))
    del config["collections"]["old"]
    vault.config_file.write_text(yaml.safe_dump(config), encoding="utf-8")
    for path in gone.iterdir():
        path.unlink()
    gone.rmdir()

    data = json.loads(curate(vault, "--json").stdout)
    assert data["orphaned_collections"] == [
        {"name": "old", "documents": 1, "reason": "not configured"},
        {"name": "gone", "documents": 1, "reason": "folder missing", "path": str(gone)},
    ]
    assert data["sweep_candidates"]["count"] == 1
    assert data["sweep_candidates"]["documents"][0].startswith("notes/travel/lisbon.md (unused ")
    assert data["duplicate_candidates"]["count"] == 1
    assert data["duplicate_candidates"]["pairs"][0]["duplicate"] == "notes/ops/deploy-copy.md"
    probe = data["bm25_probe"]
    assert probe["verdict"] == "ok" and probe["top"] == "notes/adr/0001-queue.md"
    assert probe["top_score"] > 0.3
    actions = "\n".join(data["actions"])
    assert "collection old is not in config.yaml but keeps 1 searchable documents" in actions
    assert "`memtrove collection remove gone`" in actions
    assert "1 documents are unused past the lifecycle policy" in actions
    assert "`memtrove consolidate --dry-run`" in actions
    saved = json.loads(Path(data["path"]).read_text(encoding="utf-8"))
    assert saved["orphaned_collections"] == data["orphaned_collections"]

    text = curate(vault).stdout
    assert "orphaned collections: old (1 docs, not configured), gone (1 docs, folder missing)" in (
        text
    )
    assert "sweep candidates: 1\n  notes/travel/lisbon.md (unused " in text
    assert "  notes/ops/deploy-copy.md  duplicates  notes/ops/deploy.md" in text
    assert "bm25 probe 'architecture decision': ok, top " in text


def test_the_probe_flags_degenerate_keyword_scores(vault: Vault, notes: Path) -> None:
    """Every document holds both words: BM25's IDF is clamped to ~0 and so is every score."""
    for name in ("a", "b", "c"):
        write(notes, f"{name}.md", f"# Note {name}\n\nAn architecture decision about {name}.\n")
    vault.add_collection(notes, name="notes")
    vault.update()
    data = json.loads(curate(vault, "--json").stdout)
    assert data["bm25_probe"]["verdict"] == "weak" and data["bm25_probe"]["top_score"] < 0.3
    assert any("keyword scores look degenerate" in action for action in data["actions"])
    assert data["orphaned_collections"] == [] and data["sweep_candidates"]["count"] == 0


def test_curate_without_a_vault_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["--vault", str(tmp_path / "none.sqlite"), "curate"])
    assert result.exit_code == 1 and result.stderr.startswith("memtrove: error: no vault at ")
    assert result.stderr.count("\n") == 1 and not (tmp_path / "none.sqlite").exists()
