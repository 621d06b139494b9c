"""How the lean path ends its process: without interpreter teardown when nothing else runs,
normally when a thread does; the status and a message-code survive either way."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROLOGUE = """
import atexit, sys, threading, time
from memtrove.cli.lean import _exit
atexit.register(lambda: print("teardown ran", flush=True))
print("output before exit")
"""


def run(body: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROLOGUE + body],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


@pytest.mark.parametrize(("code", "status"), [("0", 0), ("None", 0), ("3", 3)])
def test_exit_skips_teardown_and_keeps_status_and_output(code: str, status: int) -> None:
    done = run(f"_exit({code})")
    assert done.returncode == status
    assert done.stdout == "output before exit\n"  # flushed, and no atexit handler ran


def test_a_message_code_is_printed_and_exits_one() -> None:
    done = run("_exit('memtrove: error: gone')")
    assert done.returncode == 1 and done.stderr == "memtrove: error: gone\n"


def test_a_running_thread_gets_a_normal_exit() -> None:
    done = run(
        "worker = threading.Thread(target=lambda: (time.sleep(0.2), print('worker done')))\n"
        "worker.start()\n"
        "_exit(4)"
    )
    assert done.returncode == 4
    assert done.stdout.splitlines() == ["output before exit", "worker done", "teardown ran"]
