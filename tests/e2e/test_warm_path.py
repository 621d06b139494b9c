"""The warm path with real processes: ``memtrove serve`` on vault copy A publishes itself;
hooks and CLI searches of A go through it, and answer byte for byte what the same commands
answer in-process on an identical copy B (``MEMTROVE_SERVER=off``). When the server cannot
take the work (another token, killed, stopped) they run it themselves.

Timings are printed (``pytest -s``), never asserted.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memtrove.warm import WarmServer
from tests.conftest import EXAMPLES

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "hooks"
PROMPT = FIXTURES / "user_prompt_submit.json"  # reaches retrieval, injects notes
GREETING = FIXTURES / "user_prompt_submit_greeting.json"  # gated: logs one line, injects none
GATED_LINE = "info: skipped by the retrieval-gate gate"
TOKEN = "warm-e2e-token-3c9a1f"
HOOK_TIMEOUT = 60  # seconds a test waits for one hook process (Claude Code's is 8)
START_TIMEOUT = 90


def environment(root: Path) -> dict[str, str]:
    """The environment of every process of the vault at ``root`` (HOME and XDG inside it)."""
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


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A vault of the examples, indexed and embedded by a real ``memtrove bootstrap``."""
    root = tmp_path_factory.mktemp("warm-vault")
    result = subprocess.run(
        [sys.executable, "-m", "memtrove", "bootstrap", str(EXAMPLES), "--name", "demo"],
        env=environment(root),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    return root


@dataclass
class Copy:
    """One copy of the prepared vault and the environment of its processes."""

    root: Path
    env: dict[str, str]

    @property
    def vault(self) -> Path:
        return self.root / "vault.sqlite"

    @property
    def cache(self) -> Path:
        return Path(self.env["XDG_CACHE_HOME"]) / "memtrove"

    @property
    def servers(self) -> Path:
        return self.cache / "servers"

    def log(self) -> str:
        path = self.cache / "hooks.log"
        return path.read_text(encoding="utf-8") if path.exists() else ""


def copy_of(prepared: Path, target: Path) -> Copy:
    shutil.copytree(prepared, target, ignore=shutil.ignore_patterns("home"))
    return Copy(target, environment(target))


@pytest.fixture
def a(prepared: Path, tmp_path: Path) -> Copy:
    """The copy the server serves."""
    return copy_of(prepared, tmp_path / "a")


@pytest.fixture
def b(prepared: Path, tmp_path: Path) -> Copy:
    """The copy every command runs on in-process."""
    copy = copy_of(prepared, tmp_path / "b")
    copy.env["MEMTROVE_SERVER"] = "off"
    return copy


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    file: Path
    info: dict[str, Any]
    stderr: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                return self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise
        return self.process.returncode

    def client(self) -> WarmServer:
        info = self.info
        return WarmServer(info["host"], info["port"], info["pid"], info["vault"], False)


def serve(copy: Copy, *arguments: str, **extra: str) -> Served:
    """Start ``memtrove serve --port 0`` on ``copy``; return once its server file is there."""
    stderr = copy.root / f"serve-{time.monotonic_ns()}.log"
    started = time.perf_counter()
    with stderr.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "memtrove", "serve", "--port", "0", *arguments],
            env=copy.env | extra,
            stdout=subprocess.DEVNULL,
            stderr=sink,
        )
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        files = list(copy.servers.glob("*.json")) if copy.servers.is_dir() else []
        if files:
            info = json.loads(files[0].read_text(encoding="utf-8"))
            print(f"serve published after {time.perf_counter() - started:.2f} s")
            return Served(process, files[0], info, stderr)
        if process.poll() is not None:
            raise AssertionError(f"serve exited {process.returncode}: {stderr.read_text()}")
        time.sleep(0.05)
    process.kill()
    process.wait()
    raise AssertionError(f"serve published no server file: {stderr.read_text()}")


def stopped_cleanly(server: Served, sig: int = signal.SIGTERM) -> None:
    assert server.stop(sig) == 0
    assert not server.file.exists()
    log = server.stderr.read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in log, log


@pytest.fixture
def server(a: Copy) -> Iterator[Served]:
    """``memtrove serve`` on copy A, stopped (SIGTERM) after the test unless it was."""
    running = serve(a)
    try:
        yield running
    finally:
        if running.process.poll() is None:
            stopped_cleanly(running)


def payload(source: Path, **changes: Any) -> bytes:
    raw = source.read_bytes()
    return json.dumps(json.loads(raw) | changes).encode() if changes else raw


def hook(
    raw: bytes, env: dict[str, str], *, name: str = "context-surfacing", trace: bool = False
) -> subprocess.CompletedProcess[bytes]:
    """``memtrove hook NAME`` as Claude Code runs it: one JSON line out, exit 0."""
    command = [sys.executable, *(["-X", "importtime"] if trace else []), "-m", "memtrove"]
    started = time.perf_counter()
    done = subprocess.run(
        [*command, "hook", name], input=raw, env=env, capture_output=True, timeout=HOOK_TIMEOUT
    )
    print(f"hook {name} ({'served' if 'MEMTROVE_SERVER' not in env else 'in-process'}): "
          f"{time.perf_counter() - started:.3f} s")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(b"\n") and done.stdout.count(b"\n") == 1, done.stdout
    assert b"Traceback" not in done.stderr, done.stderr
    return done


def context(done: subprocess.CompletedProcess[bytes]) -> str:
    answer = json.loads(done.stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    text: str = answer["hookSpecificOutput"]["additionalContext"]
    return text


def imported(stderr: bytes) -> set[str]:
    """Top-level packages a ``-X importtime`` run imported."""
    return {
        line.split("|")[-1].strip().split(".")[0]
        for line in stderr.decode(errors="replace").splitlines()
        if line.startswith("import time:")
    }


def pids_in(log: str, text: str) -> set[int]:
    return {int(pid) for pid in re.findall(r"\[(\d+)\] " + re.escape(text), log)}


def usage_rows(copy: Copy) -> int:
    """context_usage rows in the copy's vault (read with the standard sqlite3 module)."""
    connection = sqlite3.connect(copy.vault, timeout=30)
    try:
        return int(connection.execute("SELECT COUNT(*) FROM context_usage").fetchone()[0])
    finally:
        connection.close()


def wait_for_usage(copy: Copy, count: int) -> None:
    """Until the server has logged ``count`` turns: it does so after answering."""
    deadline = time.monotonic() + 30
    while usage_rows(copy) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    assert usage_rows(copy) == count


def test_a_hook_is_answered_by_the_server_as_in_process(a: Copy, b: Copy, server: Served) -> None:
    assert server.info["pid"] == server.pid and server.info["vault"] == str(a.vault)
    assert server.info["host"] == "127.0.0.1" and server.info["token_required"] is False
    assert server.file.parent == a.servers and server.file.name.endswith("-vault.sqlite.json")

    served = hook(payload(PROMPT), a.env, trace=True)
    local = hook(payload(PROMPT), b.env, trace=True)
    assert served.stdout == local.stdout
    assert "<vault-context>" in context(served)
    # The served hook never opened the vault: no SQLite driver, no numpy in its process.
    assert "sqlean" not in imported(served.stderr) and "sqlean" in imported(local.stderr)

    wait_for_usage(a, 1)
    served = hook(payload(GREETING), a.env)
    local = hook(payload(GREETING), b.env)
    assert served.stdout == local.stdout and context(served) == ""
    wait_for_usage(a, 2)
    assert usage_rows(b) == 2  # every turn logged, gated or not, served or not
    assert pids_in(a.log(), GATED_LINE) == {server.pid}  # written by the server process
    assert len(pids_in(b.log(), GATED_LINE)) == 1
    assert pids_in(b.log(), GATED_LINE) != {server.pid}


def test_every_profile_answers_the_same_served(a: Copy, b: Copy, server: Served) -> None:
    # A first vector request loads the model in the server (so the deep profile's 2 s
    # vector race is not run against that load).
    warmup = {"query": "warm up", "env": {"MEMTROVE_VAULT": str(a.vault),
              "MEMTROVE_CONFIG_DIR": a.env["MEMTROVE_CONFIG_DIR"]}}  # fmt: skip
    assert server.client().post("/warm/vsearch", warmup, token=None, timeout=120)["results"]
    prompts = ["How are uploads of large videos handled on the phone?",
               "Why did the thumbnail worker run out of memory after the pyvips switch?"]  # fmt: skip
    turns = 0
    for profile in ("deep", "speed", "balanced"):
        settings = {"MEMTROVE_PROFILE": profile, "MEMTROVE_HOOK_DEDUP_WINDOW_SEC": "0"}
        for prompt in prompts:
            for _ in range(3):
                raw = payload(PROMPT, prompt=prompt, session_id=f"{profile}-{turns}")
                before = len(b.log())
                served = hook(raw, a.env | settings)
                turns += 1
                wait_for_usage(a, turns)  # the next prompt sees this one's co-activations
                local = hook(raw, b.env | settings)
                if served.stdout == local.stdout or "vector leg skipped" not in b.log()[before:]:
                    break
                print(f"{profile}: the cold in-process vector leg lost its race; again")
            assert served.stdout == local.stdout, (profile, prompt, b.log())
            assert "<vault-context>" in context(served), profile
    assert usage_rows(b) == turns
    assert "vector leg skipped" not in a.log()  # the server's vectors were warm
    assert "ran in-process" not in a.log() and "timed out" not in a.log()


SEARCHES = [("search", "refresh token"), ("vsearch", "uploading large videos from a phone"),
            ("query", "why were users logged out")]  # fmt: skip


def _same_answer(served: bytes, local: bytes) -> bool:
    """The same answer, scores aside, which may differ in their last digits: recency is
    measured against the time each process asks (seconds apart on a busy machine)."""
    one, other = json.loads(served), json.loads(local)
    scores = [[result.pop("score") for result in data["results"]] for data in (one, other)]
    close = all(abs(x - y) < 1e-4 for x, y in zip(*scores, strict=True))
    return bool(one == other and close)


def test_cli_searches_answer_the_same_served(a: Copy, b: Copy, server: Served) -> None:
    def run(copy: Copy, *arguments: str) -> subprocess.CompletedProcess[bytes]:
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "memtrove", *arguments],
            env=copy.env,
            capture_output=True,
            timeout=120,
        )
        where = "in-process" if "MEMTROVE_SERVER" in copy.env else "served"
        print(f"{arguments[0]} ({where}): {time.perf_counter() - started:.3f} s")
        return done

    for command, query in SEARCHES:
        served, local = run(a, command, query, "--json"), run(b, command, query, "--json")
        assert served.returncode == local.returncode == 0, (served.stderr, local.stderr)
        assert _same_answer(served.stdout, local.stdout), command
        data = json.loads(served.stdout)
        assert data["query"] == query and data["results"], command
        if command != "search":  # vectors were needed: only the in-process run loaded them
            # (numpy holds the vectors and the query's vector: only where the work is done)
            assert "numpy" not in imported(served.stderr), command
            assert "numpy" in imported(local.stderr), command

    for command, _ in SEARCHES:  # the server refuses (400); the CLI reports it as always
        done = run(a, command, "x", "--since", "notadate")
        error = done.stderr.decode()
        lines = [line for line in error.splitlines() if not line.startswith("import time:")]
        assert done.returncode == 1, command
        assert len(lines) == 1 and lines[0].startswith("memtrove: error: "), error
        assert "since" in lines[0] and done.stdout == b""
    assert server.process.poll() is None


def test_a_server_with_a_token(a: Copy, b: Copy) -> None:
    running = serve(a, MEMTROVE_API_TOKEN=TOKEN)
    try:
        assert running.info["token_required"] is True
        without = hook(payload(PROMPT), a.env)  # no token: runs in-process
        assert without.stdout == hook(payload(PROMPT), b.env).stdout
        assert "<vault-context>" in context(without)
        noted = pids_in(a.log(), "warning: the running server needs MEMTROVE_API_TOKEN")
        assert len(noted) == 1 and running.pid not in noted
        with_token = a.env | {"MEMTROVE_API_TOKEN": TOKEN}
        served = hook(payload(GREETING), with_token)
        assert served.stdout == hook(payload(GREETING), b.env).stdout
        assert running.pid in pids_in(a.log(), GATED_LINE)
        wrong = a.env | {"MEMTROVE_API_TOKEN": "not-the-token"}
        question = "How do we rotate the refresh token when it expires?"
        refused = hook(payload(PROMPT, session_id="wrong-token", prompt=question), wrong)
        assert "<vault-context>" in context(refused)
        assert "HTTP 401" in a.log() and "ran in-process" in a.log()
    finally:
        stopped_cleanly(running)


def test_a_server_on_ipv6_loopback_is_reached(a: Copy, b: Copy) -> None:
    """The warm path names an IPv6 server as ``Host: [::1]:PORT``, which the server's Host
    check accepts (an unbracketed ``::1:PORT`` would be refused, and the hook run in-process)."""
    running = serve(a, "--host", "::1")
    try:
        assert running.info["host"] == "::1"
        served = hook(payload(GREETING), a.env)
        assert served.stdout == hook(payload(GREETING), b.env).stdout
        wait_for_usage(a, 1)
        assert pids_in(a.log(), GATED_LINE) == {running.pid}  # answered by the server
        assert "HTTP 421" not in a.log()
    finally:
        stopped_cleanly(running)


def test_a_killed_server_costs_nothing(a: Copy, b: Copy, server: Served) -> None:
    server.process.send_signal(signal.SIGKILL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # until the port refuses (the pid is a zombie)
        try:
            socket.create_connection(("127.0.0.1", server.info["port"]), timeout=1).close()
        except OSError:
            break
        time.sleep(0.05)
    assert server.file.exists()  # nobody withdrew it
    answered = hook(payload(PROMPT), a.env)
    assert answered.stdout == hook(payload(PROMPT), b.env).stdout
    assert "<vault-context>" in context(answered)  # a full answer, not the timeout's empty one
    log = a.log()
    assert "did not answer" in log and "ran in-process" in log and "timed out" not in log

    assert server.process.wait(timeout=30) == -signal.SIGKILL  # reaped: the pid is gone
    assert server.file.exists()
    greeting = hook(payload(GREETING), a.env)
    assert greeting.stdout == hook(payload(GREETING), b.env).stdout
    gated = pids_in(a.log(), GATED_LINE)
    assert len(gated) == 1 and server.pid not in gated  # answered in the hook's own process


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stopped_server_withdraws_its_file(
    a: Copy, b: Copy, server: Served, sig: signal.Signals
) -> None:
    assert server.file.exists()
    stopped_cleanly(server, sig)
    assert list(a.servers.iterdir()) == []
    answered = hook(payload(PROMPT), a.env)
    assert answered.stdout == hook(payload(PROMPT), b.env).stdout
    assert "ran in-process" not in a.log()  # no server file: nothing was even tried


TOPICS = ["thumbnail worker memory", "refresh token rotation", "resumable uploads",
          "pyvips decoder benchmark", "postgres metadata schema", "HEIC support options",
          "kickoff meeting notes", "launch scope for v1", "glossary of terms",
          "weekly status of week 33"]  # fmt: skip


def test_ten_hooks_at_once_through_the_server(a: Copy, server: Served) -> None:
    bodies = [
        payload(PROMPT, prompt=f"What do my notes say about {topic}?", session_id=f"s{n}")
        for n, topic in enumerate(TOPICS)
    ]
    started = time.perf_counter()
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "memtrove", "hook", "context-surfacing"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=a.env,
        )
        for _ in bodies
    ]
    with ThreadPoolExecutor(max_workers=len(processes)) as pool:  # every stdin at once
        answered = list(
            pool.map(lambda pair: pair[0].communicate(pair[1], timeout=HOOK_TIMEOUT),
                     zip(processes, bodies, strict=True))
        )  # fmt: skip
    outputs = []
    for process, (out, err) in zip(processes, answered, strict=True):
        assert process.returncode == 0, err
        assert err == b"", err
        assert out.count(b"\n") == 1
        outputs.append(out)
    print(f"ten concurrent served hooks: {time.perf_counter() - started:.2f} s")
    assert "ran in-process" not in a.log() and "error" not in a.log()
    for out in outputs:  # the order they ran in sets co-activations: no in-process twin
        assert json.loads(out)["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"

    def rows() -> list[tuple[str, int, int]]:
        connection = sqlite3.connect(a.vault, timeout=30)
        try:
            found = connection.execute(
                "SELECT session_id, COUNT(*), MAX(turn_index) FROM context_usage "
                "GROUP BY session_id ORDER BY session_id"
            ).fetchall()
        finally:
            connection.close()
        return [(str(s), int(c), int(t)) for s, c, t in found]

    expected = sorted((f"s{n}", 1, 0) for n in range(len(TOPICS)))
    deadline = time.monotonic() + 30
    while rows() != expected and time.monotonic() < deadline:  # written after answering
        time.sleep(0.1)
    stopped_cleanly(server)
    assert rows() == expected


def test_a_server_on_another_loopback_address_is_reached_there(a: Copy, b: Copy) -> None:
    running = serve(a, "--host", "127.0.0.2")
    try:
        assert running.info["host"] == "127.0.0.2"
        source = FIXTURES / "user_prompt_submit.json"
        served = hook(payload(source), a.env)
        alone = hook(payload(source), b.env | {"MEMTROVE_SERVER": "off"})
        assert served.stdout == alone.stdout
        assert "did not answer" not in a.log()
    finally:
        stopped_cleanly(running)


def test_a_served_hook_waits_for_locks_like_a_hook_process(
    a: Copy, b: Copy, server: Served
) -> None:
    """A writer holding the vault must not cost a served hook its answer: the server's
    hook work waits for locks as briefly as a hook process would (reads go on under WAL)."""
    source = FIXTURES / "user_prompt_submit.json"
    holder = sqlite3.connect(a.vault, isolation_level=None, timeout=10)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        served = hook(payload(source), a.env | {"MEMTROVE_HOOK_TIMEOUT": "3"})
        elapsed = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "<vault-context>" in context(served)
    assert elapsed < 3.5
    assert "timed out" not in a.log()
