"""Secrets a vault already stores: ``doctor`` finds them, ``stored_secrets(apply=True)`` (the
``memtrove redact --apply`` command) rewrites them and wipes them from the file."""

from __future__ import annotations

from pathlib import Path

import yaml

from memtrove.vault import Vault

KEY = "ghp_R2d2C3poBb8Ewok5Han9Solo7Leia4LukeX"
PASSWORD = "hunter2-lanternfish-prod"
NOTE = f"# Deploy notes\n\nThe release bot pushes with {KEY}.\n\nDB_PASSWORD={PASSWORD}\n"


def _legacy_vault(tmp_path: Path) -> Vault:
    """A vault that stored secrets: its collection was verbatim, now it is not; and side
    tables written before redaction existed."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "deploy.md").write_text(NOTE, encoding="utf-8")
    (notes / "lunch.md").write_text("# Lunch\n\nTacos on Friday.\n", encoding="utf-8")
    vault = Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config")
    vault.add_collection(notes, name="ops", redact=False)
    vault.update()
    vault.embed()
    config = tmp_path / "config" / "config.yaml"
    data = yaml.safe_load(config.read_text())
    data["collections"]["ops"].pop("redact")
    config.write_text(yaml.safe_dump(data))
    vault._connection.execute(
        "INSERT INTO hook_dedupe (hook_name, prompt_hash, prompt_preview, last_seen_at) "
        "VALUES ('context-surfacing', 'h1', ?, '2026-01-01T00:00:00Z')",
        (f"push with {KEY} please",),
    )
    vault._connection.execute(
        "INSERT INTO llm_cache (hash, result, created_at) VALUES ('c1', ?, '2026-01-01')",
        (f"the key is {KEY}",),
    )
    # Graph memory written before its writers redacted (A-MEM notes, evolution, links,
    # the entity name index).
    doc_id = vault._connection.execute("SELECT id FROM documents LIMIT 1").fetchone()[0]
    sql = vault._connection.execute
    sql("UPDATE documents SET amem_context = ? WHERE id = ?", (f"pushes with {KEY}", doc_id))
    sql(
        "INSERT INTO memory_evolution (memory_id, version, new_context, reasoning, created_at) "
        "VALUES (?, 1, ?, 'newer note', '2026-01-01')",
        (doc_id, f"uses {KEY}"),
    )
    sql(
        "INSERT INTO document_links (source_id, target, kind, link_text) VALUES (?, 'x.md', "
        "'markdown', ?)",
        (doc_id, f"key {KEY}"),
    )
    sql("INSERT INTO entities_fts (entity_id, name, entity_type) VALUES ('e', ?, 'tool')", (KEY,))
    return vault


def test_stored_secrets_are_found_then_rewritten_and_wiped(tmp_path: Path) -> None:
    with _legacy_vault(tmp_path) as vault:
        assert KEY in vault.get("ops/deploy.md").body
        report = vault.stored_secrets()
        assert report.documents == 1 and report.refs == ["ops/deploy.md"]
        assert report.kinds == {"github_token": 7, "password": 1}
        assert report.rows == {
            "hook_dedupe": 1,
            "llm_cache": 1,
            "documents": 1,
            "memory_evolution": 1,
            "document_links": 1,
            "entities_fts": 1,
        }
        check = next(c for c in vault.doctor(timeout=0.5).checks if c.name == "secrets")
        assert check.status == "warn" and "memtrove redact --apply" in check.fix
        assert KEY not in check.detail and PASSWORD not in check.detail

        applied = vault.stored_secrets(apply=True)
        assert applied.applied and applied.total == report.total
        body = vault.get("ops/deploy.md").body
        assert KEY not in body and "[REDACTED:github_token]" in body
        assert "DB_PASSWORD=[REDACTED:password]" in body
        assert [r.path for r in vault.search("release bot pushes")] == ["deploy.md"]
        assert list(vault.search("R2d2C3poBb8Ewok5Han9Solo7Leia4LukeX")) == []
        assert vault.stored_secrets().total == 0
        check = next(c for c in vault.doctor(timeout=0.5).checks if c.name == "secrets")
        assert check.status == "ok"
        assert vault.update().updated == 0  # the unchanged file is not read again
        assert vault.embed().documents >= 1  # its fragments' vectors are made again
        assert [r.path for r in vault.vsearch("release bot pushes")][:1] == ["deploy.md"]
    for name in ("vault.sqlite", "vault.sqlite-wal"):
        path = tmp_path / name
        if path.exists():
            data = path.read_bytes()
            assert KEY.encode() not in data and PASSWORD.encode() not in data, name


def test_verbatim_collections_are_kept(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "deploy.md").write_text(NOTE, encoding="utf-8")
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as vault:
        vault.add_collection(notes, name="ops", redact=False)
        vault.update()
        assert vault.stored_secrets().total == 0
        assert vault.stored_secrets(apply=True).total == 0
        assert KEY in vault.get("ops/deploy.md").body


def test_old_bodies_no_document_points_at_are_deleted(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "deploy.md").write_text(NOTE, encoding="utf-8")
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as vault:
        vault.add_collection(notes, name="ops", redact=False)
        vault.update()
        (notes / "deploy.md").write_text("# Deploy notes\n\nRotated.\n", encoding="utf-8")
        vault.update()
        config = tmp_path / "config" / "config.yaml"
        config.write_text(config.read_text().replace("redact: false", "redact: true"))
        report = vault.stored_secrets()
        assert report.documents == 0 and report.rows == {"content (old bodies)": 1}
        vault.stored_secrets(apply=True)
        assert vault.stored_secrets().total == 0
        assert vault.get("ops/deploy.md").body.endswith("Rotated.\n")


def test_patterns_of_ones_own_from_config_yaml(tmp_path: Path) -> None:
    import pytest

    from memtrove.errors import ConfigError

    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as vault:
        assert vault.redact("ticket TCK-0123ABCD") == "ticket TCK-0123ABCD"
        config = tmp_path / "config" / "config.yaml"
        config.parent.mkdir(exist_ok=True)
        config.write_text('redaction:\n  patterns:\n    ticket_key: "TCK-[0-9A-F]{8}"\n')
        assert vault.redact("ticket TCK-0123ABCD") == "ticket [REDACTED:ticket_key]"
        config.write_text('redaction:\n  patterns: ["("]\n')
        with pytest.raises(ConfigError, match="redaction"):
            vault.redact("x")
