"""Every ``import`` is recorded in ``import_runs``: an export file or a ClawMem vault, done,
failed (with its error) or a dry run; ``import_status``, ``/mine/runs`` and ``doctor`` show
them, and an export never carries them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.db.connection import DatabaseError
from memtrove.errors import PortableFormatError
from memtrove.mcp.mine_server import import_status

SOURCE = Path(__file__).resolve().parents[3] / "shared" / "bench" / "clawmem-vault"


@pytest.fixture
def exported(tmp_path: Path, example_copy: Path) -> Path:
    with Vault.open(tmp_path / "source.sqlite", config_dir=tmp_path / "source-config") as source:
        source.add_collection(example_copy, name="demo")
        source.update()
        source.memory.remember("deploy rule", "Deploy on Wednesdays.", store="global")
        source.portable.export_to(tmp_path / "vault.jsonl")
    return tmp_path / "vault.jsonl"


def last_import(vault: Vault) -> dict[str, object]:
    (check,) = [c for c in vault.doctor(timeout=0.5).checks if c.name == "last import"]
    return check.to_dict()


def test_a_dry_run_a_refused_file_and_an_import_are_each_recorded(
    exported: Path, vault: Vault
) -> None:
    assert vault.mining.import_runs() == []
    vault.portable.import_from(exported, dry_run=True)
    cut = exported.with_name("cut.jsonl")
    cut.write_bytes(exported.read_bytes()[:200])
    with pytest.raises(PortableFormatError):
        vault.portable.import_from(cut)
    assert last_import(vault)["status"] == "warn"
    report = vault.portable.import_from(exported)
    dry, failed, done = sorted(vault.mining.import_runs(), key=lambda run: run.id)
    assert (dry.kind, dry.status, dry.dry_run) == ("export", "done", True)
    assert (dry.records, dry.added) == (done.records, done.added)  # what it would have added
    assert (failed.status, failed.source) == ("failed", str(cut.resolve()))
    assert failed.error and "line" in failed.error
    assert (done.status, done.dry_run) == ("done", False)
    assert (done.records, done.added) == (
        sum(report.records.values()),
        sum(report.added.values()),
    )
    assert [run.id for run in vault.mining.import_runs()] == [done.id, failed.id, dry.id]
    assert last_import(vault)["status"] == "ok"


def test_import_status_and_the_export_of_an_importing_vault(
    exported: Path, vault: Vault, tmp_path: Path
) -> None:
    vault.portable.import_from(exported)
    text, data = import_status(vault, 10, None)
    assert "imports:" in text and data["imports"][0]["kind"] == "export"
    assert data["imports"][0]["status"] == "done"
    assert import_status(vault, 10, "chats")[1]["imports"] == []  # a collection's runs only
    again = vault.portable.export_to(tmp_path / "again.jsonl")
    types = {json.loads(line).get("type") for line in Path(again.path).read_text().splitlines()}
    assert "import_runs" not in types and "vault_state" not in types
    with Vault.open(tmp_path / "third.sqlite", config_dir=tmp_path / "third") as third:
        third.portable.import_from(again.path)  # the history did not travel: the vault was empty
        assert [run.kind for run in third.mining.import_runs()] == ["export"]


@pytest.mark.skipif(not (SOURCE / "index.sqlite").is_file(), reason="no ClawMem vault here")
def test_a_clawmem_import_is_recorded(vault: Vault) -> None:
    report = vault.portable.import_clawmem(SOURCE)
    (run,) = vault.mining.import_runs()
    assert (run.kind, run.status, run.source) == ("clawmem", "done", str(SOURCE.resolve()))
    assert report.documents["total"] == 38
    assert run.records == run.added == 38 + sum(report.records.values())  # all new
    vault.portable.import_clawmem(SOURCE)  # a second run adds nothing
    assert (vault.mining.import_runs()[0].records, vault.mining.import_runs()[0].added) == (38, 0)


def test_a_damaged_row_is_shown_not_a_crash(exported: Path, vault: Vault) -> None:
    vault.portable.import_from(exported)
    (before,) = vault.mining.import_runs()
    damage = "UPDATE import_runs SET records = 'lots', added = x'00ff'"
    if vault._connection.dialect == "sqlite":  # its loose typing stores the damage
        vault._connection.execute(damage)
        shown = (0, 0)
    else:  # typed columns refuse it: the row stays as it was
        with pytest.raises(DatabaseError, match="bigint"):
            vault._connection.execute(damage)
        shown = (before.records, before.added)
    (run,) = vault.mining.import_runs()
    assert (run.records, run.added, run.status) == (*shown, "done")
    assert last_import(vault)["status"] == "ok"
