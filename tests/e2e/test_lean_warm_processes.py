"""The lean read commands with a real ``memtrove serve`` running: searches of the served vault
(copy A) are answered by the server, and print exactly what the same commands print
in-process on an identical copy B (``MEMTROVE_SERVER=off``), text and JSON alike.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES

START_TIMEOUT = 90
SEARCHES = [
    ["search", "thumbnail worker memory leak"],
    ["search", "cache", "--json", "-n", "3", "-c", "demo"],
    ["search", "zzzznothingmatchesthis"],
    ["search", "cache", "--since", "not a date"],  # refused: the error comes from in-process
    ["vsearch", "memory leak in the thumbnail worker", "-n", "2"],
    ["vsearch", "caching", "--json", "-n", "2"],
    ["query", "thumbnail worker memory leak", "-n", "3"],
    ["query", "cache", "--json", "--full", "-n", "1", "--no-diverse"],
    ["query", "latest decisions", "-n", "2", "--candidate-limit", "5"],
]


def environment(root: Path) -> dict[str, str]:
    home = root / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMTROVE_")}
    return env | {
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "MEMTROVE_VAULT": str(root / "vault.sqlite"),
        "MEMTROVE_CONFIG_DIR": str(root / "config"),
    }


def memtrove(*arguments: str, env: dict[str, str], trace: bool = False) -> tuple[int, str, str]:
    command = [sys.executable, *(["-X", "importtime"] if trace else []), "-m", "memtrove"]
    done = subprocess.run(
        [*command, *arguments], env=env, capture_output=True, text=True, timeout=120
    )
    return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lean-warm")
    code, _, err = memtrove("bootstrap", str(EXAMPLES), "--name", "demo", env=environment(root))
    assert code == 0, err
    return root


def copy_of(prepared: Path, target: Path) -> dict[str, str]:
    shutil.copytree(prepared, target, ignore=shutil.ignore_patterns("home"))
    # The collection's folder is the same for both copies; only the vault file differs.
    return environment(target)


@pytest.fixture
def served(prepared: Path, tmp_path: Path) -> Iterator[tuple[dict[str, str], Path]]:
    """``memtrove serve --port 0`` on copy A: (A's environment, its server file)."""
    env = copy_of(prepared, tmp_path / "a")
    servers = Path(env["XDG_CACHE_HOME"]) / "memtrove" / "servers"
    log = tmp_path / "serve.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "memtrove", "serve", "--port", "0"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=sink,
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not (servers.is_dir() and list(servers.glob("*.json"))):
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        yield env, next(servers.glob("*.json"))
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    assert "Traceback" not in log.read_text(errors="replace")


def test_served_searches_print_what_in_process_searches_print(
    served: tuple[dict[str, str], Path], prepared: Path, tmp_path: Path
) -> None:
    env_a, _ = served
    env_b = copy_of(prepared, tmp_path / "b") | {"MEMTROVE_SERVER": "off"}
    for arguments in SEARCHES:
        here = memtrove(*arguments, env=env_b)
        there = memtrove(*arguments, env=env_a)
        assert there == here, arguments
        if arguments[-1] == "--json":
            assert json.loads(there[1])["results"], arguments


def test_the_server_answers_and_the_vault_is_never_opened(
    served: tuple[dict[str, str], Path],
) -> None:
    env_a, _ = served
    code, out, err = memtrove("search", "thumbnail worker memory leak", env=env_a, trace=True)
    assert code == 0 and "thumbnail-worker-memory-leak" in out
    loaded = {line.split("|")[-1].strip() for line in err.splitlines()}
    assert "memtrove.warm" in loaded
    assert not {"memtrove.vault", "memtrove.results", "typer", "rich"} & loaded


def test_a_server_it_cannot_use_leaves_the_search_in_process(
    served: tuple[dict[str, str], Path],
) -> None:
    env_a, server_file = served
    expected = memtrove("search", "cache", "-n", "2", env=env_a | {"MEMTROVE_SERVER": "off"})
    info = json.loads(server_file.read_text(encoding="utf-8"))
    stale = info | {"port": _free_port()}  # nothing listens there
    server_file.write_text(json.dumps(stale), encoding="utf-8")
    assert memtrove("search", "cache", "-n", "2", env=env_a) == expected
    server_file.write_text(json.dumps(info | {"token_required": True}), encoding="utf-8")
    assert memtrove("search", "cache", "-n", "2", env=env_a) == expected
    server_file.write_text(json.dumps(info), encoding="utf-8")


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
