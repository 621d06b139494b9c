"""The folder watcher in-process, on a real vault and real file-system events: changes are
indexed per debounce window, new collections are followed, the WAL is checkpointed, and a
stop is honoured promptly."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.index.watcher import Watcher, WatchSettings
from tests.conftest import where, write

FAST = WatchSettings(debounce_ms=300, embed_interval=0.0, checkpoint_interval=3600, tick_ms=100)


def wait_for(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


class Running:
    """A watcher on its own thread (with its own vault connection), and its log."""

    def __init__(self, vault_file: Path | str, config_dir: Path, settings: WatchSettings) -> None:
        self.lines: list[str] = []
        self.stop = threading.Event()
        self.vault = Vault.open(vault_file, config_dir=config_dir)
        self.watcher = Watcher(self.vault, self.vault.config_file, settings, log=self.lines.append)
        self.thread = threading.Thread(target=self.watcher.run, args=(self.stop,), daemon=True)
        self.thread.start()
        assert wait_for(lambda: self.watcher.index_runs >= 1)  # the catch-up run

    def close(self) -> float:
        started = time.monotonic()
        self.stop.set()
        self.thread.join(10)
        assert not self.thread.is_alive()
        self.vault.close()
        return time.monotonic() - started


@pytest.fixture
def watched(vault: Vault, notes: Path, tmp_path: Path) -> Iterator[tuple[Vault, Running]]:
    write(notes, "first.md", "# First\n\nThe first note about herons.\n")
    vault.add_collection(notes, name="notes")
    running = Running(where(vault), tmp_path / "config", FAST)
    yield vault, running
    running.close()


def found(vault: Vault, query: str) -> set[str]:
    return {result.path for result in vault.search(query)}


def test_created_edited_renamed_and_deleted_files_are_indexed(
    watched: tuple[Vault, Running], notes: Path
) -> None:
    vault, running = watched
    write(notes, "new.md", "# New\n\nA note about kumquats.\n")
    assert wait_for(lambda: found(vault, "kumquats") == {"new.md"})
    write(notes, "new.md", "# New\n\nA note about persimmons now.\n")
    assert wait_for(lambda: found(vault, "persimmons") == {"new.md"})
    (notes / "new.md").rename(notes / "moved.md")
    assert wait_for(lambda: found(vault, "persimmons") == {"moved.md"})
    (notes / "moved.md").unlink()
    assert wait_for(lambda: found(vault, "persimmons") == set())
    assert wait_for(lambda: {r.path for r in vault.vsearch("herons", limit=5)} == {"first.md"})
    assert running.watcher.embed_runs >= 1


def test_a_burst_of_writes_is_indexed_once(watched: tuple[Vault, Running], notes: Path) -> None:
    vault, running = watched
    assert wait_for(lambda: running.watcher.embed_runs >= 1)
    before = running.watcher.index_runs
    for index in range(100):
        write(notes, f"burst/{index:04}.md", f"# Burst {index}\n\nOne of many quinces {index}.\n")
    assert wait_for(lambda: len(vault.search("quinces", limit=1000)) == 100, 10)
    time.sleep(0.6)  # two debounce windows of quiet: nothing else is indexed
    assert running.watcher.index_runs == before + 1
    assert [line for line in running.lines if "+100" in line]


def test_a_folder_moved_in_is_indexed(
    watched: tuple[Vault, Running], notes: Path, tmp_path: Path
) -> None:
    """A folder moved into a collection brings one event, for the folder, not its files."""
    vault, _ = watched
    outside = tmp_path / "elsewhere" / "archive"
    for index in range(3):
        write(outside, f"deep/{index}.md", f"# Old {index}\n\nMedlars from the archive {index}.\n")
    outside.rename(notes / "archive")
    assert wait_for(lambda: len(vault.search("medlars", limit=10)) == 3)


def test_files_the_pattern_does_not_index_are_ignored(
    watched: tuple[Vault, Running], notes: Path
) -> None:
    _, running = watched
    before = running.watcher.index_runs
    write(notes, "draft.txt", "not markdown")
    time.sleep(0.8)
    assert running.watcher.index_runs == before


def test_a_collection_added_while_watching_is_indexed_and_watched(
    watched: tuple[Vault, Running], tmp_path: Path
) -> None:
    vault, running = watched
    other = tmp_path / "other"
    write(other, "a.md", "# A\n\nApricots in the other collection.\n")
    vault.add_collection(other, name="other")
    assert wait_for(lambda: found(vault, "apricots") == {"a.md"})
    assert wait_for(lambda: "other" in running.watcher.watched())
    write(other, "b.md", "# B\n\nMore apricots.\n")
    assert wait_for(lambda: found(vault, "apricots") == {"a.md", "b.md"})
    assert any(line.startswith("new collections: other") for line in running.lines)


def test_owners_follow_the_pattern_and_count_deletions(vault: Vault, notes: Path) -> None:
    vault.add_collection(notes, name="notes")
    watcher = Watcher(vault, vault.config_file)
    watcher.load_collections()
    root = notes.resolve()
    assert watcher.owners([("added", str(root / "a" / "b.md"))]) == {"notes"}
    assert watcher.owners([("modified", str(root / "a.txt"))]) == set()
    assert watcher.owners([("deleted", str(root / "folder"))]) == {"notes"}
    assert watcher.owners([("added", "/elsewhere/x.md")]) == set()


def test_the_wal_is_checkpointed_and_a_stop_is_prompt(
    vault: Vault, notes: Path, tmp_path: Path
) -> None:
    write(notes, "a.md", "# A\n\nText.\n")
    vault.add_collection(notes, name="notes")
    running = Running(
        where(vault), tmp_path / "config", FAST._replace(checkpoint_interval=0.2, embed=False)
    )
    assert wait_for(lambda: running.watcher.checkpoints >= 1)
    assert any(line.startswith("wal checkpoint: ") for line in running.lines)
    assert running.watcher.embed_runs == 0
    assert running.close() < 2.0


def test_a_missing_folder_is_reported_not_watched(vault: Vault, notes: Path) -> None:
    vault.add_collection(notes, name="notes")
    notes.rmdir()
    lines: list[str] = []
    watcher = Watcher(vault, vault.config_file, log=lines.append)
    watcher.load_collections()
    assert watcher.watched() == {}
    assert lines == [f"collection notes: folder {notes} is missing; not watched"]


def test_folders_that_cannot_be_watched_are_indexed_on_a_timer(
    vault: Vault, notes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watch library refusing a folder (a subfolder it may not enter, no inotify watches
    left) stopped `watch` with an unexpected PermissionError."""
    import watchfiles

    import memtrove.index.watcher as watcher_module

    def refused(*args: object, **kwargs: object) -> Iterator[object]:
        raise PermissionError('Permission denied (os error 13) about ["/x/locked"]')
        yield  # a generator, as watchfiles.watch is

    monkeypatch.setattr(watchfiles, "watch", refused)
    monkeypatch.setattr(watcher_module, "RESCAN_SECONDS", 0.3)
    write(notes, "a.md", "# A\n\nThe note about herons.\n")
    vault.add_collection(notes, name="notes")
    running = Running(where(vault), tmp_path / "config", FAST)
    assert any(
        line.startswith("cannot watch the folders (Permission denied") for line in running.lines
    )
    assert found(vault, "herons") == {"a.md"}
    write(notes, "b.md", "# B\n\nA later note about egrets.\n")
    assert wait_for(lambda: found(vault, "egrets") == {"b.md"})  # the next rescan
    assert running.close() < 2.0
