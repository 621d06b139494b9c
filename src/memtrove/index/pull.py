"""``update --pull``: a collection's ``update:`` command, run in its folder before indexing.

The command comes from the user's own ``config.yaml`` (see
:func:`memtrove.config.check_update_command`), already split into arguments: it is run as
that argument list, never through a shell, so nothing stored in the vault can reach a
command line. It runs in the collection's folder with no standard input, in a session of
its own (a timeout ends the command and whatever it started: ``git pull`` runs ``ssh``),
within ``timeout`` seconds. What it prints (standard output and error together, the last
:data:`LOG_TAIL_BYTES` of it, secrets redacted) is appended to the log file the caller
names; the result says in one line what failed.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from memtrove.security.redaction import redact_text

__all__ = ["DEFAULT_TIMEOUT", "LOG_TAIL_BYTES", "MAX_LOG_BYTES", "PullResult", "run_update_command"]

DEFAULT_TIMEOUT = 300.0  # seconds: a slow clone over a slow link, not a hung prompt
LOG_TAIL_BYTES = 64 * 1024  # of a command's output, kept in the log
MAX_LOG_BYTES = 1024 * 1024  # the log is rotated (one old copy) past this size
_KILL_GRACE = 5.0  # seconds between SIGTERM and SIGKILL on a timeout


class PullResult(NamedTuple):
    """One collection's ``update:`` run. ``ok``: it exited 0 within the time limit;
    ``exit_code`` None when it did not run or was stopped; ``error`` says why it failed
    (one line, None when ok); ``output`` is the last line it printed."""

    collection: str
    command: tuple[str, ...]
    ok: bool
    exit_code: int | None
    seconds: float
    error: str | None
    output: str

    def to_dict(self) -> dict[str, Any]:
        return {**self._asdict(), "command": list(self.command)}


def run_update_command(
    collection: str,
    folder: Path,
    command: Sequence[str],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    log_file: Path | None = None,
) -> PullResult:
    """Run ``command`` (an argument list) in ``folder`` within ``timeout`` seconds; never
    raises for the command's own failure, which the result describes."""
    argv = tuple(command)
    started = time.monotonic()

    def failed(message: str, code: int | None = None, output: str = "") -> PullResult:
        result = PullResult(
            collection, argv, False, code, time.monotonic() - started, message, output
        )
        _log(log_file, result, output)
        return result

    if not argv:
        return failed("the update command is empty")
    if not folder.is_dir():
        return failed(f"folder {folder} does not exist")
    with tempfile.TemporaryFile() as sink:  # a file, not a pipe: no output can block it
        try:
            process = subprocess.Popen(
                list(argv),
                cwd=folder,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
            )
        except FileNotFoundError:
            return failed(f"command {argv[0]!r} not found")
        except OSError as error:
            return failed(f"command {argv[0]!r} cannot run: {error.strerror or error}")
        timed_out = False
        try:
            code = process.wait(timeout=max(0.001, timeout))
        except subprocess.TimeoutExpired:
            timed_out = True
            _stop(process)
            code = None
        output = _tail(sink)
    last = _last_line(output)
    seconds = time.monotonic() - started
    if timed_out:
        return failed(f"timed out after {timeout:g} s", None, output)
    if code != 0:
        reason = f"exited with status {code}" if code is not None and code > 0 else "was killed"
        return failed(reason + (f": {last}" if last else ""), code, output)
    result = PullResult(collection, argv, True, 0, seconds, None, last)
    _log(log_file, result, output)
    return result


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End the command's whole session: SIGTERM, then SIGKILL after a grace period."""
    if not hasattr(os, "killpg"):  # Windows: no sessions; end the command itself
        process.kill()
        process.wait()
        return
    for sent in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sent)
        try:
            process.wait(timeout=_KILL_GRACE)
            return
        except subprocess.TimeoutExpired:
            continue


def _tail(sink: Any) -> str:
    """The last :data:`LOG_TAIL_BYTES` of what the command wrote, as text, redacted."""
    size = sink.seek(0, os.SEEK_END)
    sink.seek(max(0, size - LOG_TAIL_BYTES))
    data = sink.read()
    text = data.decode("utf-8", errors="replace")
    if size > LOG_TAIL_BYTES:
        text = f"[{size - LOG_TAIL_BYTES} earlier bytes left out]\n" + text.split("\n", 1)[-1]
    return redact_text(text)


def _last_line(output: str) -> str:
    """The last non-empty line of ``output``, control characters removed, at most 200
    characters: what the one-line report quotes."""
    for line in reversed(output.splitlines()):
        cleaned = "".join(char for char in line if char.isprintable()).strip()
        if cleaned:
            return cleaned[:200]
    return ""


def _log(log_file: Path | None, result: PullResult, output: str) -> None:
    """Append the run and its output to ``log_file``; writing the log never raises."""
    if log_file is None:
        return
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    status = "ok" if result.ok else f"failed: {result.error}"
    shown = shlex.join(result.command)
    lines = [f"{stamp} update --pull [{os.getpid()}] {result.collection}: {shown} {status}"]
    lines += [f"    {line}" for line in output.rstrip("\n").splitlines()]
    with contextlib.suppress(OSError):
        log_file.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            if log_file.stat().st_size > MAX_LOG_BYTES:
                log_file.replace(log_file.with_name(log_file.name + ".1"))
        with open(log_file, "a", encoding="utf-8", errors="replace") as handle:
            handle.write(redact_text("\n".join(lines)) + "\n")
