"""The CLI as users run it: real processes against one real vault file."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, write


def memtrove(
    *args: str, env: dict[str, str], check: bool = True
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "memtrove", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if check:
        assert result.returncode == 0, result.stderr
    return result


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "MEMTROVE_VAULT": str(tmp_path / "vault.sqlite"),
        "MEMTROVE_CONFIG_DIR": str(tmp_path / "config"),
    }


def many_notes(folder: Path, count: int) -> None:
    for index in range(count):
        write(
            folder,
            f"part{index % 10}/note-{index:05}.md",
            f"# Note {index}\n\n## Topic\n\nShared vocabulary heron {index} about caching, "
            f"queues and retries.\n\n- item one {index}\n- item two\n",
        )


def test_bootstrap_and_search_in_a_subprocess(env: dict[str, str]) -> None:
    out = memtrove("bootstrap", str(EXAMPLES), "--name", "demo", env=env).stdout
    assert "+30" in out
    out = memtrove("search", "thumbnail worker memory leak", "-n", "1", env=env).stdout
    assert "problems/2026-08-05-thumbnail-worker-memory-leak.md" in out


def test_corrupt_vault_is_one_line_error(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "vault.sqlite").write_bytes(b"this is not a database, just garbage" * 100)
    result = memtrove("status", env=env, check=False)
    assert result.returncode == 1
    assert result.stderr.startswith("memtrove: error: cannot open vault")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_concurrent_updates_and_searches_never_show_a_lock(
    env: dict[str, str], tmp_path: Path
) -> None:
    notes = tmp_path / "notes"
    many_notes(notes, 1500)
    memtrove("collection", "add", str(notes), "--name", "notes", env=env)
    searcher = textwrap.dedent(
        f"""
        import time, memtrove
        deadline = time.monotonic() + 6
        count = 0
        while time.monotonic() < deadline:
            with memtrove.Vault.open({str(tmp_path / "vault.sqlite")!r},
                                     config_dir={str(tmp_path / "config")!r}) as v:
                v.search("heron caching", limit=5)
                count += 1
        print(count)
        """
    )
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "memtrove", "update"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    search = subprocess.Popen(
        [sys.executable, "-c", searcher],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    outputs = [process.communicate(timeout=120) for process in [*processes, search]]
    for process, (_stdout, stderr) in zip([*processes, search], outputs, strict=True):
        assert process.returncode == 0, stderr
        assert "locked" not in stderr.lower() and "busy" not in stderr.lower()
    assert int(outputs[-1][0].strip()) > 10
    # between them, every note was indexed exactly once
    connection = sqlite3.connect(tmp_path / "vault.sqlite")
    assert connection.execute(
        "SELECT COUNT(*), COUNT(DISTINCT path) FROM documents"
    ).fetchone() == (1500, 1500)


def test_kill_9_mid_update_leaves_a_sound_vault(env: dict[str, str], tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    many_notes(notes, 4000)
    memtrove("collection", "add", str(notes), "--name", "notes", env=env)
    process = subprocess.Popen(
        [sys.executable, "-m", "memtrove", "update"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    vault_file = tmp_path / "vault.sqlite"
    deadline = time.monotonic() + 60
    indexed = 0
    while time.monotonic() < deadline and process.poll() is None:
        if vault_file.exists():
            try:
                connection = sqlite3.connect(vault_file, timeout=0.1)
                indexed = connection.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
                connection.close()
            except sqlite3.OperationalError:
                indexed = 0
            if indexed >= 200:
                break
        time.sleep(0.01)
    assert process.poll() is None, "update finished before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert 0 < indexed < 4000

    connection = sqlite3.connect(vault_file)
    assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    connection.close()
    out = memtrove("update", env=env).stdout
    assert "-0" in out
    connection = sqlite3.connect(vault_file)
    assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert (
        connection.execute("SELECT COUNT(*) FROM documents WHERE active = 1").fetchone()[0] == 4000
    )
    connection.close()
    result = memtrove("search", "heron", "--json", env=env)
    assert '"results"' in result.stdout


def test_update_summarises_skips_by_reason_in_a_subprocess(
    env: dict[str, str], tmp_path: Path
) -> None:
    notes = tmp_path / "notes"
    write(notes, "guide.md", "# Guide\n\nthe guide")
    for index in range(3):
        write(notes, f"guide-{index}.ru.md", "# Guide\n\nin Russian")
    write(notes, "bin.md", b"\x00\x01binary")
    memtrove("collection", "add", str(notes), "--name", "docs", "--exclude", "**/*.ru.md",
             env=env)  # fmt: skip
    out = memtrove("update", env=env).stdout.splitlines()
    assert out[0].startswith("+1 ~0 =0 -0")
    assert out[1:] == ["skipped 3: excluded by pattern", "skipped 1: binary file"]
    verbose = memtrove("update", "--verbose", env=env).stdout.splitlines()
    assert verbose[1:3] == ["skipped 3: excluded by pattern", "  docs/guide-0.ru.md"]
    assert "  docs/bin.md" in verbose
    config = Path(env["MEMTROVE_CONFIG_DIR"]) / "config.yaml"
    config.write_text(config.read_text() + "    stale_after_days: 0\n")
    failed = memtrove("update", env=env, check=False)
    assert failed.returncode == 1 and failed.stderr.count("\n") == 1
    assert f"{config}: collection 'docs': 'stale_after_days' must be" in failed.stderr
