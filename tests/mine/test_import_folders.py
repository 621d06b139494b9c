"""An import never chooses which folders get read: an export file or a ClawMem vault names
folders, but only a folder the user maps (``--map NAME=DIR``) is registered, and even then
never the home folder, ``/``, a dot-folder or a folder above the vault's config without
``--allow-any-folder``.

The attack each case stands for: a crafted export names a folder of the victim's and lists
a document whose body is a stock file there (an unchanged ``.bashrc``, a README copied
from a template), so "the folder holds the export's files" proves nothing."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memtrove import Vault
from memtrove.cli import app
from memtrove.errors import CollectionError
from tests.conftest import write

PRIVATE = "zanzibarquux private note of the victim"
HISTORY = "mysql -u root -pWhisperingPines42 production"


@pytest.fixture
def exported(tmp_path: Path, example_copy: Path) -> Path:
    source = Vault.open(tmp_path / "source.sqlite", config_dir=tmp_path / "source-config")
    source.add_collection(example_copy, name="demo")
    source.update()
    source.close()
    return source.portable.export_to(tmp_path / "vault.jsonl").path and tmp_path / "vault.jsonl"


def _naming(exported: Path, folder: str, pattern: str = "**/*") -> Path:
    """The export, edited to name ``folder`` for its collection (and to take every file)."""
    lines = exported.read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    header["collections"][0].update(path=folder, pattern=pattern, redact=False)
    crafted = exported.with_name("crafted.jsonl")
    crafted.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    return crafted


def _victim(folder: Path, example_copy: Path) -> None:
    """``folder`` holding the export's documents as stock files, and private ones."""
    shutil.copytree(example_copy, folder, dirs_exist_ok=True)
    write(folder, "private.md", f"# Diary\n\n{PRIVATE}\n")
    write(folder, ".bash_history", HISTORY + "\n")


def _nothing_scanned(vault: Vault) -> None:
    assert vault.collections() == []
    report = vault.update()
    assert (report.added, report.updated, report.removed) == (0, 0, 0)
    assert not vault.search("zanzibarquux") and not vault.search("WhisperingPines42")
    assert vault.status().documents == 30  # the export's documents, searchable


@pytest.mark.parametrize("named", ["~", "home", "/", "..", "dot-folder", "victim-notes"])
def test_a_folder_the_export_names_is_never_registered(
    named: str,
    exported: Path,
    vault: Vault,
    example_copy: Path,
    tmp_path: Path,
    isolated_environment: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = isolated_environment
    folders = {
        "~": (home, "~"),
        "home": (home, str(home)),
        "/": (None, "/"),
        "..": (tmp_path / "work", ".."),
        "dot-folder": (home / ".ssh", str(home / ".ssh")),
        "victim-notes": (tmp_path / "victim", str(tmp_path / "victim")),
    }
    folder, written = folders[named]
    if folder is not None:
        _victim(folder, example_copy)
    (tmp_path / "work" / "inner").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "work" / "inner")
    report = vault.portable.import_from(_naming(exported, written))
    assert report.collections_added == [] and report.folders == []
    assert report.collections_unregistered == {"demo": written}
    _nothing_scanned(vault)


def test_a_clawmem_config_naming_the_home_folder_registers_nothing(
    vault: Vault, tmp_path: Path, isolated_environment: Path, example_copy: Path
) -> None:
    source = Path(__file__).resolve().parents[3] / "shared" / "bench" / "clawmem-vault"
    if not (source / "index.sqlite").is_file():
        pytest.skip("the ClawMem vault is not here")
    _victim(isolated_environment, example_copy)
    config = tmp_path / "index.yml"
    config.write_text('collections:\n  goprop:\n    path: "~"\n    pattern: "**/*"\n')
    report = vault.portable.import_clawmem(source / "index.sqlite", config=config)
    assert report.collections_added == []
    assert report.collections_unregistered["goprop"] == "~"
    assert vault.collections() == []
    assert vault.update().added == 0 and not vault.search("zanzibarquux")


@pytest.mark.parametrize(
    "kind", ["home", "root", "dot-folder", "inside-dot", "above-config", "link-to-home"]
)
def test_a_mapping_to_a_folder_of_secrets_is_refused_and_nothing_is_written(
    kind: str, exported: Path, vault: Vault, tmp_path: Path, isolated_environment: Path
) -> None:
    home = isolated_environment
    (home / ".notes" / "inner").mkdir(parents=True)
    (tmp_path / "notes-link").symlink_to(home)
    target = {
        "home": home,
        "root": Path("/"),
        "dot-folder": home / ".notes",
        "inside-dot": home / ".notes" / "inner",
        "above-config": tmp_path,  # the vault fixture's config is tmp_path/config
        "link-to-home": tmp_path / "notes-link",
    }[kind]
    reason = {
        "home": "home folder",
        "root": "root",
        "dot-folder": "dot-folder",
        "inside-dot": "dot-folder",
        "above-config": "config.yaml",
        "link-to-home": "home folder",
    }[kind]
    with pytest.raises(CollectionError, match=reason) as raised:
        vault.portable.import_from(exported, folders={"demo": target})
    assert "--allow-any-folder" in str(raised.value) and "\n" not in str(raised.value)
    assert vault.status().documents == 0 and vault.collections() == []


def test_any_folder_is_taken_when_the_user_says_so(
    exported: Path, vault: Vault, isolated_environment: Path, example_copy: Path
) -> None:
    folder = isolated_environment / ".notes"
    shutil.copytree(example_copy, folder)
    report = vault.portable.import_from(exported, folders={"demo": folder}, allow_any_folder=True)
    assert report.collections_added == ["demo"]
    assert vault.collections()[0].path == folder.resolve()


def test_a_mapping_must_name_a_collection_of_the_file_and_a_folder(
    exported: Path, vault: Vault, tmp_path: Path, example_copy: Path
) -> None:
    with pytest.raises(CollectionError, match=r"no collection 'notes'.*demo"):
        vault.portable.import_from(exported, folders={"notes": example_copy})
    with pytest.raises(CollectionError, match="no such folder"):
        vault.portable.import_from(exported, folders={"demo": tmp_path / "nowhere"})
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(CollectionError, match="no such folder"):
        vault.portable.import_from(exported, folders={"demo": tmp_path / "a-file"})
    with pytest.raises(CollectionError, match="null"):
        vault.portable.import_from(exported, folders={"demo": "notes\x00/etc"})
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(CollectionError):
        vault.portable.import_from(exported, folders={"demo": tmp_path / "loop"})
    assert vault.status().documents == 0


def test_a_dry_run_lists_what_each_mapped_folder_would_index(
    exported: Path, vault: Vault, example_copy: Path
) -> None:
    write(example_copy, "extra/new-note.md", "# A new note\n")
    report = vault.portable.import_from(exported, folders={"demo": example_copy}, dry_run=True)
    assert report.collections_added == ["demo"]
    (plan,) = report.folders
    assert plan["folder"] == str(example_copy.resolve()) and plan["files"] == 31
    assert "would register: demo" in report.text() and "31 file(s) to index" in report.text()
    assert vault.collections() == [] and vault.status().documents == 0


def test_a_mapping_to_a_folder_without_the_documents_is_reported(
    exported: Path, vault: Vault, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere, "unrelated.md", "# Not one of the demo notes\n")
    report = vault.portable.import_from(exported, folders={"demo": elsewhere})
    (plan,) = report.folders
    assert (plan["sampled"], plan["matching"]) == (5, 0)
    assert "none of its first 5 document(s) is a file there" in report.text()


def test_the_cli_maps_folders_and_refuses_bad_maps(
    exported: Path, tmp_path: Path, example_copy: Path, isolated_environment: Path
) -> None:
    runner = CliRunner()
    env = {
        "MEMTROVE_VAULT": str(tmp_path / "cli.sqlite"),
        "MEMTROVE_CONFIG_DIR": str(tmp_path / "cli-config"),
    }
    for bad in ("demo", "=x", "demo=", "demo=a --map demo=b"):
        result = runner.invoke(app, ["import", str(exported), *f"--map {bad}".split()], env=env)
        assert result.exit_code == 2, (bad, result.output)
    refused = runner.invoke(app, ["import", str(exported), "--map", "demo=~"], env=env)
    assert refused.exit_code == 1 and "home folder" in refused.output
    assert refused.output.count("\n") == 1
    result = runner.invoke(
        app, ["import", str(exported), "--map", f"demo={example_copy}", "--json"], env=env
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["collections_added"] == ["demo"] and data["folders"][0]["files"] == 30
    assert os.path.samefile(data["folders"][0]["folder"], example_copy)
