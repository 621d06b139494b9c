"""``memtrove watch`` as users run it: a real watcher process with its default 2 s debounce,
files created, edited, renamed and deleted under it, a burst of writes, the lanes it hosts,
and a clean stop on SIGTERM."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memtrove import Vault
from tests.conftest import write

PICKUP_SECONDS = 5.0  # the acceptance bound: a change is searchable this soon


class WatchProcess:
    """``memtrove watch`` in a subprocess, its stderr lines collected as they come."""

    def __init__(self, env: dict[str, str], *arguments: str) -> None:
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            [sys.executable, "-m", "memtrove", "watch", *arguments],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))

    def indexed(self) -> list[str]:
        return [line for line in self.lines if line.startswith("memtrove watch: indexed ")]

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(15)
        self.reader.join(5)
        return code


def wait_for(condition: Callable[[], bool], seconds: float) -> float | None:
    """Seconds until ``condition`` held, or None if it never did within ``seconds``."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if condition():
            return time.monotonic() - started
        time.sleep(0.05)
    return None


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MEMTROVE_", "XDG_"))}
    return {
        **clean,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "MEMTROVE_VAULT": str(tmp_path / "vault.sqlite"),
        "MEMTROVE_CONFIG_DIR": str(tmp_path / "config"),
    }


@pytest.fixture
def watched(env: dict[str, str], notes: Path) -> Iterator[tuple[WatchProcess, Vault]]:
    write(notes, "first.md", "# First\n\nThe first note, about herons.\n")
    with Vault.open(env["MEMTROVE_VAULT"], config_dir=env["MEMTROVE_CONFIG_DIR"]) as vault:
        vault.add_collection(notes, name="notes")
        watcher = WatchProcess(env)
        assert wait_for(lambda: bool(watcher.indexed()), 15), watcher.lines
        yield watcher, vault
        watcher.stop()


def memtrove(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "memtrove", *args], env=env, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done


def paths(vault: Vault, query: str, method: str = "search") -> set[str]:
    return {result.path for result in getattr(vault, method)(query, limit=20)}


def test_changes_are_searchable_within_five_seconds(
    watched: tuple[WatchProcess, Vault], notes: Path, env: dict[str, str]
) -> None:
    watcher, vault = watched
    write(notes, "new.md", "# New\n\nA note about kumquat orchards.\n")
    took = wait_for(lambda: paths(vault, "kumquat") == {"new.md"}, PICKUP_SECONDS)
    assert took is not None, watcher.lines
    embedded = wait_for(
        lambda: "new.md" in paths(vault, "kumquat orchards", "vsearch"), PICKUP_SECONDS - took
    )
    assert embedded is not None, watcher.lines
    found = json.loads(memtrove("search", "kumquat", "--json", env=env).stdout)
    assert [result["path"] for result in found["results"]] == ["new.md"]
    write(notes, "new.md", "# New\n\nA note about persimmon groves now.\n")
    assert wait_for(lambda: paths(vault, "persimmon") == {"new.md"}, PICKUP_SECONDS)
    (notes / "new.md").rename(notes / "moved.md")
    assert wait_for(lambda: paths(vault, "persimmon") == {"moved.md"}, PICKUP_SECONDS)
    (notes / "moved.md").unlink()
    assert wait_for(lambda: paths(vault, "persimmon") == set(), PICKUP_SECONDS)
    assert watcher.stop() == 0
    assert watcher.lines[-1].startswith("memtrove watch: stopped after ")
    assert "memtrove watch: stopping (SIGTERM)" in watcher.lines
    assert not [line for line in watcher.lines if "Traceback" in line]


@pytest.mark.slow
def test_a_burst_of_a_thousand_writes_is_indexed_once(
    watched: tuple[WatchProcess, Vault], notes: Path
) -> None:
    watcher, vault = watched
    before = len(watcher.indexed())
    for index in range(1000):
        write(notes, f"burst/{index:04}.md", f"# Burst {index}\n\nOne of many quinces {index}.\n")
    assert wait_for(lambda: len(watcher.indexed()) > before, 20), watcher.lines
    time.sleep(2.5)  # a whole debounce window more: nothing else to index
    runs = watcher.indexed()[before:]
    assert len(runs) == 1 and ": +1000 ~0 =1 -0 in " in runs[0], runs
    assert len(vault.search("quinces", limit=1000)) == 1000


@pytest.mark.skipif(
    importlib.util.find_spec("memtrove.vault.lanes") is None, reason="no consolidation lanes"
)
def test_the_light_lane_is_hosted_and_drained(env: dict[str, str], notes: Path) -> None:
    write(notes, "a.md", "# A\n\nText.\n")
    with Vault.open(env["MEMTROVE_VAULT"], config_dir=env["MEMTROVE_CONFIG_DIR"]) as vault:
        vault.add_collection(notes, name="notes")
    lane_env = env | {"MEMTROVE_ENABLE_CONSOLIDATION": "true"}
    watcher = WatchProcess(lane_env, "--no-embed")
    assert wait_for(lambda: bool(watcher.indexed()), 15), watcher.lines
    assert "memtrove watch: hosting the light lane" in watcher.lines
    started = time.monotonic()
    assert watcher.stop() == 0
    assert time.monotonic() - started < 15
