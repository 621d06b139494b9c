"""``memtrove watch`` and Beads: a change under a collection's ``.beads/`` folder runs a Beads
sync of the project holding it (the fake ``bd`` of tests/capture/beads_fake.py first on
PATH), debounced like other changes; the files bd's own reads touch set off nothing."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrove import Vault
from tests.capture.beads_fake import FakeBd
from tests.conftest import write
from tests.e2e.test_watch_processes import WatchProcess, wait_for


@pytest.fixture
def running(tmp_path: Path, notes: Path) -> Iterator[tuple[WatchProcess, Vault, FakeBd, Path]]:
    fake = FakeBd(tmp_path / "fakebin")
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MEMTROVE_", "XDG_"))}
    env = {
        **clean,
        "PATH": f"{fake.folder}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "MEMTROVE_VAULT": str(tmp_path / "vault.sqlite"),
        "MEMTROVE_CONFIG_DIR": str(tmp_path / "config"),
    }
    project = notes / "shop"
    write(project, "README.md", "# Shop\n\nThe shop project.\n")
    (project / ".beads").mkdir()
    with Vault.open(env["MEMTROVE_VAULT"], config_dir=env["MEMTROVE_CONFIG_DIR"]) as vault:
        vault.add_collection(notes, name="notes")
        watcher = WatchProcess(env, "--debounce-ms", "300", "--no-embed")
        assert wait_for(lambda: bool(watcher.indexed()), 15), watcher.lines
        yield watcher, vault, fake, project
        assert watcher.stop() == 0


def synced(watcher: WatchProcess) -> list[str]:
    return [line for line in watcher.lines if line.startswith("memtrove watch: beads ")]


def test_a_change_under_beads_syncs_the_project_once_per_batch(
    running: tuple[WatchProcess, Vault, FakeBd, Path],
) -> None:
    watcher, vault, fake, project = running
    assert fake.calls() == []  # nothing under .beads/ changed yet
    write(project, ".beads/issues.jsonl", '{"id": "bd-a1"}\n')
    assert wait_for(lambda: len(synced(watcher)) == 1, 10) is not None, watcher.lines
    assert synced(watcher)[0] == (
        f"memtrove watch: beads {project}: 5 issues (5 new, 0 updated, 0 unchanged), "
        "4 dependencies, 3 edges"
    )
    assert [call["cwd"] for call in fake.calls()] == [str(project)]
    assert [hit.title for hit in vault.search("pelican table")] == [
        "bd-b2: Store token families in Postgres"
    ]

    # bd's own side files (a read's WAL, a lock, its daemon's log) are not changes.
    for name in ("beads.db-wal", "beads.db-shm", "bd.lock", "daemon.log"):
        write(project, f".beads/{name}", "x")
    time.sleep(1.5)  # several debounce windows
    assert len(fake.calls()) == 1

    # A burst of writes is one sync.
    for index in range(5):
        write(project, ".beads/issues.jsonl", f'{{"id": "bd-a{index}"}}\n')
    assert wait_for(lambda: len(synced(watcher)) == 2, 10) is not None, watcher.lines
    time.sleep(1.0)
    assert len(fake.calls()) == 2
    assert synced(watcher)[1].endswith("(0 new, 0 updated, 5 unchanged), 4 dependencies, 3 edges")


def test_a_failing_bd_is_logged_and_watching_goes_on(
    running: tuple[WatchProcess, Vault, FakeBd, Path],
) -> None:
    watcher, vault, fake, project = running
    fake.mode("fail")
    write(project, ".beads/issues.jsonl", "{}\n")
    expected = (
        f"memtrove watch: cannot sync Beads issues of {project}: bd list failed (exit 1): "
        "Error: no beads database found (run 'bd init' first)"
    )
    assert wait_for(lambda: expected in watcher.lines, 10) is not None, watcher.lines
    write(project, "notes.md", "# Notes\n\nAbout ospreys.\n")
    assert wait_for(lambda: bool(vault.search("ospreys")), 10) is not None, watcher.lines
