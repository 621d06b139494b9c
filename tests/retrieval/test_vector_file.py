"""The mapped vector file: written by a process's scan, mapped by the next process, the
same answers as without it, and never trusted once the vault's vectors changed, the file
was damaged or the cache folder cannot be written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.retrieval import vector_file
from memtrove.retrieval import vector_matrix as matrix_module
from memtrove.retrieval.vector_file import map_vectors

QUERIES = ("how do we rotate refresh tokens", "sqlite write-ahead logging", "deploy on friday")


@pytest.fixture(autouse=True)
def small_vaults_keep_a_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(matrix_module, "MIN_VECTORS", 1)


def _vault(tmp_path: Path) -> Vault:
    return Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "config")


def _answers(vault: Vault) -> list[list[tuple[str, float]]]:
    return [[(r.path, round(r.score, 6)) for r in vault.vsearch(q, limit=8)] for q in QUERIES]


def _files(home: Path) -> list[Path]:
    folder = home / ".cache" / "memtrove" / "vectors"
    return sorted(folder.glob("*.f32")) if folder.exists() else []


@pytest.fixture
def embedded(example_copy: Path, tmp_path: Path) -> Path:
    with _vault(tmp_path) as vault:
        vault.add_collection(example_copy, name="example")
        vault.update()
        vault.embed()
    return tmp_path


def test_a_scan_writes_the_file_and_the_next_process_maps_it(
    embedded: Path, isolated_environment: Path
) -> None:
    with _vault(embedded) as vault:
        assert _files(isolated_environment) == []
        scanned = _answers(vault)  # the first search scans (and writes), the rest load
    [written] = _files(isolated_environment)
    with _vault(embedded) as vault:
        mapped = _answers(vault)
        assert vault._retriever.matrix.size > 100  # the file, mapped at the first search
    assert mapped == scanned
    with _vault(embedded) as vault:
        stamp = matrix_module.vector_stamp(vault._connection)
        count = int(vault._connection.execute("SELECT COUNT(*) FROM content_vectors").fetchone()[0])
    found = map_vectors(str(written), stamp)
    assert found is not None and len(found[0]) == count
    assert map_vectors(str(written), stamp + 1) is None  # another stamp


def test_changed_vectors_make_the_file_stale(
    embedded: Path, example_copy: Path, isolated_environment: Path
) -> None:
    with _vault(embedded) as vault:
        _answers(vault)
        before = matrix_module.vector_stamp(vault._connection)
        (example_copy / "new-note.md").write_text(
            "# Token rotation\n\nRefresh tokens rotate every hour; the old one is revoked.\n",
            encoding="utf-8",
        )
        vault.update()
        vault.embed()
        after = matrix_module.vector_stamp(vault._connection)
    assert after != before
    with _vault(embedded) as vault:
        fresh = _answers(vault)
        assert any(path.endswith("new-note.md") for path, _ in fresh[0])
    with _vault(embedded) as vault:  # the scan above wrote the file again, for `after`
        assert _answers(vault) == fresh
    [written] = _files(isolated_environment)
    with _vault(embedded) as vault:
        count = int(vault._connection.execute("SELECT COUNT(*) FROM content_vectors").fetchone()[0])
    found = map_vectors(str(written), after)
    assert found is not None and len(found[0]) == count


@pytest.mark.parametrize("damage", ["truncated", "magic", "empty"])
def test_a_damaged_file_is_ignored(embedded: Path, isolated_environment: Path, damage: str) -> None:
    with _vault(embedded) as vault:
        expected = _answers(vault)
    [written] = _files(isolated_environment)
    data = written.read_bytes()
    if damage == "truncated":
        written.write_bytes(data[: len(data) // 2])
    elif damage == "magic":
        written.write_bytes(b"XXXXXXXX" + data[8:])
    else:
        written.write_bytes(b"")
    with _vault(embedded) as vault:
        assert _answers(vault) == expected


def test_an_unwritable_cache_folder_only_costs_the_file(
    embedded: Path, isolated_environment: Path
) -> None:
    with _vault(embedded) as vault:
        expected = _answers(vault)
    for path in _files(isolated_environment):
        path.unlink()
    folder = isolated_environment / ".cache" / "memtrove" / "vectors"
    folder.rmdir()
    folder.write_text("a file where the folder should be", encoding="utf-8")
    with _vault(embedded) as vault:
        assert _answers(vault) == expected
    assert folder.is_file()
    assert not any(name.endswith(".tmp") for name in os.listdir(folder.parent))


def test_the_file_is_named_by_the_vault_path(tmp_path: Path) -> None:
    first = vector_file.vector_file(str(tmp_path), str(tmp_path / "a.sqlite"))
    assert first == vector_file.vector_file(str(tmp_path), str(tmp_path / "x" / ".." / "a.sqlite"))
    assert first != vector_file.vector_file(str(tmp_path), str(tmp_path / "b.sqlite"))
    assert first.startswith(str(tmp_path / "vectors"))
